#include "agent/backends/llama_server/log_memory_parser.h"

#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/string_views.h"

namespace benchfleet::agent::llama_server {
namespace {

constexpr std::string_view kBufferSize = " buffer size =";
constexpr std::string_view kBreakdownHeader = "memory breakdown [MiB]";
constexpr double kBytesPerMib = 1024.0 * 1024.0;

// Parses `<function>: <name> <class> buffer size = <x> MiB`. Older llama.cpp printed the model's
// buffers without a class (`llm_load_tensors: CUDA0 buffer size = ...`): those are "model".
std::optional<LogBuffer> ParseBufferLine(absl::string_view line, int line_number) {
  const size_t at = line.find(ToAbsl(kBufferSize));
  if (at == absl::string_view::npos) return std::nullopt;
  const std::vector<absl::string_view> words =
      absl::StrSplit(line.substr(0, at), absl::ByAnyChar(" \t"), absl::SkipEmpty());
  if (words.size() < 2) return std::nullopt;
  LogBuffer buffer;
  absl::string_view name = words[words.size() - 2];
  absl::string_view klass = words.back();
  if (absl::EndsWith(name, ":")) {
    // `load_tensors: model buffer size` names no buffer at all.
    if (!absl::StrContains(name, "load_tensors") || klass == "model" || klass == "KV" || klass == "compute" ||
        klass == "output" || klass == "RS") {
      return std::nullopt;
    }
    name = klass;
    klass = "model";
  }
  if (absl::EndsWith(name, ":")) return std::nullopt;

  absl::string_view rest = absl::StripAsciiWhitespace(line.substr(at + kBufferSize.size()));
  const size_t space = rest.find(' ');
  if (space == absl::string_view::npos) return std::nullopt;
  if (absl::StripAsciiWhitespace(rest.substr(space)) != "MiB") return std::nullopt;
  double mib = 0;
  if (!absl::SimpleAtod(rest.substr(0, space), &mib) || !(mib >= 0)) return std::nullopt;

  buffer.name = std::string(name);
  buffer.klass = std::string(klass);
  buffer.mib = mib;
  buffer.bytes = MibToBytes(mib);
  buffer.line = line_number;
  return buffer;
}

// Parses one row `<function>: |   - CUDA0 (RTX 5090)   | 24080 = 22353 + ( 1521 = 1233 + 96 +
// 192) + 206 |` or `... |   - Host   |   143 =   102 +   0 +   41   |`.
std::optional<BreakdownRow> ParseBreakdownRow(absl::string_view line, int line_number) {
  const size_t first = line.find('|');
  if (first == absl::string_view::npos) return std::nullopt;
  const size_t second = line.find('|', first + 1);
  const size_t last = line.rfind('|');
  if (second == absl::string_view::npos || last <= second) return std::nullopt;
  absl::string_view label = absl::StripAsciiWhitespace(line.substr(first + 1, second - first - 1));
  if (!absl::ConsumePrefix(&label, "- ")) return std::nullopt;
  label = absl::StripLeadingAsciiWhitespace(label);

  BreakdownRow row;
  row.line = line_number;
  const size_t paren = label.find('(');
  if (paren == absl::string_view::npos) {
    row.name = std::string(absl::StripAsciiWhitespace(label));
  } else {
    row.name = std::string(absl::StripAsciiWhitespace(label.substr(0, paren)));
    absl::string_view description = label.substr(paren + 1);
    absl::ConsumeSuffix(&description, ")");
    row.description = std::string(description);
  }
  if (row.name.empty()) return std::nullopt;

  const absl::string_view figures = line.substr(second + 1, last - second - 1);
  std::vector<int64_t> numbers;
  for (absl::string_view token : absl::StrSplit(figures, absl::ByAnyChar(" =+()"), absl::SkipEmpty())) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(token, &value)) return std::nullopt;
    numbers.push_back(value);
  }
  if (absl::StrContains(figures, "(") && numbers.size() == 7) {
    row.device_row = true;
    row.total_mib = numbers[0];
    row.free_mib = numbers[1];
    row.self_mib = numbers[2];
    row.model_mib = numbers[3];
    row.context_mib = numbers[4];
    row.compute_mib = numbers[5];
    row.unaccounted_mib = numbers[6];
  } else if (!absl::StrContains(figures, "(") && numbers.size() == 4) {
    row.self_mib = numbers[0];
    row.model_mib = numbers[1];
    row.context_mib = numbers[2];
    row.compute_mib = numbers[3];
  } else {
    return std::nullopt;
  }
  return row;
}

}  // namespace

