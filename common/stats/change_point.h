// One change of level in a sequence of figures: whether there is one by Pettitt's test (Pettitt
// 1979, "A non-parametric approach to the change-point problem", Applied Statistics 28(2)),
// rank-based, so one fast or slow value moves its statistic by at most one step per pair; where
// it is by the split with the least absolute deviations from each side's median (robust as
// medians are, and, unlike Pettitt's own argmax, not pulled toward the middle of the series when
// the new level has only one or two values yet, e.g. the newest warm call). Used on the warm calls of
// one combination and repetition (agent/runner/throughput_drop.h) to name the call where the
// throughput changed, with the level before and after. Pure functions; thread-safe.
#ifndef BENCHFLEET_COMMON_STATS_CHANGE_POINT_H_
#define BENCHFLEET_COMMON_STATS_CHANGE_POINT_H_

#include <cstddef>
#include <optional>
#include <vector>

namespace benchfleet::stats {

// The level a change point is called significant at (p < 0.05).
inline constexpr double kChangePointLevel = 0.05;
// Fewer values than this have no change point to find (one on each side and one to compare).
inline constexpr size_t kMinValuesForChangePoint = 3;

struct ChangePoint {
  // Index of the first value of the new level, 1 .. n-1: the t minimising
  // sum |x[i] - median(x[0, t))| over i < t plus sum |x[i] - median(x[t, n))| over i >= t (the
  // first t on a tie).
  size_t first_after = 0;
  // Pettitt's U(t) = sum over i < t <= j of sign(x[i] - x[j]) at that split: positive when the
  // values before are the larger ones.
  double u = 0;
  // Pettitt's K = max over every split t of |U(t)|: the test's statistic.
  double k = 0;
  // The approximate two-sided p-value 2 exp(-6 K^2 / (n^3 + n^2)), at most 1.
  double p_value = 1;
  // The medians of values[0, first_after) and values[first_after, n).
  double median_before = 0;
  double median_after = 0;
  size_t n = 0;

  bool significant() const { return p_value < kChangePointLevel; }
};

// Returns the most likely single change of level in values (in order); nullopt
// for fewer than kMinValuesForChangePoint values or when every U(t) is 0 (no sign of a change,
// e.g. all values equal).
std::optional<ChangePoint> PettittChangePoint(const std::vector<double>& values);

}  // namespace benchfleet::stats

#endif  // BENCHFLEET_COMMON_STATS_CHANGE_POINT_H_
