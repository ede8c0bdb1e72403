#include "agent/uplink/pacer.h"

#include <gtest/gtest.h>

namespace benchfleet::agent {
namespace {

TEST(PacerTest, SpacesRecordsOutByTheClock) {
  SimulatedClock clock;
  Pacer pacer(&clock, 10);  // 10 records/s
  EXPECT_EQ(pacer.Reserve(5), absl::ZeroDuration());
  EXPECT_EQ(pacer.Reserve(5), absl::Milliseconds(500));
  EXPECT_EQ(pacer.Reserve(1), absl::Seconds(1));
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(pacer.Reserve(1), absl::Milliseconds(100));
}

TEST(PacerTest, IdleTimeIsNotSavedUp) {
  SimulatedClock clock;
  Pacer pacer(&clock, 2);
  EXPECT_EQ(pacer.Reserve(1), absl::ZeroDuration());
  clock.Advance(absl::Hours(1));
  EXPECT_EQ(pacer.Reserve(4), absl::ZeroDuration());
  EXPECT_EQ(pacer.Reserve(1), absl::Seconds(2));
}

TEST(PacerTest, UnlimitedNeverWaits) {
  SimulatedClock clock;
  Pacer pacer(&clock, 0);
  EXPECT_FALSE(pacer.limited());
  EXPECT_EQ(pacer.Reserve(1'000'000), absl::ZeroDuration());
  EXPECT_EQ(pacer.BatchLimit(256), 256u);
}

TEST(PacerTest, BatchesAreAQuarterSecondOfRecords) {
  SimulatedClock clock;
  EXPECT_EQ(Pacer(&clock, 100).BatchLimit(256), 25u);
  EXPECT_EQ(Pacer(&clock, 2).BatchLimit(256), 1u);
  EXPECT_EQ(Pacer(&clock, 1e6).BatchLimit(256), 256u);
}

}  // namespace
}  // namespace benchfleet::agent
