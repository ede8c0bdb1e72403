// How the CLI prints runs and agents: an aligned table for people, CSV (the runs.csv form) and
// JSON lines (the proto3 JSON mapping) for tools, and the pieces the fleet commands share: an
// agent's name for people (hostname, class, short id) and a run's headline figures. Pure
// functions; thread-safe.
#ifndef BENCHFLEET_CLI_OUTPUT_FORMAT_H_
#define BENCHFLEET_CLI_OUTPUT_FORMAT_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "benchfleet/v1/admin.pb.h"
#include "benchfleet/v1/record.pb.h"

namespace benchfleet::cli {

enum class Format { kTable, kCsv, kJson };

// Parses "table", "csv" or "json".
absl::StatusOr<Format> ParseFormat(const std::string& name);

// An agent as people know it, from its conditions: the hostname and the "class" label (what
// `benchfleet agents` shows in HOSTNAME and LABELS).
struct AgentName {
  std::string hostname;
  std::string agent_class;
};

// Returns the name of the conditions' machine.
AgentName AgentNameOf(const v1::MachineConditions& conditions);

// Returns "a100-01 (a100, 3f2a9c1e)": the hostname, then the class and the first 8 characters of
// the agent id in brackets; "a100-01 (3f2a9c1e)" without a class; the short id alone without a
// hostname; the id is left out of the brackets when it is the hostname itself.
std::string FormatAgentName(const std::string& agent_id, const AgentName& name);

// Returns true when the label ends with the unit as a word of its own: "generation tokens/s" and
// "tokens/s" say "tokens/s"; "wall_seconds" does not say "s".
bool LabelSaysUnit(const std::string& label, const std::string& unit);

// Returns one figure for people, from its declaration: "52.9 generation tokens/s" when the label
// names the unit, else "mean latency 412 ms", "TTFT p99 88.0 ms" (common/figures.h HumanFigure).
std::string FigureText(const v1::Metric& metric);

// Returns the run's headline figures (Metric.headline), main figure first, joined by ", ";
// "" when the run declares none.
std::string HeadlineText(const v1::RunRecord& run);

// Who measured each run: the conditions its fingerprint names, else (a fingerprint the
// coordinator does not know) its agent's latest conditions.
struct RunAgents {
  std::map<std::string, AgentName> by_fingerprint;
  std::map<std::string, AgentName> by_agent_id;

  AgentName Of(const v1::RunRecord& run) const;
};

// `benchfleet runs`. The table names each run's agent (FormatAgentName), its mode, phase and
// call, and its headline figures (runs without a declaration: their rates first, at most three,
// and how many more); after the count, the spread of each setting's main figure
// (FormatRunSpread, cli/run_spread.h). CSV is the runs.csv form (common/record_csv.h) with three columns added at
// the end: agent_hostname, agent_class and headline_figures (HeadlineText). JSON is one record per
// line in the proto3 mapping with two keys added at the end: "agent" {"hostname", "class", "name"}
// and "headline_figures" [{"name", "label", "value", "unit", "text"}, ...] (readers of the mapping
// that ignore unknown fields, as benchfleet's own do, read the lines as before).
absl::StatusOr<std::string> FormatRuns(const std::vector<v1::RunRecord>& runs, Format format,
                                       const RunAgents& agents = {});
absl::StatusOr<std::string> FormatAgents(const std::vector<v1::Machine>& agents, Format format);

// Lays out rows (the first is the header) in columns separated by two spaces.
std::string AlignColumns(const std::vector<std::vector<std::string>>& rows);

}  // namespace benchfleet::cli

#endif  // BENCHFLEET_CLI_OUTPUT_FORMAT_H_
