#include "common/clock.h"

#include <chrono>
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
};

}  // namespace

Clock& SystemClock() {
  static RealClock* clock = new RealClock();
  return *clock;
}

SimulatedClock::SimulatedClock(absl::Time start) : elapsed_(absl::ZeroDuration()), start_(start) {}

absl::Time SimulatedClock::Now() {
  std::lock_guard<std::mutex> lock(mu_);
  return start_ + elapsed_;
}

absl::Duration SimulatedClock::Monotonic() {
  std::lock_guard<std::mutex> lock(mu_);
  return elapsed_;
}

void SimulatedClock::SleepFor(absl::Duration d) {
  std::unique_lock<std::mutex> lock(mu_);
  const absl::Duration deadline = elapsed_ + d;
  ++sleepers_;
  cv_.notify_all();
  cv_.wait(lock, [&] { return elapsed_ >= deadline; });
  --sleepers_;
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

}  // namespace benchfleet
