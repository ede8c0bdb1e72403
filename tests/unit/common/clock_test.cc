#include "common/clock.h"

#include <atomic>
#include <chrono>
#include <stop_token>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace benchfleet {
namespace {

TEST(SimulatedClockTest, AdvanceMovesWallAndMonotonicTogether) {
  SimulatedClock clock(absl::FromUnixSeconds(1000));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(1000));
  EXPECT_EQ(clock.Monotonic(), absl::ZeroDuration());
  clock.Advance(absl::Seconds(3));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(1003));
  EXPECT_EQ(clock.Monotonic(), absl::Seconds(3));
}

TEST(SimulatedClockTest, SleepReturnsOnlyOnceTheClockPassedTheDeadline) {
  SimulatedClock clock;
  std::atomic<bool> woke{false};
  std::thread sleeper([&] {
    clock.SleepFor(absl::Seconds(10));
    woke = true;
  });
  while (clock.sleepers() == 0) std::this_thread::yield();
  clock.Advance(absl::Seconds(9));
  EXPECT_FALSE(woke.load());
  EXPECT_EQ(clock.sleepers(), 1);
  clock.Advance(absl::Seconds(1));
  sleeper.join();
  EXPECT_TRUE(woke.load());
}

TEST(SimulatedClockTest, AStopEndsAWaitAtTheSameSimulatedInstant) {
  SimulatedClock clock;
  std::stop_source stop;
  const absl::Time before = clock.Now();
  std::atomic<int> result{-1};
  std::thread waiter([&] { result = clock.WaitForStop(stop.get_token(), absl::Hours(24)) ? 1 : 0; });
  while (clock.sleepers() == 0) std::this_thread::yield();
  clock.Advance(absl::Hours(23));
  EXPECT_EQ(result.load(), -1);
  stop.request_stop();
  waiter.join();
  EXPECT_EQ(result.load(), 1);  // stopped, not timed out
  EXPECT_EQ(clock.Now(), before + absl::Hours(23));
  EXPECT_EQ(clock.sleepers(), 0);
}

TEST(SimulatedClockTest, AWaitWithoutAStopEndsAtItsDeadline) {
  SimulatedClock clock;
  std::stop_source stop;
  std::atomic<int> result{-1};
  std::thread waiter([&] { result = clock.WaitForStop(stop.get_token(), absl::Seconds(5)) ? 1 : 0; });
  while (clock.sleepers() == 0) std::this_thread::yield();
  clock.Advance(absl::Seconds(5));
  waiter.join();
  EXPECT_EQ(result.load(), 0);
}

TEST(SimulatedClockTest, AStopRequestedBeforeTheWaitReturnsAtOnce) {
  SimulatedClock clock;
  std::stop_source stop;
  stop.request_stop();
  EXPECT_TRUE(clock.WaitForStop(stop.get_token(), absl::Hours(24)));
  EXPECT_EQ(clock.Monotonic(), absl::ZeroDuration());
}

TEST(SystemClockTest, AStopEndsARealWaitOfADayAtOnce) {
  std::stop_source stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a real clock: real time
    stop.request_stop();
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(SystemClock().WaitForStop(stop.get_token(), absl::Hours(24)));
  const auto waited = std::chrono::steady_clock::now() - start;
  stopper.join();
  EXPECT_LT(waited, std::chrono::seconds(5));
}

TEST(SimulatedClockTest, WithSleepsAdvanceAWaitMovesTheClockAtOnceAndIsNoted) {
  SimulatedClock clock({.sleeps_advance = true});
  const absl::Time start = clock.Now();
  clock.SleepFor(absl::Seconds(2));  // returns at once: nothing else would advance the clock
  std::stop_source stop;
  EXPECT_FALSE(clock.WaitForStop(stop.get_token(), absl::Milliseconds(500)));
  EXPECT_EQ(clock.Now(), start + absl::Milliseconds(2500));
  EXPECT_EQ(clock.Monotonic(), absl::Milliseconds(2500));
  EXPECT_EQ(clock.sleeps(), (std::vector<absl::Duration>{absl::Seconds(2), absl::Milliseconds(500)}));
  EXPECT_EQ(clock.slept(), absl::Milliseconds(2500));
  // A stop requested while the code under test waits (another thread, in a real program) ends the
  // wait with no time taken.
  clock.SetDuringWait([&] { stop.request_stop(); });
  EXPECT_TRUE(clock.WaitForStop(stop.get_token(), absl::Hours(1)));
  EXPECT_EQ(clock.slept(), absl::Milliseconds(2500));
}

TEST(SimulatedClockTest, EachMonotonicReadingCanMoveTheClockOneStep) {
  SimulatedClock clock({.step_per_reading = absl::Milliseconds(1)});
  const absl::Time start = clock.Now();
  EXPECT_EQ(clock.Monotonic(), absl::Milliseconds(1));
  EXPECT_EQ(clock.Monotonic(), absl::Milliseconds(2));
  EXPECT_EQ(clock.Now(), start + absl::Milliseconds(2));  // reading the wall time moves nothing
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(clock.Monotonic(), absl::Milliseconds(1003));
}

TEST(SystemClockTest, AWaitWithoutAStopTakesItsDuration) {
  std::stop_source stop;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(SystemClock().WaitForStop(stop.get_token(), absl::Milliseconds(30)));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(30));
}

}  // namespace
}  // namespace benchfleet
