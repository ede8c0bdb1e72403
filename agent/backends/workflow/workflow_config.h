// The workflow section of a series spec, checked: which allow-listed command to run (by name),
// the values of its placeholders, its environment, the deadline of one run, how to measure its
// memory and where the figures are in its results file. A coordinator never supplies a program
// or an argument: only values for the placeholders the operator wrote into allow.commands, each
// checked here before anything runs.
// Owner: the workflow backend. Plain data and pure functions; thread-safe.
#ifndef BENCHFLEET_AGENT_BACKENDS_WORKFLOW_WORKFLOW_CONFIG_H_
#define BENCHFLEET_AGENT_BACKENDS_WORKFLOW_WORKFLOW_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/config/allow_list.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet::agent::workflow {

// How the peak memory of a run is measured.
enum class MemoryMethod {
  kAuto,    // a cgroup when the agent can make one, else rusage
  kCgroup,  // a cgroup, or the run FAILS saying why not
  kRusage,  // wait4's ru_maxrss (the largest process of the tree)
  // The container's memory from its runtime (`docker stats`, sampled): the command's template
  // must hold {container}. kAuto does this too when the template holds {container}.
  kContainer,
};

// JSON pointers to the figures in the results file; the defaults are the documented schema
// (README.md here). request_* pointers are relative to one element of the requests array.
struct ResultsFormat {
  std::string requests = "/requests";
  std::string prompt_id = "/prompt_id";
  std::string latency_seconds = "/latency_seconds";
  std::string output_tokens = "/output_tokens";
  std::string time_to_first_token_seconds = "/time_to_first_token_seconds";
  std::string error = "/error";
  std::string duration_seconds = "/duration_seconds";
  std::string tool = "/tool";
  std::string simulated = "/simulated";
};

struct WorkflowConfig {
  std::string command_name;  // the key in allow.commands
  CommandTemplate command;   // its template, from the allow-list
  std::string config;        // fills {config}; "" when the template has none
  std::string prompts;       // fills {prompts}; "" when the template has none
  std::map<std::string, std::string> env;
  std::string mode;  // the records' mode
  absl::Duration deadline = absl::Hours(1);
  absl::Duration stop_grace = absl::Seconds(5);
  MemoryMethod memory = MemoryMethod::kAuto;
  // True when the template holds {container}: the agent names the container (a fresh name per
  // run) and, with memory auto or container, samples its memory from the runtime.
  bool names_container = false;
  // Between two `docker stats` samples of the container.
  absl::Duration container_sample_period = absl::Seconds(1);
  ResultsFormat results;
};

// Parses and checks the section (the mapping under `workflow:`). Errors:
//   INVALID_ARGUMENT   "line N: workflow.<key> ..." for an unknown key, a wrong type or value, a
//                      placeholder value missing or given for a placeholder the command lacks,
//                      an env name the command does not list, a value with control characters
//   PERMISSION_DENIED  a command not in allow.commands, a config or prompts file outside
//                      allow.workflow_dirs (the AllowList's message, with what it lists)
absl::StatusOr<WorkflowConfig> ParseWorkflowSection(const YAML::Node& section, const AllowList& allow);

// Returns the command's argv with {config}, {prompts}, {output} and {container} replaced by the
// values. INVALID_ARGUMENT when a placeholder is there without a value: never runs a half-filled
// line.
absl::StatusOr<std::vector<std::string>> FillCommand(const CommandTemplate& command, const std::string& config,
                                                     const std::string& prompts, const std::string& output,
                                                     const std::string& container = "");

// Returns a container name for one run: "benchfleet-<pid>-<unix seconds>-<n>" (docker's name
// rules: [a-zA-Z0-9][a-zA-Z0-9_.-]*), unique on this host for this agent process.
std::string ContainerName(int64_t pid, absl::Time now, int n);

// Checks a value for a placeholder: an absolute path in canonical form (no "..", no "//"),
// without control characters. INVALID_ARGUMENT naming what.
absl::Status CheckPathValue(std::string_view what, const std::string& value);

}  // namespace benchfleet::agent::workflow

#endif  // BENCHFLEET_AGENT_BACKENDS_WORKFLOW_WORKFLOW_CONFIG_H_
