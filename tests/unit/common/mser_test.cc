// common/stats/mser: MSER-5's truncation point on simulated request latencies with a known
// warm-up, against values computed independently in Python 3.11 from White's (1997) formula
// (tests/unit/common/mser_reference.py: batch means of 5, a two-pass sum of squares for every d
// in 0..k/2, the smallest d on a tie; no code shared with common/stats/mser.cc).
#include "common/stats/mser.h"

#include <cstdint>

#include <gtest/gtest.h>

namespace benchfleet::stats {
namespace {

// 20 warm-up requests from 3.0 s falling by 0.1 s each, then 80 steady ones at 1.0 s +- 0.05 s in
// a fixed pattern: mser_reference.py's latencies().
std::vector<double> WarmUpThenSteady() {
  std::vector<double> y;
  for (int i = 0; i < 20; ++i) y.push_back(3.0 - 0.1 * i);
  for (int i = 0; i < 80; ++i) y.push_back(1.0 + 0.01 * ((i * 7) % 11 - 5));
  return y;
}

// 20 slow requests (2.0 s plus up to 0.2 s of noise) then 80 steady ones (1.0 s plus up to 0.2 s),
// the noise u = x / 2^31 of the LCG x = (1103515245 x + 12345) mod 2^31 from x = 42.
std::vector<double> NoisyWarmUp() {
  std::vector<double> y;
  uint64_t x = 42;
  for (int i = 0; i < 100; ++i) {
    x = (1103515245 * x + 12345) % (uint64_t{1} << 31);
    y.push_back((i < 20 ? 2.0 : 1.0) + 0.2 * (static_cast<double>(x) / static_cast<double>(uint64_t{1} << 31)));
  }
  return y;
}

TEST(MserTest, TwentySlowThenEightySteadyTruncatesTheTwenty) {
  const std::optional<MserTruncation> t = Mser(WarmUpThenSteady());
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->batches, 20u);
  EXPECT_EQ(t->truncated_batches, 4u);
  EXPECT_EQ(t->truncated, 20u);
  EXPECT_NEAR(t->statistic, 2.959960937499996e-06, 1e-15);  // Python: MSER(4)
  EXPECT_FALSE(t->at_limit);
}

TEST(MserTest, NoisyWarmUpIsFoundToo) {
  const std::vector<double> y = NoisyWarmUp();
  ASSERT_DOUBLE_EQ(y[0], 2.1164615179412065);  // the same draws as Python's
  const std::optional<MserTruncation> t = Mser(y);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->truncated, 20u);
  EXPECT_NEAR(t->statistic, 3.2490685166254064e-05, 1e-15);  // Python: MSER(4); MSER(3) 0.00320, MSER(5) 3.56e-05
}

TEST(MserTest, ASteadySeriesLosesNothing) {
  const std::vector<double> all = WarmUpThenSteady();
  const std::optional<MserTruncation> t = Mser(std::vector<double>(all.begin() + 20, all.end()));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->batches, 16u);
  EXPECT_EQ(t->truncated, 0u);
  EXPECT_NEAR(t->statistic, 2.959960937499996e-06, 1e-15);  // Python: MSER(0) of the 80
}

TEST(MserTest, ASeriesThatNeverSettlesEndsAtTheLimit) {
  // 10 - 0.4 i for 20 observations: Python gives MSER(0..2) = 1.25, 0.888..., 0.5, so d* = k/2.
  std::vector<double> y;
  for (int i = 0; i < 20; ++i) y.push_back(10 - 0.4 * i);
  const std::optional<MserTruncation> t = Mser(y);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->batches, 4u);
  EXPECT_EQ(t->truncated_batches, 2u);
  EXPECT_EQ(t->truncated, 10u);
  EXPECT_NEAR(t->statistic, 0.5, 1e-12);
  EXPECT_TRUE(t->at_limit);
}

TEST(MserTest, TooFewBatchesOrNoBatchSizeGiveNothing) {
  EXPECT_EQ(Mser({}), std::nullopt);
  EXPECT_EQ(Mser(std::vector<double>(19, 1.0)), std::nullopt);  // 3 batches
  EXPECT_EQ(Mser(std::vector<double>(20, 1.0), 0), std::nullopt);
  const std::optional<MserTruncation> flat = Mser(std::vector<double>(20, 1.0));
  ASSERT_TRUE(flat.has_value());
  EXPECT_EQ(flat->truncated, 0u);  // every MSER(d) is 0: the smallest d wins the tie
  EXPECT_EQ(flat->statistic, 0);
}

TEST(MserTest, ATrailingPartialBatchIsNotScored) {
  std::vector<double> y = WarmUpThenSteady();
  y.push_back(50);  // a 101st observation: still 20 batches, the same truncation
  y.push_back(50);
  const std::optional<MserTruncation> t = Mser(y);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->batches, 20u);
  EXPECT_EQ(t->truncated, 20u);
}

}  // namespace
}  // namespace benchfleet::stats
