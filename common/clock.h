// Clock: the one source of time for every component. Production code uses SystemClock();
// tests hand in a SimulatedClock and advance it, so nothing sleeps for real or reads wall time.
// Waits that a stop or a cancel must end at once (pauses, polls, back-offs) use WaitForStop with a
// std::stop_token: it returns the moment stop is requested, on the real clock and on a simulated one.
// SystemClock is thread-safe; SimulatedClock is thread-safe too (a mutex guards its state).
#ifndef BENCHFLEET_COMMON_CLOCK_H_
#define BENCHFLEET_COMMON_CLOCK_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stop_token>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"

namespace benchfleet {

class Clock {
 public:
  virtual ~Clock() = default;

  // Returns the wall-clock time: for timestamps only, never for durations.
  virtual absl::Time Now() = 0;

  // Returns a monotonic reading, for durations. Its origin is arbitrary.
  virtual absl::Duration Monotonic() = 0;

  // Blocks for d (a simulated clock returns when the test has advanced it by d).
  virtual void SleepFor(absl::Duration d) = 0;

  // Blocks for d or until stop is requested, whichever comes first: true when stop was requested
  // (at once when it already was), false when d passed. A token that can never be stopped sleeps
  // d. The real and the simulated clock wake at the request itself; this default, for other test
  // clocks, sleeps in slices of kStopPollSlice and looks at the token between them.
  virtual bool WaitForStop(const std::stop_token& stop, absl::Duration d);

  static constexpr absl::Duration kStopPollSlice = absl::Milliseconds(10);
};

// Returns the process-wide real clock.
Clock& SystemClock();

// How a SimulatedClock moves besides Advance().
struct SimulatedClockOptions {
  absl::Time start = absl::FromUnixSeconds(1767225600);  // 2026-01-01
  // False: SleepFor and WaitForStop block until Advance() has moved the clock past the wait (the
  // test steps a thread that sleeps). True: they move the clock by the wait at once and return
  // (code under test that is the only thread: a backend, the runner, back-offs, paced loops); the
  // waits are noted (sleeps(), slept()).
  bool sleeps_advance = false;
  // Every Monotonic() reading first moves the clock by this much, so that a deadline loop ends
  // without waiting and a duration measured is an exact count of readings.
  absl::Duration step_per_reading = absl::ZeroDuration();
};

// The one clock of the tests: it moves only when the test says so (Advance), or, with
// sleeps_advance, by exactly what the code under test waits. Nothing sleeps for real.
class SimulatedClock : public Clock {
 public:
  explicit SimulatedClock(absl::Time start = absl::FromUnixSeconds(1767225600));  // 2026-01-01
  explicit SimulatedClock(SimulatedClockOptions options);

  absl::Time Now() override;
  absl::Duration Monotonic() override;
  void SleepFor(absl::Duration d) override;
  // Returns when Advance() has moved the clock past d or stop is requested, without any
  // Advance(): a stop ends the wait at the same simulated instant.
  bool WaitForStop(const std::stop_token& stop, absl::Duration d) override;

  // Moves the clock forward by d and wakes the sleepers whose deadline has passed.
  void Advance(absl::Duration d);

  // Returns how many threads are blocked in SleepFor or WaitForStop right now.
  int sleepers();

  // With sleeps_advance: every wait so far, in order, and their total.
  std::vector<absl::Duration> sleeps();
  absl::Duration slept();

  // With sleeps_advance: called at the start of each WaitForStop, before the clock moves; it
  // stands for another thread acting while the code under test waits (e.g. a stop request, which
  // then ends the wait at once with no time taken). Set before the code under test runs.
  void SetDuringWait(std::function<void()> during_wait);

 private:
  const SimulatedClockOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  absl::Duration elapsed_ ABSL_GUARDED_BY(mu_);
  int sleepers_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<absl::Duration> sleeps_ ABSL_GUARDED_BY(mu_);
  std::function<void()> during_wait_;
};

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_CLOCK_H_
