// StopSignals: how `benchfleet-agent run` and `serve` take SIGINT and SIGTERM. The first one
// requests stop on a std::stop_source, which every wait of the series (the pause between runs, a
// server coming up, a cooldown: Clock::WaitForStop) and the main loop of serve watch, so the agent
// stops at once, or after the timed run in progress. The second one exits the process at once,
// with a line saying so and exit code 1: records already appended to the outbox stay (each append
// is one write(2), fsync'd; nothing of the agent's is half-written), and the servers the agent
// started die with it (PR_SET_PDEATHSIG, agent/process/child_process.h).
// Owned by the command's main function; token() and signals() are thread-safe.
#ifndef BENCHFLEET_AGENT_COMMANDS_STOP_SIGNALS_H_
#define BENCHFLEET_AGENT_COMMANDS_STOP_SIGNALS_H_

#include <signal.h>

#include <atomic>
#include <functional>
#include <stop_token>
#include <string>
#include <thread>

namespace benchfleet::agent {

class StopSignals {
 public:
  // Blocks SIGINT and SIGTERM in the calling thread. Call it before any thread starts, so every
  // thread inherits the mask and only the watcher below ever takes them (child processes get the
  // default mask back before exec).
  static void Block();

  // command names the agent's command in the second signal's line ("run", "serve").
  // on_first is called on the watcher's thread with the first signal's name ("SIGTERM") right
  // after stop is requested; on_second returns what the exit line adds (e.g. how many records
  // stay in the outbox); it must not block.
  StopSignals(std::string command, std::function<void(const char* signal)> on_first,
              std::function<std::string()> on_second);
  ~StopSignals();  // ends the watcher thread (a signal after that takes the default action)
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Starts the watcher thread. Block() must have been called.
  void Start();

  // Requested at the first signal.
  std::stop_token token() const { return source_.get_token(); }
  // How many stop signals arrived so far.
  int signals() const { return signals_.load(); }

 private:
  void Watch();

  const std::string command_;
  const std::function<void(const char*)> on_first_;
  const std::function<std::string()> on_second_;
  std::stop_source source_;
  std::atomic<int> signals_{0};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_COMMANDS_STOP_SIGNALS_H_
