// The change point (Pettitt's test, least-absolute-deviations location) against reference values
// computed independently by tests/unit/common/change_point_reference.py (Python 3, 2026-12-02,
// standard library only, no SciPy): U(t) by its double-sum definition
// sum_{i<=t} sum_{j>t} sign(x_i - x_j) (the implementation uses a recurrence instead),
// K = max |U(t)|, p = min(1, 2 exp(-6 K^2 / (n^3 + n^2))) (Pettitt 1979, the approximation of
// section 2.5), the location t minimising the absolute deviations from each side's
// statistics.median (first t on a tie), and the medians either side.
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

TEST(PettittChangePointTest, TheChangeIsWhereEachSidesMedianFitsBest) {
  // Python: U = [2, 2] (|U| ties); absolute deviations 22.6 at t = 1, 0.3 at t = 2: t = 2.
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

TEST(PettittChangePointTest, ANewLevelOfOneCallIsPlacedAtThatCall) {
  // Python: U = [2, 8, 6, 10, 10, 6], K = 10, p = 2 exp(-600/392) = 0.4328062700674268; Pettitt's
  // own argmax would be t = 4; the least deviations are at t = 6 (0.9): 52.85 | 29.1.
  const auto cp = PettittChangePoint({52.9, 53.1, 52.7, 53.0, 52.8, 52.6, 29.1});
  ASSERT_TRUE(cp.has_value());
  EXPECT_EQ(cp->first_after, 6u);
  EXPECT_EQ(cp->u, 6);
  EXPECT_EQ(cp->k, 10);
  EXPECT_NEAR(cp->p_value, 0.4328062700674268, 1e-12);
  EXPECT_NEAR(cp->median_before, 52.85, 1e-12);
  EXPECT_DOUBLE_EQ(cp->median_after, 29.1);
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
  // Python, a fast first call: U = [9, 8, 11, 6, 7, 4, -3, 2, -7], K = 11, p = 1 (capped); the
  // least deviations split off the fast call (t = 1, cost 2.0): 80.0 | 52.9, not significant.
  const auto fast = PettittChangePoint({80.0, 52.9, 53.1, 52.7, 53.0, 52.8, 52.6, 53.2, 52.5, 53.3});
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(fast->first_after, 1u);
  EXPECT_EQ(fast->u, 9);
  EXPECT_DOUBLE_EQ(fast->median_before, 80.0);
  EXPECT_EQ(fast->k, 11);
  EXPECT_EQ(fast->p_value, 1.0);
  EXPECT_FALSE(fast->significant());
  // Python, one slow seventh call: U = [1, 6, 3, 6, 5, 0, -9, -2, -9], K = 9, p = 1; the least
  // deviations at t = 9 (24.4): 52.8 | 53.3. No fall is found: the slow call is noise.
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
