// PollUntil: the one way a test waits for another thread or process to reach a state it cannot be
// told about (a file appears, a server answers, a counter moves). It polls on the real clock, so
// only for real concurrency: time-dependent logic under test takes a SimulatedClock instead
// (common/clock.h). Test-only; thread-safe when the condition is.
#ifndef BENCHFLEET_TESTS_SUPPORT_POLL_H_
#define BENCHFLEET_TESTS_SUPPORT_POLL_H_

#include <chrono>
#include <thread>

#include "absl/time/time.h"

namespace benchfleet::testing {

// Calls condition() every `every` until it returns true (then true) or `timeout` has passed on
// the real steady clock (then false, after a last call).
template <typename F>
bool PollUntil(F condition, absl::Duration timeout, absl::Duration every = absl::Milliseconds(50)) {
  const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return condition();
    std::this_thread::sleep_for(absl::ToChronoNanoseconds(every));
  }
  return true;
}

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_SUPPORT_POLL_H_
