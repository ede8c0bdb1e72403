// ComfyUI server log: one run per "Prompt executed in X seconds" line. A run whose prompt raised
// ("!!! Exception during processing !!! MSG" and a traceback) is FAILED with MSG. A log holds no
// execution_cached report (which nodes ComfyUI took from its cache), so the cache verdict here is
// by timing, and its reason says so: a 0.00 s run is flagged CACHE_HIT, inferred from timing. The
// first run after "Starting server" is COLD.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "synthesis/readers/file_formats.h"
#include "common/figures.h"
#include "synthesis/readers/file_record.h"

namespace benchfleet::synthesis {
namespace {

// What a ComfyUI server log says of a prompt (common/figures.h): "Prompt executed in X seconds".
constexpr FigureDeclaration kComfyUiLogFigures[] = {
    {.name = "wall_seconds", .unit = "s", .better = v1::BETTER_LOWER, .headline = 1,
     .label = "execution time"},
};

constexpr std::string_view kExecuted = "Prompt executed in ";
constexpr std::string_view kException = "!!! Exception during processing !!!";
constexpr std::string_view kStarting = "Starting server";
constexpr std::string_view kGotPrompt = "got prompt";
constexpr size_t kLogTailLines = 20;

}  // namespace

void ReadComfyUiLog(const std::string& path, std::string_view content, ReadResult* out) {
  CallCounter calls;
  bool cold_next = true;
  std::string error;                  // the current prompt's exception message
  std::vector<std::string> traceback;  // lines since the exception
  std::vector<std::string_view> lines = SplitLines(content);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const uint32_t number = static_cast<uint32_t>(i + 1);
    if (line.find(kStarting) == 0) {
      cold_next = true;
      continue;
    }
    if (Trim(line) == kGotPrompt) {
      error.clear();
      traceback.clear();
      continue;
    }
    if (size_t at = line.find(kException); at != std::string_view::npos) {
      error = std::string(Trim(line.substr(at + kException.size())));
      traceback = {std::string(line)};
      continue;
    }
    size_t at = line.find(kExecuted);
    if (at == std::string_view::npos) {
      if (!error.empty()) traceback.emplace_back(line);
      continue;
    }
    std::string_view rest = line.substr(at + kExecuted.size());
    size_t end = rest.find(" seconds");
    auto seconds = end == std::string_view::npos ? std::nullopt : ParseDouble(rest.substr(0, end));
    if (!seconds.has_value()) {
      out->skipped.push_back({path, number, absl::StrCat("no duration in \"", std::string(line), "\"")});
      continue;
    }
    // Beyond int64_t milliseconds (or not a number) the conversion below would be undefined.
    if (!(std::abs(*seconds) < 9e15)) {
      out->skipped.push_back({path, number, absl::StrCat("duration out of range in \"", std::string(line), "\"")});
      continue;
    }
    v1::RunRecord record = NewFileRecord(path, number, "comfyui");
    record.set_task("comfyui-log");
    record.set_phase(cold_next ? v1::PHASE_COLD : v1::PHASE_WARM);
    cold_next = false;
    record.set_call_index(calls.Next(record));
    const int64_t ms = static_cast<int64_t>(*seconds * 1000 + 0.5);
    record.mutable_wall_duration()->set_seconds(ms / 1000);
    record.mutable_wall_duration()->set_nanos(static_cast<int32_t>(ms % 1000) * 1000000);
    if (!error.empty()) {
      // ComfyUI still prints "Prompt executed" after a failed prompt: its time measures nothing.
      record.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
      record.mutable_status()->set_message(error);
      if (traceback.size() > kLogTailLines) traceback.erase(traceback.begin(), traceback.end() - kLogTailLines);
      record.mutable_status()->set_log_tail(absl::StrJoin(traceback, "\n"));
    } else {
      AddMetric(&record, "wall_seconds", *seconds, "s");
      StampFigures(kComfyUiLogFigures, &record);
      if (*seconds < 0.005) {
        v1::Flag* flag = record.add_flags();
        flag->set_code("CACHE_HIT");
        flag->set_reason(absl::StrCat("\"", std::string(Trim(line)),
                                      "\": inferred from timing (a server log holds no execution_cached report): ",
                                      "ComfyUI printed 0.00 s, as it does when its outputs come from the execution cache"));
      }
    }
    error.clear();
    traceback.clear();
    out->records.push_back(std::move(record));
  }
}

}  // namespace benchfleet::synthesis
