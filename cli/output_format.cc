#include "cli/output_format.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/run_spread.h"
#include "common/figures.h"
#include "common/proto_json.h"
#include "common/proto_time.h"
#include "common/record_csv.h"
#include "common/record_validation.h"

namespace benchfleet::cli {
namespace {

std::string Figure(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

// A run without a declaration of its figures (recorded before the declarations, or by a backend
// that has none): rates first (units per second), at most kUndeclaredFigures of them, then how
// many more the run has ("--format csv" or "json" shows every one).
constexpr int kUndeclaredFigures = 3;

std::string UndeclaredFigures(const v1::RunRecord& r) {
  std::vector<const v1::Metric*> ordered;
  for (const auto& m : r.metrics()) {
    if (absl::EndsWith(m.unit(), "/s")) ordered.push_back(&m);
  }
  for (const auto& m : r.metrics()) {
    if (!absl::EndsWith(m.unit(), "/s")) ordered.push_back(&m);
  }
  std::vector<std::string> parts;
  for (size_t i = 0; i < ordered.size() && i < kUndeclaredFigures; ++i) {
    const v1::Metric& m = *ordered[i];
    parts.push_back(absl::StrCat(m.name(), "=", Figure(m.value()), m.unit().empty() ? "" : " ",
                                 m.unit()));
  }
  if (ordered.size() > kUndeclaredFigures) {
    parts.push_back(absl::StrCat("+", ordered.size() - kUndeclaredFigures, " more"));
  }
  return absl::StrJoin(parts, ", ");
}

// The table's FIGURES: the headline figures, or what a run without a declaration has.
std::string TableFigures(const v1::RunRecord& r) {
  std::string headline = HeadlineText(r);
  return headline.empty() ? UndeclaredFigures(r) : headline;
}

// Appends `cells[i]` (already CSV fields) to row i of `csv` (row 0 is the header). Rows end at a
// "\n" outside quotes: a quoted field may hold line breaks (RFC 4180).
std::string AppendCsvCells(const std::string& csv, const std::vector<std::string>& cells) {
  std::string out;
  out.reserve(csv.size() + cells.size() * 32);
  bool quoted = false;
  size_t row = 0;
  for (char c : csv) {
    if (c == '"') quoted = !quoted;  // "" inside a quoted field toggles twice
    if (c == '\n' && !quoted) {
      if (row < cells.size()) absl::StrAppend(&out, ",", cells[row]);
      ++row;
    }
    out += c;
  }
  return out;
}

std::string RunsCsv(const std::vector<v1::RunRecord>& runs, const RunAgents& agents) {
  std::vector<std::string> cells = {absl::StrJoin(
      {CsvField("agent_hostname"), CsvField("agent_class"), CsvField("headline_figures")}, ",")};
  for (const auto& r : runs) {
    const AgentName name = agents.Of(r);
    cells.push_back(absl::StrJoin(
        {CsvField(name.hostname), CsvField(name.agent_class), CsvField(HeadlineText(r))}, ","));
  }
  return AppendCsvCells(RunsToCsv(runs), cells);
}

// The keys a JSON line adds to the record's proto3 mapping (see FormatRuns).
nlohmann::ordered_json JsonAdditions(const v1::RunRecord& r, const RunAgents& agents) {
  const AgentName name = agents.Of(r);
  nlohmann::ordered_json out;
  out["agent"] = {{"hostname", name.hostname},
                  {"class", name.agent_class},
                  {"name", FormatAgentName(r.agent_id(), name)}};
  nlohmann::ordered_json figures = nlohmann::ordered_json::array();
  for (const v1::Metric* m : HeadlineFigures(r)) {
    figures.push_back({{"name", m->name()},
                       {"label", FigureLabel(*m)},
                       {"value", m->value()},
                       {"unit", m->unit()},
                       {"text", FigureText(*m)}});
  }
  out["headline_figures"] = std::move(figures);
  return out;
}

absl::StatusOr<std::string> RunsJson(const std::vector<v1::RunRecord>& runs, const RunAgents& agents) {
  std::string out;
  for (const auto& r : runs) {
    absl::StatusOr<std::string> json = MessageToJson(r);
    if (!json.ok()) return json.status();
    // The mapping is one object: the additions go in before its closing brace.
    std::string added = JsonAdditions(r, agents).dump(-1, ' ', false,
                                                      nlohmann::ordered_json::error_handler_t::replace);
    added = added.substr(1, added.size() - 2);  // without its own braces
    json->pop_back();
    absl::StrAppend(&out, *json, *json == "{" ? "" : ",", added, "}\n");
  }
  return out;
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

bool LabelSaysUnit(const std::string& label, const std::string& unit) {
  return !unit.empty() && (label == unit || absl::EndsWith(label, absl::StrCat(" ", unit)));
}

AgentName AgentNameOf(const v1::MachineConditions& conditions) {
  AgentName name;
  name.hostname = conditions.hostname();
  if (auto it = conditions.labels().find("class"); it != conditions.labels().end()) {
    name.agent_class = it->second;
  }
  return name;
}

std::string FormatAgentName(const std::string& agent_id, const AgentName& name) {
  const std::string short_id = agent_id.substr(0, 8);
  if (name.hostname.empty()) return short_id;
  std::vector<std::string> inside;
  if (!name.agent_class.empty()) inside.push_back(name.agent_class);
  if (agent_id != name.hostname) inside.push_back(short_id);
  if (inside.empty()) return name.hostname;
  return absl::StrCat(name.hostname, " (", absl::StrJoin(inside, ", "), ")");
}

std::string FigureText(const v1::Metric& metric) {
  const std::string label = FigureLabel(metric);
  const std::string human = HumanFigure(metric.value(), metric.unit());
  // "generation tokens/s" already says the unit: "52.9 generation tokens/s", not "generation
  // tokens/s 52.9 tokens/s". A unit HumanFigure changed (412 ms for 0.412 s) keeps its own.
  const std::string unit_suffix = absl::StrCat(" ", metric.unit());
  if (!metric.unit().empty() && LabelSaysUnit(label, metric.unit()) && absl::EndsWith(human, unit_suffix)) {
    return absl::StrCat(human.substr(0, human.size() - unit_suffix.size()), " ", label);
  }
  return absl::StrCat(label, " ", human);
}

std::string HeadlineText(const v1::RunRecord& run) {
  std::vector<std::string> parts;
  for (const v1::Metric* m : HeadlineFigures(run)) parts.push_back(FigureText(*m));
  return absl::StrJoin(parts, ", ");
}

AgentName RunAgents::Of(const v1::RunRecord& run) const {
  if (auto it = by_fingerprint.find(run.conditions_fingerprint()); it != by_fingerprint.end()) {
    return it->second;
  }
  if (auto it = by_agent_id.find(run.agent_id()); it != by_agent_id.end()) return it->second;
  return {};
}

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

absl::StatusOr<std::string> FormatRuns(const std::vector<v1::RunRecord>& runs, Format format,
                                       const RunAgents& agents) {
  switch (format) {
    case Format::kCsv:
      return RunsCsv(runs, agents);
    case Format::kJson:
      return RunsJson(runs, agents);
    case Format::kTable:
      break;
  }
  std::vector<std::vector<std::string>> rows = {{"RUN", "AGENT", "TASK", "MODE", "PHASE", "CALL",
                                                 "STATUS", "WALL_S", "FIGURES", "FLAGS", "SOURCE"}};
  size_t simulated = 0;
  for (const auto& r : runs) {
    if (r.simulated()) ++simulated;
    double wall = ToSeconds(r.wall_duration());
    rows.push_back({r.run_id().substr(0, 8), FormatAgentName(r.agent_id(), agents.Of(r)), r.task(),
                    r.mode(), PhaseName(r.phase()), absl::StrCat(r.call_index()),
                    StatusName(r.status().code()), r.has_wall_duration() ? Figure(wall) : "",
                    TableFigures(r), Flags(r), r.simulated() ? "SIMULATED" : "measured"});
  }
  std::string out = AlignColumns(rows);
  absl::StrAppend(&out, runs.size(), " runs");
  if (simulated > 0) absl::StrAppend(&out, " (", simulated, " SIMULATED)");
  absl::StrAppend(&out, "\n");
  if (std::string spread = FormatRunSpread(runs, agents); !spread.empty()) absl::StrAppend(&out, "\n", spread);
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
