// Processes of a small fleet for the pipeline tests: a benchfleet-coordinator and
// benchfleet-agent commands, each a real process of the built binaries, with their logs in a
// temporary folder. Not thread-safe.
#ifndef BENCHFLEET_TESTS_INTEGRATION_FLEET_H_
#define BENCHFLEET_TESTS_INTEGRATION_FLEET_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/support/subprocess.h"
#include "tests/support/poll.h"

namespace benchfleet::testing {

// A coordinator process on a fixed port, restartable on the same port after a kill.
class CoordinatorProcess {
 public:
  CoordinatorProcess(std::string database_url, std::string work_dir);

  // Starts the process and waits until it logs that it is listening. False on timeout.
  bool Start(absl::Duration timeout = absl::Seconds(60));
  void Kill(int signo);
  int Wait();
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string log() const;

 private:
  std::string database_url_;
  std::string work_dir_;
  int port_;
  int metrics_port_;
  int starts_ = 0;
  std::unique_ptr<Subprocess> process_;
};

// Starts `benchfleet-agent ARGS...`, logging to work_dir/NAME.log.
std::unique_ptr<Subprocess> StartAgent(const std::string& work_dir, const std::string& name,
                                       std::vector<std::string> args);

// Runs `benchfleet-agent simulate` for an agent labelled class=CLS: `runs` SIMULATED runs sent to
// `coordinator`, its config, series folder, state and log (sim-CLS.log) under work_dir. Returns
// the agent's exit code.
int SimulateSeries(const std::string& work_dir, const std::string& cls, int runs, const std::string& coordinator);

// Returns the content of a file, or "" when it cannot be read.
std::string ReadAll(const std::string& path);

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_INTEGRATION_FLEET_H_
