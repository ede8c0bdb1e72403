// common/stats/spread: median, coefficient of variation and the bootstrap interval of the median,
// against values computed independently in Python 3.11 (statistics.median, statistics.stdev and a
// separate implementation of the same splitmix64 percentile bootstrap, written from the header).
#include "common/stats/spread.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace benchfleet::stats {
namespace {

const std::vector<double> kTen = {41.0, 42.5, 40.2, 43.1, 41.7, 39.8, 44.0, 42.2, 40.9, 41.3};

TEST(SplitMix64Test, SeededWithZeroGivesTheReferenceSequence) {
  // Reference: Vigna's splitmix64.c seeded with 0 (the same first value in Python).
  uint64_t state = 0;
  EXPECT_EQ(SplitMix64(state), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(SplitMix64(state), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(SplitMix64(state), 0x06c45d188009454fULL);
}

TEST(SpreadTest, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({52.9, 52.9, 30.0, 28.2}), (30.0 + 52.9) / 2);
  EXPECT_EQ(Median(kTen), 41.5);  // statistics.median
  EXPECT_EQ(Median({}), std::nullopt);
}

TEST(SpreadTest, MedianBySelectionEqualsTheMiddleOfTheSortedValues) {
  // Median selects (nth_element) rather than sorts: the same value as the sorted definition, for
  // odd and even counts, with ties, exactly.
  uint64_t state = 7;
  for (size_t n = 1; n <= 40; ++n) {
    std::vector<double> values(n);
    for (double& v : values) v = static_cast<double>(SplitMix64(state) % 16) / 4;  // many ties
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    const double expected = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    EXPECT_EQ(Median(values), expected) << "n=" << n;
  }
}

TEST(SpreadTest, CoefficientOfVariationIsTheSampleDeviationOverTheMean) {
  // statistics.stdev(kTen) / statistics.mean(kTen) = 0.03127023411065691
  EXPECT_NEAR(*CoefficientOfVariation(kTen), 0.03127023411065691, 1e-12);
  EXPECT_NEAR(*CoefficientOfVariation({41.0, 42.5, 40.2, 43.1, 41.7}), 0.027707961650578747, 1e-12);
  EXPECT_EQ(CoefficientOfVariation({5}), std::nullopt);
  EXPECT_EQ(CoefficientOfVariation({0, 0}), std::nullopt);
}

TEST(SpreadTest, BootstrapIntervalOfTheMedianMatchesTheIndependentComputation) {
  // Python, seed 20261202, 2,000 resamples, 95%: (40.6, 42.650000000000006)
  const std::optional<Interval> interval = BootstrapMedianInterval(kTen);
  ASSERT_TRUE(interval.has_value());
  EXPECT_DOUBLE_EQ(interval->low, 40.6);
  EXPECT_DOUBLE_EQ(interval->high, 42.65);
  EXPECT_EQ(interval->level, 0.95);
  // Python, seed 7, 500 resamples, 90%: (40.9, 42.35)
  const std::optional<Interval> other = BootstrapMedianInterval(kTen, 0.9, 500, 7);
  ASSERT_TRUE(other.has_value());
  EXPECT_DOUBLE_EQ(other->low, 40.9);
  EXPECT_DOUBLE_EQ(other->high, 42.35);
  // The seed's collapsing GPU: Python gives (28.2, 52.9).
  const std::optional<Interval> collapse = BootstrapMedianInterval({52.9, 52.9, 30.0, 28.2});
  ASSERT_TRUE(collapse.has_value());
  EXPECT_EQ(collapse->low, 28.2);
  EXPECT_EQ(collapse->high, 52.9);
}

TEST(SpreadTest, TheSameFiguresAlwaysGiveTheSameInterval) {
  const Interval a = *BootstrapMedianInterval(kTen);
  const Interval b = *BootstrapMedianInterval(kTen);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
}

TEST(SpreadTest, NoIntervalFromFewerThanTwoFiguresOrABadLevel) {
  EXPECT_EQ(BootstrapMedianInterval({}), std::nullopt);
  EXPECT_EQ(BootstrapMedianInterval({1.0}), std::nullopt);
  EXPECT_EQ(BootstrapMedianInterval(kTen, 1.0), std::nullopt);
  EXPECT_EQ(BootstrapMedianInterval(kTen, 0.95, 0), std::nullopt);
}

}  // namespace
}  // namespace benchfleet::stats
