// SteppingClock: a clock for the llama-server tests that never waits. Every Monotonic() reading
// moves it one step forward and SleepFor moves it at once, so a /health deadline passes without
// real waiting and a run's wall time and time to first token come out exact (one step per
// reading). common's SimulatedClock is not used here because its SleepFor blocks until another
// thread advances it, and the code under test is the only thread. Thread-safe.
// ClockEnv: the real Env with this clock.
#ifndef BENCHFLEET_TESTS_UNIT_AGENT_LLAMA_SERVER_STEPPING_CLOCK_H_
#define BENCHFLEET_TESTS_UNIT_AGENT_LLAMA_SERVER_STEPPING_CLOCK_H_

#include <mutex>

#include "common/clock.h"
#include "common/env.h"

namespace benchfleet::agent::testing {

class SteppingClock : public Clock {
 public:
  explicit SteppingClock(absl::Duration step) : step_(step) {}

  absl::Time Now() override {
    std::lock_guard<std::mutex> lock(mu_);
    return start_ + elapsed_;
  }
  absl::Duration Monotonic() override {
    std::lock_guard<std::mutex> lock(mu_);
    elapsed_ += step_;
    return elapsed_;
  }
  void SleepFor(absl::Duration d) override {
    std::lock_guard<std::mutex> lock(mu_);
    elapsed_ += d;
    slept_ += d;
  }
  // Returns the total of every SleepFor so far.
  absl::Duration slept() {
    std::lock_guard<std::mutex> lock(mu_);
    return slept_;
  }

 private:
  std::mutex mu_;
  const absl::Duration step_;
  const absl::Time start_ = absl::FromUnixSeconds(1767225600);  // 2026-01-01
  absl::Duration elapsed_;  // guarded by mu_
  absl::Duration slept_;    // guarded by mu_
};

class ClockEnv : public EnvWrapper {
 public:
  explicit ClockEnv(Clock* clock) : EnvWrapper(Env::Default()), clock_(clock) {}
  Clock& clock() override { return *clock_; }

 private:
  Clock* clock_;
};

}  // namespace benchfleet::agent::testing

#endif  // BENCHFLEET_TESTS_UNIT_AGENT_LLAMA_SERVER_STEPPING_CLOCK_H_
