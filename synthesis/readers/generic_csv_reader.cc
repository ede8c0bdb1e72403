// The generic CSV documented in README.md: one run per row, one figure per row besides wall_seconds.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/figures.h"
#include "common/proto_time.h"
#include "synthesis/readers/file_formats.h"
#include "synthesis/readers/file_record.h"
#include "common/simulated.h"

namespace benchfleet::synthesis {
namespace {

enum Column { kMachine, kTask, kBackend, kMode, kPhase, kCallIndex, kWallSeconds, kMetric, kValue, kUnit, kStatus, kColumns };

std::string Lower(std::string_view s) { return absl::AsciiStrToLower(std::string(Trim(s))); }

// Fills record from one row's cells; returns the reason when the row is invalid.
std::string FillRecord(const std::vector<std::string>& cells, v1::RunRecord* record) {
  auto cell = [&](Column c) { return std::string(Trim(cells[c])); };
  if (cell(kTask).empty()) return "task is empty";
  record->set_task(cell(kTask));
  record->set_backend(cell(kBackend).empty() ? "generic-csv" : cell(kBackend));
  record->set_mode(cell(kMode));
  if (!cell(kMachine).empty()) (*record->mutable_params())["machine"] = cell(kMachine);
  // The row's identity strings: a simulator's say SIMULATED, and the record is then simulated.
  for (Column c : {kBackend, kMachine}) {
    if (!SaysSimulated(cell(c))) continue;
    record->set_simulated(true);
    (*record->mutable_params())["simulated_by"] = absl::StrCat(c == kBackend ? "backend" : "machine", ": ", cell(c));
    break;
  }
  const std::string phase = Lower(cells[kPhase]);
  if (phase.empty() || phase == "warm") {
    record->set_phase(v1::PHASE_WARM);
  } else if (phase == "cold") {
    record->set_phase(v1::PHASE_COLD);
  } else if (phase == "validation") {
    record->set_phase(v1::PHASE_VALIDATION);
  } else {
    return absl::StrCat("phase \"", cell(kPhase), "\" is not cold, warm, validation or blank");
  }
  if (!cell(kCallIndex).empty()) {
    auto index = ParseDouble(cell(kCallIndex));
    if (!index.has_value() || *index < 1 || *index != std::floor(*index) || *index > 4e9) {
      return absl::StrCat("call_index \"", cell(kCallIndex), "\" is not a positive integer");
    }
    record->set_call_index(static_cast<uint32_t>(*index));
  }
  const std::string status = std::string(Trim(cells[kStatus]));
  const std::string status_lower = Lower(status);
  if (status_lower.empty() || status_lower == "ok") {
    record->mutable_status()->set_code(v1::RunStatus::CODE_OK);
  } else if (status_lower.rfind("failed", 0) == 0) {
    record->mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
    std::string_view message = std::string_view(status).substr(6);
    if (!message.empty() && message.front() == ':') message.remove_prefix(1);
    record->mutable_status()->set_message(std::string(Trim(message)));
  } else {
    return absl::StrCat("status \"", status, "\" is not ok, failed, \"failed: MESSAGE\" or blank");
  }
  if (!cell(kWallSeconds).empty()) {
    auto seconds = ParseDouble(cell(kWallSeconds));
    if (!seconds.has_value() || *seconds < 0) {
      return absl::StrCat("wall_seconds \"", cell(kWallSeconds), "\" is not a number >= 0");
    }
    AddMetric(record, "wall_seconds", *seconds, "s");
    SetDuration(absl::Nanoseconds(std::llround(*seconds * 1e9)), record->mutable_wall_duration());
  }
  if (!cell(kMetric).empty()) {
    auto value = ParseDouble(cell(kValue));
    if (!value.has_value()) return absl::StrCat("value \"", cell(kValue), "\" of metric ", cell(kMetric), " is not a number");
    AddMetric(record, cell(kMetric), *value, cell(kUnit));
    // The row's own figure is its main one; the file does not say which way is better, so its
    // unit does: a rate ("tokens/s") is higher-better, anything else lower-better.
    const std::string unit = cell(kUnit);
    const FigureDeclaration declared[] = {
        {.name = record->metrics(record->metrics_size() - 1).name(),
         .unit = unit,
         .better = absl::EndsWith(unit, "/s") ? v1::BETTER_HIGHER : v1::BETTER_LOWER,
         .headline = 1}};
    StampFigures(declared, record);
  } else if (!cell(kValue).empty() || !cell(kUnit).empty()) {
    return "value or unit given without a metric";
  }
  if (record->metrics_size() == 0 && record->status().code() == v1::RunStatus::CODE_OK) {
    return "an OK run needs wall_seconds or a metric";
  }
  return "";
}

}  // namespace

void ReadGenericCsv(const std::string& path, std::string_view content, ReadResult* out) {
  std::vector<std::string_view> lines = SplitLines(content);
  CallCounter calls;
  for (size_t i = 1; i < lines.size(); ++i) {
    const uint32_t number = static_cast<uint32_t>(i + 1);
    if (Trim(lines[i]).empty() || Trim(lines[i]).front() == '#') continue;
    auto cells = SplitCsvLine(lines[i]);
    if (!cells.has_value()) {
      out->skipped.push_back({path, number, "unclosed quote"});
      continue;
    }
    if (cells->size() != kColumns) {
      out->skipped.push_back({path, number, absl::StrCat("expected ", static_cast<int>(kColumns), " cells, got ", cells->size())});
      continue;
    }
    v1::RunRecord record = NewFileRecord(path, number, "");
    if (std::string reason = FillRecord(*cells, &record); !reason.empty()) {
      out->skipped.push_back({path, number, reason});
      continue;
    }
    const uint32_t next = calls.Next(record);
    if (record.call_index() == 0) record.set_call_index(next);
    out->records.push_back(std::move(record));
  }
}

}  // namespace benchfleet::synthesis
