// The Mann-Whitney U test (Wilcoxon rank-sum) of two independent samples, two-sided: is one
// sample's level shifted from the other's? Used by the coordinator's regression verdicts (a
// series' warm calls against the earlier runs of the same point). Exact permutation distribution
// (ties as midranks) up to kMaxExactPooled values in all, else the normal approximation with tie
// and continuity corrections. Pure functions; thread-safe.
#ifndef BENCHFLEET_COMMON_STATS_MANN_WHITNEY_H_
#define BENCHFLEET_COMMON_STATS_MANN_WHITNEY_H_

#include <optional>
#include <vector>

namespace benchfleet::stats {

// Up to this many values in both samples together the p-value is exact (the count of every split
// of the pooled values, about 3 million steps at 50); above it the normal approximation.
inline constexpr int kMaxExactPooled = 50;

struct MannWhitneyResult {
  // U of the first sample: the pairs (x, y) with x > y, plus half the pairs with x == y.
  double u = 0;
  // Two-sided: the probability, under the hypothesis that both samples come from one
  // distribution, of a rank sum of the first sample at least as far from its mean as the one seen.
  double p_value = 1;
  bool exact = false;  // exact permutation distribution (true) or normal approximation
};

// Returns the test of `x` against `y`; nullopt when either is empty or holds a value that is not
// finite.
std::optional<MannWhitneyResult> MannWhitneyU(const std::vector<double>& x, const std::vector<double>& y);

// Returns the smallest two-sided p-value that samples of n1 and n2 distinct values can give
// (complete separation: 2 / C(n1 + n2, n1), at most 1): when it is not below the level, no
// outcome can be significant. 1 when either count is 0.
double SmallestPValue(int n1, int n2);

}  // namespace benchfleet::stats

#endif  // BENCHFLEET_COMMON_STATS_MANN_WHITNEY_H_
