// Pettitt's change-point test against reference values computed independently: a Python 3 script
// (tests/unit/common/change_point_reference.py, 2026-12-02, standard library only, no SciPy) evaluating U(t) by its double-sum definition
// sum_{i<=t} sum_{j>t} sign(x_i - x_j), K = max |U(t)| (on a tie of |U|, the t whose medians
// either side differ most, then the first), the approximate
// p = min(1, 2 exp(-6 K^2 / (n^3 + n^2))) (Pettitt 1979, eq. 2.5 and the approximation after it),
// and statistics.median for the levels either side. The implementation uses the recurrence
// U(t) = U(t-1) + sum_j sign(x_t - x_j) instead, so the two computations differ.
#include "common/stats/change_point.h"

#include <gtest/gtest.h>

namespace benchfleet::stats {
namespace {

TEST(PettittChangePointTest, TheSeedsCollapseChangesAtTheThirdCall) {
  // Python: U = [2, 4, 3], t = 2, K = 4, p = 2 exp(-96/80) = 0.6023884238244043, medians 52.9 | 29.1.
  const auto cp = PettittChangePoint({52.9, 52.9, 30.0, 28.2});
  ASSERT_TRUE(cp.has_value());
  EXPECT_EQ(cp->first_after, 2u);
  EXPECT_EQ(cp->u, 4);
  EXPECT_EQ(cp->k, 4);
  EXPECT_NEAR(cp->p_value, 0.6023884238244043, 1e-12);
  EXPECT_DOUBLE_EQ(cp->median_before, 52.9);
  EXPECT_DOUBLE_EQ(cp->median_after, (30.0 + 28.2) / 2);
  EXPECT_EQ(cp->n, 4u);
  // Four calls can never be significant: K is at most 2 x 2 = 4.
  EXPECT_FALSE(cp->significant());
}

TEST(PettittChangePointTest, ThreeValuesGiveACappedPValue) {
  // Python: U = [1, 2], t = 2, K = 2, 2 exp(-24/36) = 1.027 -> capped at 1.
  const auto cp = PettittChangePoint({52.9, 52.9, 30.0});
  ASSERT_TRUE(cp.has_value());
  EXPECT_EQ(cp->first_after, 2u);
  EXPECT_EQ(cp->k, 2);
  EXPECT_EQ(cp->p_value, 1.0);
  EXPECT_DOUBLE_EQ(cp->median_after, 30.0);
}

TEST(PettittChangePointTest, ATieOfUGoesToTheSplitWhoseMediansDifferMost) {
  // Python: U = [2, 2]; t = 1 gives medians 52.9 | 41.3, t = 2 gives 52.75 | 30.0: t = 2.
  const auto cp = PettittChangePoint({52.9, 52.6, 30.0});
  ASSERT_TRUE(cp.has_value());
  EXPECT_EQ(cp->first_after, 2u);
  EXPECT_EQ(cp->u, 2);
  EXPECT_DOUBLE_EQ(cp->median_before, 52.75);
  EXPECT_DOUBLE_EQ(cp->median_after, 30.0);
}

TEST(PettittChangePointTest, AStepInTwelveNoisyCallsIsSignificantAtFivePercent) {
  // Python: U = [7, 18, 21, 30, 35, 36, 31, 20, 19, 10, 3], t = 6, K = 36,
  // p = 2 exp(-7776/1872) = 0.03140780113025614, medians 52.85 | 29.05.
  const auto cp =
      PettittChangePoint({52.9, 53.1, 52.7, 53.0, 52.8, 52.6, 29.1, 28.8, 29.4, 28.9, 29.0, 29.3});
  ASSERT_TRUE(cp.has_value());
  EXPECT_EQ(cp->first_after, 6u);
  EXPECT_EQ(cp->u, 36);
  EXPECT_NEAR(cp->p_value, 0.03140780113025614, 1e-12);
  EXPECT_TRUE(cp->significant());
  EXPECT_NEAR(cp->median_before, 52.85, 1e-12);
  EXPECT_NEAR(cp->median_after, 29.05, 1e-12);
}

TEST(PettittChangePointTest, ARiseHasANegativeU) {
  // Python: t = 8, U = -64, K = 64, p = 2 exp(-24576/4352) = 0.007055755283170262, 20.15 | 40.15.
  const auto cp = PettittChangePoint(
      {20.0, 21.0, 19.5, 20.5, 20.2, 19.8, 20.1, 20.4, 40.0, 41.0, 39.0, 40.5, 40.2, 39.8, 40.1, 40.4});
  ASSERT_TRUE(cp.has_value());
  EXPECT_EQ(cp->first_after, 8u);
  EXPECT_EQ(cp->u, -64);
  EXPECT_NEAR(cp->p_value, 0.007055755283170262, 1e-12);
  EXPECT_TRUE(cp->significant());
  EXPECT_NEAR(cp->median_before, 20.15, 1e-12);
  EXPECT_NEAR(cp->median_after, 40.15, 1e-12);
}

TEST(PettittChangePointTest, OneFastOrSlowOutlierIsNoSignificantChange) {
  // Python, a fast first call: U = [9, 8, 11, 6, 7, 4, -3, 2, -7], t = 3, K = 11, p = 1 (capped).
  const auto fast = PettittChangePoint({80.0, 52.9, 53.1, 52.7, 53.0, 52.8, 52.6, 53.2, 52.5, 53.3});
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(fast->first_after, 3u);
  EXPECT_EQ(fast->k, 11);
  EXPECT_EQ(fast->p_value, 1.0);
  EXPECT_FALSE(fast->significant());
  // Python, one slow seventh call: U = [1, 6, 3, 6, 5, 0, -9, -2, -9], |U| = 9 at t = 7 (medians
  // 52.8 | 53.2) and t = 9 (52.8 | 53.3): t = 9, p = 1. No fall is found: the slow call is noise.
  const auto slow = PettittChangePoint({52.9, 53.1, 52.7, 53.0, 52.8, 52.6, 30.0, 53.2, 52.5, 53.3});
  ASSERT_TRUE(slow.has_value());
  EXPECT_EQ(slow->first_after, 9u);
  EXPECT_EQ(slow->u, -9);
  EXPECT_EQ(slow->p_value, 1.0);
  EXPECT_DOUBLE_EQ(slow->median_before, 52.8);
  EXPECT_DOUBLE_EQ(slow->median_after, 53.3);
}

TEST(PettittChangePointTest, EqualValuesOrTooFewHaveNoChangePoint) {
  EXPECT_FALSE(PettittChangePoint({5, 5, 5, 5}).has_value());
  EXPECT_FALSE(PettittChangePoint({52.9, 30.0}).has_value());
  EXPECT_FALSE(PettittChangePoint({}).has_value());
}

}  // namespace
}  // namespace benchfleet::stats
