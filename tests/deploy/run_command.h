// Runs a tool the deploy tests check their files with (helm, docker-compose, ...) and captures
// what it printed. Test-only; each call is independent (thread-compatible).
#ifndef BENCHFLEET_TESTS_DEPLOY_RUN_COMMAND_H_
#define BENCHFLEET_TESTS_DEPLOY_RUN_COMMAND_H_

#include <string>
#include <vector>

namespace benchfleet::testing {

struct CommandResult {
  int exit_code = -1;  // 128 + signal when killed by one; 127 when argv[0] could not be run
  std::string out;
  std::string err;
};

// Runs argv (argv[0] is a path, or a name looked up on PATH) with stdin from /dev/null and waits
// for it. Output goes through temporary files under $TMPDIR, so a chatty tool cannot block.
CommandResult RunCommand(const std::vector<std::string>& argv);

// Returns the first executable among: $env_var, each of `candidates`, then `name` on PATH; "" when
// there is none.
std::string FindTool(const std::string& name, const std::string& env_var,
                     const std::vector<std::string>& candidates);

// Returns helm: $BENCHFLEET_HELM, else the one scripts/setup installs ($BENCHFLEET_CACHE_DIR/bin
// or ~/.cache/benchfleet/bin), else helm on PATH; "" when there is none.
std::string FindHelm();

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_DEPLOY_RUN_COMMAND_H_
