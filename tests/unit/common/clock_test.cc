#include "common/clock.h"

#include <thread>

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

}  // namespace
}  // namespace benchfleet
