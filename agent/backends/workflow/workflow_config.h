// The workflow section of a series spec, checked: which allow-listed command to run (by name),
// the values of its placeholders, its environment (values may come from the agent's labels), its
// batch size, whether its container is restarted or reused between runs, the deadline of one run,
// how to measure its memory and where the figures are in its results file. A coordinator never supplies a program
// or an argument: only values for the placeholders the operator wrote into allow.commands, each
// checked here before anything runs.
// Owner: the workflow backend. Plain data and pure functions; thread-safe.
#ifndef BENCHFLEET_AGENT_BACKENDS_WORKFLOW_WORKFLOW_CONFIG_H_
#define BENCHFLEET_AGENT_BACKENDS_WORKFLOW_WORKFLOW_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
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

// What a session does with the command's container between its runs (workflow.container).
enum class ContainerLifecycle {
  // Every run starts the command afresh (a `docker run --rm` line: a new container), so every
  // run is a cold start of the tool.
  kRestart,
  // The session starts one container at Open with the `start` command and every run executes
  // the command in it (`docker exec {container} ...`); Close removes it. The runner's first run
  // after Open is COLD, the later ones on the same session WARM.
  kReuse,
};

// The environment variable the agent sets to the run's batch size when the command lists it.
inline constexpr char kBatchSizeEnv[] = "BATCH_SIZE";
// The matrix axis (and section key) of the batch size.
inline constexpr char kBatchSizeAxis[] = "batch_size";

struct WorkflowConfig {
  std::string command_name;  // the key in allow.commands
  CommandTemplate command;   // its template, from the allow-list
  std::string config;        // fills {config}; "" when no template has one
  std::string prompts;       // fills {prompts}; "" when no template has one
  // The variables the spec sets (values resolved: an agent label's value, else its default).
  // The command gets those its allow.commands entry lists, the start command those its own lists.
  std::map<std::string, std::string> env;
  // For a variable taken from an agent label: where its value came from, e.g. "agent label
  // accelerator" or "default (this agent has no label accelerator)", for the records' params.
  std::map<std::string, std::string> env_sources;
  std::string mode;  // the records' mode

  ContainerLifecycle container = ContainerLifecycle::kRestart;
  // With kReuse: the allow-listed command that starts the session's container (it holds
  // {container}; e.g. docker run -d --name {container} IMAGE sleep infinity).
  std::string start_name;
  CommandTemplate start;

  // workflow.batch_size: the value of the batch_size axis when the matrix does not list it.
  std::optional<int> batch_size;
  // How the command takes a batch size: a {batch_size} in its (or the start command's) argv,
  // BATCH_SIZE in its env list. Neither: a batch size is refused.
  bool batch_size_placeholder = false;
  bool batch_size_env = false;
  bool takes_batch_size() const { return batch_size_placeholder || batch_size_env; }
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

// Parses and checks the section (the mapping under `workflow:`); labels are the agent's (an env
// value may be {label: NAME, default: VALUE}). Errors:
//   INVALID_ARGUMENT   "line N: workflow.<key> ..." for an unknown key, a wrong type or value, a
//                      placeholder value missing or given for a placeholder the command lacks,
//                      an env name the command does not list, a value with control characters,
//                      a label this agent does not have (and no default), a batch size for a
//                      command that takes none, container: reuse without a start command
//   PERMISSION_DENIED  a command not in allow.commands, a config or prompts file outside
//                      allow.workflow_dirs (the AllowList's message, with what it lists)
absl::StatusOr<WorkflowConfig> ParseWorkflowSection(const YAML::Node& section, const AllowList& allow,
                                                    const std::map<std::string, std::string>& labels = {});

// Reads a batch size (the section's, or a matrix value): an integer from 1 to 1048576.
// INVALID_ARGUMENT "batch_size must be an integer from 1 to 1048576, got 'x'" otherwise.
absl::StatusOr<int> ParseBatchSize(std::string_view text);

// Returns the command's argv with {config}, {prompts}, {output}, {container} and {batch_size}
// replaced by the values. INVALID_ARGUMENT when a placeholder is there without a value: never
// runs a half-filled line.
absl::StatusOr<std::vector<std::string>> FillCommand(const CommandTemplate& command, const std::string& config,
                                                     const std::string& prompts, const std::string& output,
                                                     const std::string& container = "",
                                                     const std::string& batch_size = "");

// Returns the environment of one process: the variables of env that command lists, and
// BATCH_SIZE=batch_size when it lists BATCH_SIZE and batch_size is not empty.
std::map<std::string, std::string> CommandEnv(const CommandTemplate& command,
                                              const std::map<std::string, std::string>& env,
                                              const std::string& batch_size);

// Returns a container name for one run: "benchfleet-<pid>-<unix seconds>-<n>" (docker's name
// rules: [a-zA-Z0-9][a-zA-Z0-9_.-]*), unique on this host for this agent process.
std::string ContainerName(int64_t pid, absl::Time now, int n);

// Checks a value for a placeholder: an absolute path in canonical form (no "..", no "//"),
// without control characters. INVALID_ARGUMENT naming what.
absl::Status CheckPathValue(std::string_view what, const std::string& value);

}  // namespace benchfleet::agent::workflow

#endif  // BENCHFLEET_AGENT_BACKENDS_WORKFLOW_WORKFLOW_CONFIG_H_
