#include "synthesis/readers/file_record.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/hashing.h"

namespace benchfleet::synthesis {

std::string FileRunId(const std::string& path, uint32_t line, int part) {
  std::string key = absl::StrCat(path, ":", line);
  if (part >= 0) absl::StrAppend(&key, "#", part);
  std::string hex = Sha256Hex(key);
  // Shape it as a name-based UUID (version 5 nibble, RFC 4122 variant) so IsUuid accepts it.
  hex[12] = '5';
  hex[16] = "89ab"[std::strtol(hex.substr(16, 1).c_str(), nullptr, 16) & 3];
  return absl::StrCat(hex.substr(0, 8), "-", hex.substr(8, 4), "-", hex.substr(12, 4), "-",
                      hex.substr(16, 4), "-", hex.substr(20, 12));
}

v1::RunRecord NewFileRecord(const std::string& path, uint32_t line, const std::string& backend,
                            int part) {
  v1::RunRecord record;
  record.set_run_id(FileRunId(path, line, part));
  record.set_backend(backend);
  record.set_phase(v1::PHASE_WARM);
  record.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  record.mutable_provenance()->set_kind(v1::Provenance::KIND_FILE);
  record.mutable_provenance()->set_file(path);
  record.mutable_provenance()->set_line(line);
  record.set_simulated(false);
  return record;
}

void AddMetric(v1::RunRecord* record, const std::string& name, double value, const std::string& unit) {
  v1::Metric* metric = record->add_metrics();
  metric->set_name(name);
  metric->set_value(value);
  metric->set_unit(unit);
}

uint32_t CallCounter::Next(const v1::RunRecord& record) {
  std::map<std::string, std::string> matrix(record.matrix().begin(), record.matrix().end());
  std::string key = absl::StrCat(record.task(), "\x1f", record.mode(), "\x1f", record.phase(), "\x1f",
                                 absl::StrJoin(matrix, ",", absl::PairFormatter("=")));
  return ++next_[key];
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      if (start < text.size()) lines.push_back(text.substr(start));
      break;
    }
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

std::string_view Trim(std::string_view s) {
  const char* kSpace = " \t\r\n\v\f";
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(kSpace);
  return s.substr(b, e - b + 1);
}

std::optional<double> ParseDouble(std::string_view s) {
  std::string text(Trim(s));
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

std::optional<std::vector<std::string>> SplitCsvLine(std::string_view line) {
  std::vector<std::string> cells;
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cell += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.push_back(std::move(cell));
      cell.clear();
    } else {
      cell += c;
    }
  }
  if (quoted) return std::nullopt;
  cells.push_back(std::move(cell));
  return cells;
}

}  // namespace benchfleet::synthesis
