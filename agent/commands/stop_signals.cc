#include "agent/commands/stop_signals.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <utility>

#include "agent/commands/agent_context.h"

namespace benchfleet::agent {
namespace {

// How often the watcher looks whether it should end (its destructor).
constexpr long kWatchPollNanos = 100'000'000;

sigset_t StopSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

void StopSignals::Block() {
  const sigset_t set = StopSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

StopSignals::StopSignals(std::string command, std::function<void(const char*)> on_first,
                         std::function<std::string()> on_second)
    : command_(std::move(command)), on_first_(std::move(on_first)), on_second_(std::move(on_second)) {}

StopSignals::~StopSignals() {
  done_.store(true);
  if (thread_.joinable()) thread_.join();
}

void StopSignals::Start() {
  thread_ = std::thread([this] { Watch(); });
}

void StopSignals::Watch() {
  const sigset_t set = StopSet();
  while (!done_.load()) {
    const struct timespec wait = {0, kWatchPollNanos};
    const int signo = sigtimedwait(&set, nullptr, &wait);
    if (signo != SIGINT && signo != SIGTERM) continue;  // timeout or EINTR
    const char* name = signo == SIGINT ? "SIGINT" : "SIGTERM";
    if (signals_.fetch_add(1) == 0) {
      source_.request_stop();
      if (on_first_) on_first_(name);
      continue;
    }
    const std::string extra = on_second_ ? on_second_() : "";
    std::fprintf(stderr, "benchfleet-agent %s: second %s: exiting at once (exit code %d)%s%s\n", command_.c_str(), name,
                 kExitFailed, extra.empty() ? "" : "; ", extra.c_str());
    std::fflush(stderr);
    // No destructor runs: another thread may be in the middle of anything. What the outbox holds
    // is on disk already; the servers this agent started get SIGKILL from the kernel.
    ::_exit(kExitFailed);
  }
}

}  // namespace benchfleet::agent
