#include "common/clock.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/time/clock.h"

namespace benchfleet {
namespace {

class RealClock : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
  absl::Duration Monotonic() override {
    return absl::FromChrono(std::chrono::steady_clock::now().time_since_epoch());
  }
  void SleepFor(absl::Duration d) override { absl::SleepFor(d); }

  bool WaitForStop(const std::stop_token& stop, absl::Duration d) override {
    if (!stop.stop_possible()) {
      SleepFor(d);
      return false;
    }
    // condition_variable_any wakes when stop is requested (it registers a stop_callback). Waited in
    // slices of at most an hour so that a huge d cannot overflow the steady clock's time point.
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock<std::mutex> lock(mu);
    absl::Duration left = d;
    while (left > absl::ZeroDuration() && !stop.stop_requested()) {
      const auto start = std::chrono::steady_clock::now();
      cv.wait_for(lock, stop, absl::ToChronoNanoseconds(std::min(left, absl::Hours(1))), [] { return false; });
      left -= absl::FromChrono(std::chrono::steady_clock::now() - start);
    }
    return stop.stop_requested();
  }
};

}  // namespace

bool Clock::WaitForStop(const std::stop_token& stop, absl::Duration d) {
  if (!stop.stop_possible()) {
    SleepFor(d);
    return false;
  }
  for (absl::Duration left = d; left > absl::ZeroDuration(); left -= kStopPollSlice) {
    if (stop.stop_requested()) return true;
    SleepFor(std::min(left, kStopPollSlice));
  }
  return stop.stop_requested();
}

Clock& SystemClock() {
  static RealClock* clock = new RealClock();
  return *clock;
}

SimulatedClock::SimulatedClock(absl::Time start) : SimulatedClock(SimulatedClockOptions{.start = start}) {}

SimulatedClock::SimulatedClock(SimulatedClockOptions options) : options_(options), elapsed_(absl::ZeroDuration()) {}

absl::Time SimulatedClock::Now() {
  std::lock_guard<std::mutex> lock(mu_);
  return options_.start + elapsed_;
}

absl::Duration SimulatedClock::Monotonic() {
  std::lock_guard<std::mutex> lock(mu_);
  elapsed_ += options_.step_per_reading;
  return elapsed_;
}

void SimulatedClock::SleepFor(absl::Duration d) {
  if (options_.sleeps_advance) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      sleeps_.push_back(d);
      elapsed_ += d;
    }
    std::this_thread::yield();  // other threads of the test make progress between paced steps
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  const absl::Duration deadline = elapsed_ + d;
  ++sleepers_;
  cv_.notify_all();
  cv_.wait(lock, [&] { return elapsed_ >= deadline; });
  --sleepers_;
}

bool SimulatedClock::WaitForStop(const std::stop_token& stop, absl::Duration d) {
  if (options_.sleeps_advance) {
    if (during_wait_) during_wait_();
    if (stop.stop_requested()) return true;
    SleepFor(d);
    return stop.stop_requested();
  }
  // Registered before the lock is taken: a stop requested already runs the callback right here.
  std::stop_callback wake(stop, [this] {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu_);
  const absl::Duration deadline = elapsed_ + d;
  ++sleepers_;
  cv_.notify_all();
  cv_.wait(lock, [&] { return elapsed_ >= deadline || stop.stop_requested(); });
  --sleepers_;
  return stop.stop_requested();
}

void SimulatedClock::Advance(absl::Duration d) {
  std::lock_guard<std::mutex> lock(mu_);
  elapsed_ += d;
  cv_.notify_all();
}

int SimulatedClock::sleepers() {
  std::lock_guard<std::mutex> lock(mu_);
  return sleepers_;
}

std::vector<absl::Duration> SimulatedClock::sleeps() {
  std::lock_guard<std::mutex> lock(mu_);
  return sleeps_;
}

absl::Duration SimulatedClock::slept() {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Duration total;
  for (const absl::Duration d : sleeps_) total += d;
  return total;
}

void SimulatedClock::SetDuringWait(std::function<void()> during_wait) { during_wait_ = std::move(during_wait); }

}  // namespace benchfleet