uint64_t MibToBytes(double mib) {
  if (!(mib > 0)) return 0;
  return static_cast<uint64_t>(std::llround(mib * kBytesPerMib));
}

LogMemory ParseLogMemory(std::string_view log) {
  LogMemory out;
  std::vector<BreakdownRow> table;
  bool in_table = false;
  auto close_table = [&] {
    if (in_table && !table.empty()) out.breakdown = std::move(table);
    table.clear();
    in_table = false;
  };
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(ToAbsl(log), '\n')) {
    ++line_number;
    absl::ConsumeSuffix(&line, "\r");
    if (absl::StrContains(line, ToAbsl(kBreakdownHeader))) {
      close_table();
      in_table = true;
      continue;
    }
    if (in_table) {
      if (std::optional<BreakdownRow> row = ParseBreakdownRow(line, line_number)) {
        table.push_back(std::move(*row));
        continue;
      }
      close_table();
    }
    if (std::optional<LogBuffer> buffer = ParseBufferLine(line, line_number)) {
      out.buffers.push_back(std::move(*buffer));
    }
  }
  close_table();
  return out;
}

std::vector<v1::MemoryFigure> LogMemoryFigures(const LogMemory& memory, const llama_cpp::LogReport& report) {
  std::vector<v1::MemoryFigure> figures;
  // (name, class) -> index in figures and the lines summed into it, in order of appearance.
  std::map<std::pair<std::string, std::string>, std::pair<size_t, std::vector<int>>> seen;
  for (const LogBuffer& buffer : memory.buffers) {
    auto [it, inserted] = seen.try_emplace({buffer.name, buffer.klass}, figures.size(), std::vector<int>{});
    if (inserted) {
      v1::MemoryFigure& figure = figures.emplace_back();
      figure.set_kind(llama_cpp::ClassifyBuffer(buffer.name, report));
      figure.set_scope(absl::StrCat(buffer.name, " ", buffer.klass));
    }
    v1::MemoryFigure& figure = figures[it->second.first];
    std::vector<int>& lines = it->second.second;
    lines.push_back(buffer.line);
    figure.set_bytes(figure.bytes() + buffer.bytes);
    figure.set_source(absl::StrCat(lines.size() == 1 ? "llama-server log line " : "llama-server log lines ",
                                   absl::StrJoin(lines, ", ")));
  }
  for (const BreakdownRow& row : memory.breakdown) {
    if (row.self_mib < 0) continue;
    v1::MemoryFigure& figure = figures.emplace_back();
    // A row without total/free columns is one of llama.cpp's host buffer types (Host, CPU_REPACK,
    // AMX, ...): the table says so itself.
    figure.set_kind(row.device_row ? llama_cpp::ClassifyBuffer(row.name, report, /*device_row=*/true)
                                   : v1::MEMORY_KIND_HOST_BUFFER);
    figure.set_scope(absl::StrCat(row.name, " self"));
    figure.set_bytes(static_cast<uint64_t>(row.self_mib) * (1024 * 1024));
    figure.set_source(absl::StrCat("llama-server log line ", row.line, " (memory breakdown [MiB])"));
  }
  return figures;
}

}  // namespace benchfleet::agent::llama_server
