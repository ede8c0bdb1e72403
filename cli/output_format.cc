#include "cli/output_format.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/proto_json.h"
#include "common/record_csv.h"
#include "common/record_validation.h"

namespace benchfleet::cli {
namespace {

std::string Figure(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

// The table's headline figures: rates first (units per second), at most kTableMetrics of them,
// then how many more the run has ("--format csv" or "json" shows every one).
constexpr int kTableMetrics = 3;

std::string Metrics(const v1::RunRecord& r) {
  std::vector<const v1::Metric*> ordered;
  for (const auto& m : r.metrics()) {
    if (absl::EndsWith(m.unit(), "/s")) ordered.push_back(&m);
  }
  for (const auto& m : r.metrics()) {
    if (!absl::EndsWith(m.unit(), "/s")) ordered.push_back(&m);
  }
  std::vector<std::string> parts;
  for (size_t i = 0; i < ordered.size() && i < kTableMetrics; ++i) {
    const v1::Metric& m = *ordered[i];
    parts.push_back(absl::StrCat(m.name(), "=", Figure(m.value()), m.unit().empty() ? "" : " ",
                                 m.unit()));
  }
  if (ordered.size() > kTableMetrics) {
    parts.push_back(absl::StrCat("+", ordered.size() - kTableMetrics, " more"));
  }
  return absl::StrJoin(parts, ", ");
}

// An operator's INVALIDATED flag carries its reason, shown wherever the run is listed.
std::string Flags(const v1::RunRecord& r) {
  std::vector<std::string> codes;
  for (const auto& f : r.flags()) {
    codes.push_back(f.code() == "INVALIDATED" && !f.reason().empty()
                        ? absl::StrCat(f.code(), " (", f.reason(), ")")
                        : f.code());
  }
  return absl::StrJoin(codes, ",");
}

// "llama-nightly RUNNING": the series name and state of the agent's current fleet task.
std::string CurrentTask(const v1::Machine& m) {
  if (!m.has_current_task()) return "";
  std::string state = v1::TaskStatus::State_Name(m.current_task().state());
  if (state.rfind("STATE_", 0) == 0) state = state.substr(6);
  return absl::StrCat(m.current_task().series_name(), " ", state);
}

std::string Labels(const google::protobuf::Map<std::string, std::string>& labels) {
  std::map<std::string, std::string> sorted(labels.begin(), labels.end());
  return absl::StrJoin(sorted, ",", absl::PairFormatter("="));
}

template <typename T>
absl::StatusOr<std::string> JsonLines(const std::vector<T>& messages) {
  std::string out;
  for (const auto& m : messages) {
    auto json = MessageToJson(m);
    if (!json.ok()) return json.status();
    absl::StrAppend(&out, *json, "\n");
  }
  return out;
}

}  // namespace

absl::StatusOr<Format> ParseFormat(const std::string& name) {
  if (name == "table") return Format::kTable;
  if (name == "csv") return Format::kCsv;
  if (name == "json") return Format::kJson;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown format \"", name, "\": use table, csv or json"));
}

std::string AlignColumns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

absl::StatusOr<std::string> FormatRuns(const std::vector<v1::RunRecord>& runs, Format format) {
  switch (format) {
    case Format::kCsv:
      return RunsToCsv(runs);
    case Format::kJson:
      return JsonLines(runs);
    case Format::kTable:
      break;
  }
  std::vector<std::vector<std::string>> rows = {{"RUN", "AGENT", "TASK", "MODE", "PHASE", "CALL",
                                                 "STATUS", "WALL_S", "METRICS", "FLAGS", "SOURCE"}};
  size_t simulated = 0;
  for (const auto& r : runs) {
    if (r.simulated()) ++simulated;
    double wall = r.wall_duration().seconds() + r.wall_duration().nanos() / 1e9;
    rows.push_back({r.run_id().substr(0, 8), r.agent_id().substr(0, 8), r.task(), r.mode(),
                    PhaseName(r.phase()), absl::StrCat(r.call_index()),
                    StatusName(r.status().code()), r.has_wall_duration() ? Figure(wall) : "",
                    Metrics(r), Flags(r), r.simulated() ? "SIMULATED" : "measured"});
  }
  std::string out = AlignColumns(rows);
  absl::StrAppend(&out, runs.size(), " runs");
  if (simulated > 0) absl::StrAppend(&out, " (", simulated, " SIMULATED)");
  absl::StrAppend(&out, "\n");
  return out;
}

absl::StatusOr<std::string> FormatAgents(const std::vector<v1::Machine>& agents, Format format) {
  if (format == Format::kJson) return JsonLines(agents);
  std::vector<std::vector<std::string>> rows = {{"AGENT", "HOSTNAME", "OS", "CPU", "ACCELERATORS",
                                                 "LABELS", "RUNS", "CONNECTED", "LAST_SEEN", "TASK"}};
  for (const auto& m : agents) {
    const auto& c = m.conditions();
    std::vector<std::string> accelerators;
    for (const auto& a : c.accelerators()) accelerators.push_back(a.name());
    rows.push_back({m.agent_id(), c.hostname(), absl::StrCat(c.os_name(), " ", c.os_version()),
                    c.cpu_model(), absl::StrJoin(accelerators, ";"), Labels(c.labels()),
                    absl::StrCat(m.run_count()), m.connected() ? "yes" : "no",
                    FormatTimestamp(m.last_seen_time()), CurrentTask(m)});
  }
  if (format == Format::kTable) return AlignColumns(rows);
  std::string out;
  for (const auto& row : rows) {
    std::vector<std::string> cells;
    for (const auto& cell : row) cells.push_back(CsvField(cell));
    absl::StrAppend(&out, absl::StrJoin(cells, ","), "\n");
  }
  return out;
}

}  // namespace benchfleet::cli
