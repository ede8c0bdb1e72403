// CommandRunner: runs a short-lived tool (nvidia-smi, rocm-smi, lscpu, sysctl, ...) and captures
// its output, with a deadline, for the machine probes. Not for the servers the agent measures
// (agent/process does those). Owner: agent/probes. PosixCommandRunner is thread-safe: each
// Run is independent; tests hand in a fake runner or a search path holding fake tools.
#ifndef BENCHFLEET_AGENT_PROBES_COMMAND_RUNNER_H_
#define BENCHFLEET_AGENT_PROBES_COMMAND_RUNNER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace benchfleet::agent {

struct CommandOutput {
  int exit_code = 0;        // -1 when killed by a signal
  std::string stdout_text;  // at most kMaxCommandOutput bytes
  std::string stderr_text;  // at most kMaxCommandOutput bytes
};

inline constexpr size_t kMaxCommandOutput = 4 << 20;

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs argv (argv[0] looked up on the search path unless it holds a '/') with stdin from
  // /dev/null, in a process group of its own, without the agent's other descriptors. NOT_FOUND when the program is not there ("nvidia-smi: not found on PATH"),
  // DEADLINE_EXCEEDED when it did not end within timeout (it is then killed with its process
  // group), INTERNAL when it cannot be started. A non-zero exit is not an error: see exit_code.
  virtual absl::StatusOr<CommandOutput> Run(const std::vector<std::string>& argv, absl::Duration timeout) = 0;
};

// Returns the runner of real processes. search_path is a PATH-style list of directories;
// nullptr uses the agent's $PATH.
std::unique_ptr<CommandRunner> NewPosixCommandRunner(const char* search_path = nullptr);

// Returns "nvidia-smi --query-gpu=... exited with code 6: <first line of stderr or stdout>" for a
// failed run, for the reasons the probes record.
std::string DescribeFailure(const std::vector<std::string>& argv, const CommandOutput& output);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_PROBES_COMMAND_RUNNER_H_
