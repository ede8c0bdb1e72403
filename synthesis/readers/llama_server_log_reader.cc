// llama-server log: one run per request's print_timing lines ("prompt eval time", "eval time",
// "total time"), with the buffer sizes llama.cpp printed at model load (one memory figure per
// "... buffer size = X MiB" line, labelled device, host or unknown memory by the rule of
// common/llama_cpp_log.h against the devices the log reports) and what the log says the server
// ran on (params "devices", "offloaded_layers"). A log whose build line says SIMULATED gives
// simulated records. The first request after a model load is COLD.
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/backends/llama_server/figures.h"
#include "common/figures.h"
#include "common/llama_cpp_log.h"
#include "common/simulated.h"
#include "synthesis/readers/file_formats.h"
#include "synthesis/readers/file_record.h"

namespace benchfleet::synthesis {
namespace {

constexpr std::string_view kLoadingModel = "loading model '";
constexpr std::string_view kBufferSize = " buffer size =";
constexpr std::string_view kPromptEval = "prompt eval time =";
constexpr std::string_view kEval = "eval time =";
constexpr std::string_view kTotal = "total time =";

struct Timing {
  double ms = 0;
  long long tokens = 0;
  double tokens_per_second = 0;
};

// Parses "4.37 ms /    11 tokens (    0.40 ms per token,  2519.47 tokens per second)"; with_rate
// false for the total line, which has no rate.
std::optional<Timing> ParseTiming(std::string_view text, bool with_rate) {
  std::string s(text);
  Timing t;
  double per_token = 0;
  if (with_rate) {
    if (std::sscanf(s.c_str(), " %lf ms / %lld tokens ( %lf ms per token, %lf tokens per second)", &t.ms,
                    &t.tokens, &per_token, &t.tokens_per_second) != 4) {
      return std::nullopt;
    }
  } else if (std::sscanf(s.c_str(), " %lf ms / %lld tokens", &t.ms, &t.tokens) != 2) {
    return std::nullopt;
  }
  return t;
}

// Parses "load_tensors:   CPU_Mapped model buffer size =     7.97 MiB" into a memory figure.
std::optional<v1::MemoryFigure> ParseBuffer(const std::string& path, uint32_t line_number, std::string_view line,
                                            const llama_cpp::LogReport& report) {
  size_t at = line.find(kBufferSize);
  std::string_view head = line.substr(0, at);
  size_t colon = head.rfind(':');
  if (colon != std::string_view::npos) head = head.substr(colon + 1);
  head = Trim(head);
  size_t space = head.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::string name(head.substr(0, space));
  std::string klass(Trim(head.substr(space)));
  std::string rest(Trim(line.substr(at + kBufferSize.size())));
  double mib = 0;
  char unit[8] = {0};
  if (std::sscanf(rest.c_str(), "%lf %7s", &mib, unit) != 2 || std::string(unit) != "MiB") return std::nullopt;
  v1::MemoryFigure figure;
  figure.set_kind(llama_cpp::ClassifyBuffer(name, report));
  figure.set_scope(absl::StrCat(name, " ", klass));
  figure.set_bytes(static_cast<uint64_t>(std::llround(mib * 1024 * 1024)));
  figure.set_source(absl::StrCat(path, ":", line_number));
  return figure;
}

std::string ModelTask(std::string_view model_path) {
  size_t slash = model_path.find_last_of("/\\");
  return std::string(slash == std::string_view::npos ? model_path : model_path.substr(slash + 1));
}

}  // namespace

void ReadLlamaServerLog(const std::string& path, std::string_view content, ReadResult* out) {
  CallCounter calls;
  // What the server said it found and did: the same for every request of the log.
  const llama_cpp::LogReport report = llama_cpp::ParseLogReport(content);
  const bool simulated = SaysSimulated(report.build);
  const std::string devices = llama_cpp::DevicesText(report);
  const std::string offloaded_layers = llama_cpp::OffloadedLayersText(report);
  std::string task = "llama-server-log";
  bool cold_next = true;
  std::vector<v1::MemoryFigure> buffers;
  std::optional<v1::RunRecord> pending;  // the request whose timing lines are being read
  std::vector<std::string_view> lines = SplitLines(content);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const uint32_t number = static_cast<uint32_t>(i + 1);
    if (size_t at = line.find(kLoadingModel); at != std::string_view::npos) {
      std::string_view rest = line.substr(at + kLoadingModel.size());
      task = ModelTask(rest.substr(0, rest.find('\'')));
      cold_next = true;
      buffers.clear();
      continue;
    }
    if (line.find(kBufferSize) != std::string_view::npos) {
      if (auto figure = ParseBuffer(path, number, line, report); figure.has_value()) {
        buffers.push_back(*figure);
      } else {
        out->skipped.push_back({path, number, "unreadable buffer size line"});
      }
      continue;
    }
    if (size_t at = line.find(kPromptEval); at != std::string_view::npos) {
      auto t = ParseTiming(line.substr(at + kPromptEval.size()), true);
      if (!t.has_value()) {
        out->skipped.push_back({path, number, "unreadable prompt eval time line"});
        pending.reset();
        continue;
      }
      pending = NewFileRecord(path, number, "llama-server");
      pending->set_task(task);
      pending->set_phase(cold_next ? v1::PHASE_COLD : v1::PHASE_WARM);
      pending->set_simulated(simulated);
      if (simulated) {
        (*pending->mutable_params())["simulated_by"] = absl::StrCat("build line ", report.build_line, ": ", report.build);
      }
      if (!report.build.empty()) (*pending->mutable_params())["build"] = report.build;
      if (!devices.empty()) (*pending->mutable_params())["devices"] = devices;
      if (!offloaded_layers.empty()) (*pending->mutable_params())["offloaded_layers"] = offloaded_layers;
      AddMetric(&*pending, agent::llama_server::kPromptN, static_cast<double>(t->tokens), "tokens");
      AddMetric(&*pending, agent::llama_server::kPromptSeconds, t->ms / 1000.0, "s");
      AddMetric(&*pending, agent::llama_server::kPromptPerSecond, t->tokens_per_second, "tokens/s");
      continue;
    }
    if (size_t at = line.find(kEval); at != std::string_view::npos && pending.has_value()) {
      auto t = ParseTiming(line.substr(at + kEval.size()), true);
      if (!t.has_value()) {
        out->skipped.push_back({path, number, "unreadable eval time line"});
        pending.reset();
        continue;
      }
      AddMetric(&*pending, agent::llama_server::kPredictedN, static_cast<double>(t->tokens), "tokens");
      AddMetric(&*pending, agent::llama_server::kPredictedSeconds, t->ms / 1000.0, "s");
      AddMetric(&*pending, agent::llama_server::kPredictedPerSecond, t->tokens_per_second, "tokens/s");
      continue;
    }
    if (size_t at = line.find(kTotal); at != std::string_view::npos && pending.has_value()) {
      auto t = ParseTiming(line.substr(at + kTotal.size()), false);
      if (!t.has_value()) {
        out->skipped.push_back({path, number, "unreadable total time line"});
        pending.reset();
        continue;
      }
      AddMetric(&*pending, "wall_seconds", t->ms / 1000.0, "s");
      const int64_t us = std::llround(t->ms * 1000);
      pending->mutable_wall_duration()->set_seconds(us / 1000000);
      pending->mutable_wall_duration()->set_nanos(static_cast<int32_t>(us % 1000000) * 1000);
      for (const v1::MemoryFigure& figure : buffers) *pending->add_memory() = figure;
      pending->set_call_index(calls.Next(*pending));
      cold_next = false;
      StampFigures(agent::llama_server::kFigures, &*pending);
      out->records.push_back(std::move(*pending));
      pending.reset();
    }
  }
  if (pending.has_value()) {
    out->skipped.push_back({path, pending->provenance().line(), "request without its \"total time\" line"});
  }
}

}  // namespace benchfleet::synthesis
