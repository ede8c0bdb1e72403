#include "agent/uplink/backoff.h"

#include <gtest/gtest.h>

#include <vector>

namespace benchfleet::agent {
namespace {

std::vector<int64_t> Millis(Backoff& backoff, int n) {
  std::vector<int64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(absl::ToInt64Milliseconds(backoff.Next()));
  return out;
}

TEST(BackoffTest, CeilingDoublesFrom200msUpTo30s) {
  Backoff backoff(BackoffPolicy{}, [] { return 1.0; });
  EXPECT_EQ(Millis(backoff, 10),
            (std::vector<int64_t>{200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000}));
  EXPECT_EQ(backoff.Ceiling(60), absl::Seconds(30));
}

TEST(BackoffTest, FullJitterDrawsBetweenZeroAndTheCeiling) {
  std::vector<double> draws = {0.5, 0.0, 0.25};
  size_t i = 0;
  Backoff backoff(BackoffPolicy{}, [&] { return draws[i++]; });
  EXPECT_EQ(Millis(backoff, 3), (std::vector<int64_t>{100, 0, 200}));
}

TEST(BackoffTest, RandomDrawsStayUnderTheCeiling) {
  Backoff backoff(BackoffPolicy{});
  for (int attempt = 0; attempt < 40; ++attempt) {
    const absl::Duration ceiling = backoff.Ceiling(attempt);
    const absl::Duration d = backoff.Next();
    EXPECT_GE(d, absl::ZeroDuration());
    EXPECT_LE(d, ceiling);
  }
}

TEST(BackoffTest, ResetStartsOver) {
  Backoff backoff(BackoffPolicy{.base = absl::Milliseconds(10), .cap = absl::Seconds(1)}, [] { return 1.0; });
  Millis(backoff, 5);
  EXPECT_EQ(backoff.attempt(), 5);
  backoff.Reset();
  EXPECT_EQ(Millis(backoff, 2), (std::vector<int64_t>{10, 20}));
}

}  // namespace
}  // namespace benchfleet::agent
