// common/stats/mann_whitney: U and the two-sided p-value against references computed
// independently in Python 3.11 (no SciPy): exact p-values by enumerating every split of the pooled
// values with itertools.combinations (midranks as fractions.Fraction) and counting the splits whose
// rank sum lies at least as far from its mean; the normal approximation from the textbook formula
// with math.erfc.
#include "common/stats/mann_whitney.h"

#include <cmath>

#include <gtest/gtest.h>

namespace benchfleet::stats {
namespace {

TEST(MannWhitneyTest, CompleteSeparationOfThreeAgainstFiveIsTheSmallestPValue) {
  // Reference: enumeration, 2 of C(8, 3) = 56 splits as extreme: p = 0.03571428571428571, U = 0.
  const auto r = MannWhitneyU({1, 2, 3}, {4, 5, 6, 7, 8});
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->u, 0);
  EXPECT_NEAR(r->p_value, 0.03571428571428571, 1e-15);
  EXPECT_TRUE(r->exact);
  EXPECT_NEAR(SmallestPValue(3, 5), 2.0 / 56, 1e-15);
  // The other way round: the same p, U = n1 n2.
  const auto swapped = MannWhitneyU({4, 5, 6, 7, 8}, {1, 2, 3});
  EXPECT_DOUBLE_EQ(swapped->u, 15);
  EXPECT_NEAR(swapped->p_value, 0.03571428571428571, 1e-15);
}

TEST(MannWhitneyTest, InterleavedSamplesAreNotSignificant) {
  // Reference: enumeration, 52 of 126 splits: p = 0.4126984126984127, U = 6.
  const auto r = MannWhitneyU({1, 3, 5, 7}, {2, 4, 6, 8, 10});
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->u, 6);
  EXPECT_NEAR(r->p_value, 0.4126984126984127, 1e-15);
}

TEST(MannWhitneyTest, TiesTakeMidranksInTheExactDistribution) {
  // Reference: enumeration with midranks (49.0 in both samples, 48.6 and 52.9 twice), 5 of 126
  // splits: p = 0.03968253968253968, U = 1.5.
  const auto r = MannWhitneyU({48.6, 48.6, 49.0, 50.1}, {52.9, 52.9, 49.0, 51.0, 53.0});
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->u, 1.5);
  EXPECT_NEAR(r->p_value, 0.03968253968253968, 1e-15);
  // Every value equal: every split is as extreme, p = 1 (35 of 35), U = n1 n2 / 2.
  const auto equal = MannWhitneyU({5, 5, 5}, {5, 5, 5, 5});
  EXPECT_DOUBLE_EQ(equal->u, 6);
  EXPECT_DOUBLE_EQ(equal->p_value, 1);
}

TEST(MannWhitneyTest, SmallSamplesCanNeverBeSignificantAtFivePercent) {
  // Reference: enumeration, 2 of C(7, 2) = 21 splits (p = 0.09523809523809523) and 2 of
  // C(6, 1) = 6 (p = 0.3333333333333333): complete separation, still above 0.05.
  EXPECT_NEAR(MannWhitneyU({40, 41}, {50, 51, 52, 53, 54})->p_value, 0.09523809523809523, 1e-15);
  EXPECT_NEAR(MannWhitneyU({40}, {50, 51, 52, 53, 54})->p_value, 0.3333333333333333, 1e-15);
  EXPECT_NEAR(SmallestPValue(2, 5), 2.0 / 21, 1e-15);
  EXPECT_NEAR(SmallestPValue(1, 5), 1.0 / 3, 1e-15);
  EXPECT_NEAR(SmallestPValue(3, 3), 0.1, 1e-15);  // 2 / C(6, 3) = 2 / 20
  EXPECT_DOUBLE_EQ(SmallestPValue(1, 1), 1);      // 2 / C(2, 1) = 1
  EXPECT_DOUBLE_EQ(SmallestPValue(0, 5), 1);
}

TEST(MannWhitneyTest, EightAgainstTenExactly) {
  // Reference: enumeration, 90 of C(18, 8) = 43758 splits: p = 0.0020567667626491155, U = 7.
  const auto r = MannWhitneyU({12.1, 11.4, 13.0, 10.9, 12.7, 11.8, 12.2, 13.5},
                              {13.1, 14.0, 12.9, 13.8, 14.4, 12.5, 13.3, 15.1, 13.9, 14.2});
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->u, 7);
  EXPECT_NEAR(r->p_value, 0.0020567667626491155, 1e-15);
  EXPECT_TRUE(r->exact);
}

TEST(MannWhitneyTest, LargeSamplesUseTheNormalApproximationWithTieAndContinuityCorrections) {
  // 30 against 30 (60 > kMaxExactPooled), with ties (50.51, 50.39, 50.31, 50.19 and 50.89 appear twice).
  // Reference: z = (|U - n1 n2 / 2| - 0.5) / sqrt(n1 n2 / 12 ((N + 1) - sum(t^3 - t) / (N (N - 1)))),
  // p = math.erfc(z / sqrt(2)) = 0.0007487324931115378, U = 221.5 (midranks by Fraction).
  const std::vector<double> x = {49.74, 50.51, 49.77, 49.68, 49.07, 49.79, 51.11, 50.42, 51.04, 50.25,
                                 50.39, 50.19, 48.33, 50.86, 50.51, 50.5,  48.31, 48.26, 49.11, 49.53,
                                 50.31, 49.95, 50.52, 49.36, 50.31, 50.39, 49.34, 51.72, 50.56, 51.2};
  const std::vector<double> y = {50.38, 50.26, 50.66, 50.89, 51.63, 51.25, 50.55, 50.04, 50.48, 52.22,
                                 50.19, 51.24, 51.43, 49.51, 51.05, 52.31, 48.99, 50.68, 50.89, 50.18,
                                 51.5,  50.94, 49.54, 51.83, 51.67, 51.95, 52.44, 51.36, 51.12, 49.7};
  const auto r = MannWhitneyU(x, y);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->exact);
  EXPECT_DOUBLE_EQ(r->u, 221.5);
  EXPECT_NEAR(r->p_value, 0.0007487324931115378, 1e-12);
}

TEST(MannWhitneyTest, NoTestWithoutValuesOnBothSidesOrWithANonFiniteOne) {
  const std::vector<double> none;
  EXPECT_FALSE(MannWhitneyU(none, {1, 2}).has_value());
  EXPECT_FALSE(MannWhitneyU({1, 2}, none).has_value());
  EXPECT_FALSE(MannWhitneyU({1, std::nan("")}, {2, 3}).has_value());
}

}  // namespace
}  // namespace benchfleet::stats
