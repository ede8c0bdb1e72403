#include "common/stats/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <numeric>

namespace benchfleet::stats {
namespace {

// Twice the midrank of every pooled value (x first, then y): integers, so that the exact
// distribution counts rank sums without rounding.
std::vector<int64_t> DoubledMidranks(const std::vector<double>& pooled) {
  std::vector<size_t> order(pooled.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pooled[a] < pooled[b]; });
  std::vector<int64_t> ranks(pooled.size());
  size_t i = 0;
  while (i < order.size()) {
    size_t j = i;
    while (j < order.size() && pooled[order[j]] == pooled[order[i]]) ++j;
    // Ranks i+1 .. j share their mean, (i + 1 + j) / 2; doubled: i + 1 + j.
    for (size_t k = i; k < j; ++k) ranks[order[k]] = static_cast<int64_t>(i + 1 + j);
    i = j;
  }
  return ranks;
}

// The exact two-sided p-value: of the C(N, n1) ways to choose n1 of the pooled ranks, the share
// whose doubled sum lies at least as far from its mean as `observed`. count[k][s] is the number of
// ways to choose k of the ranks seen so far with doubled sum s (a double holds C(50, 25) exactly).
double ExactPValue(const std::vector<int64_t>& ranks, int n1, int64_t observed) {
  const int n = static_cast<int>(ranks.size());
  const int64_t max_sum = std::accumulate(ranks.begin(), ranks.end(), int64_t{0});
  std::vector<std::vector<double>> count(n1 + 1, std::vector<double>(max_sum + 1, 0));
  count[0][0] = 1;
  for (int i = 0; i < n; ++i) {
    const int64_t r = ranks[i];
    for (int k = std::min(i + 1, n1); k >= 1; --k) {
      for (int64_t s = max_sum; s >= r; --s) count[k][s] += count[k - 1][s - r];
    }
  }
  const int64_t mean = static_cast<int64_t>(n1) * (n + 1);  // doubled: n1 (N + 1) / 2 * 2
  const int64_t distance = std::llabs(observed - mean);
  double total = 0, extreme = 0;
  for (int64_t s = 0; s <= max_sum; ++s) {
    total += count[n1][s];
    if (std::llabs(s - mean) >= distance) extreme += count[n1][s];
  }
  return std::min(1.0, extreme / total);
}

// The normal approximation: z = (|U - n1 n2 / 2| - 1/2) / sigma, sigma with the tie correction.
double NormalPValue(const std::vector<double>& pooled, int n1, int n2, double u) {
  const double n = n1 + n2;
  std::vector<double> sorted = pooled;
  std::sort(sorted.begin(), sorted.end());
  double ties = 0;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    const double t = static_cast<double>(j - i);
    ties += t * t * t - t;
    i = j;
  }
  const double variance = n1 * static_cast<double>(n2) / 12 * ((n + 1) - ties / (n * (n - 1)));
  if (variance <= 0) return 1;
  const double z = std::max(0.0, std::fabs(u - n1 * static_cast<double>(n2) / 2) - 0.5) / std::sqrt(variance);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

}  // namespace

std::optional<MannWhitneyResult> MannWhitneyU(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.empty() || y.empty()) return std::nullopt;
  std::vector<double> pooled = x;
  pooled.insert(pooled.end(), y.begin(), y.end());
  if (!std::all_of(pooled.begin(), pooled.end(), [](double v) { return std::isfinite(v); })) return std::nullopt;
  const int n1 = static_cast<int>(x.size());
  const int n2 = static_cast<int>(y.size());
  const std::vector<int64_t> ranks = DoubledMidranks(pooled);
  const int64_t doubled_sum = std::accumulate(ranks.begin(), ranks.begin() + n1, int64_t{0});
  MannWhitneyResult result;
  result.u = static_cast<double>(doubled_sum) / 2 - n1 * (n1 + 1) / 2.0;
  result.exact = n1 + n2 <= kMaxExactPooled;
  result.p_value = result.exact ? ExactPValue(ranks, n1, doubled_sum) : NormalPValue(pooled, n1, n2, result.u);
  return result;
}

double SmallestPValue(int n1, int n2) {
  if (n1 <= 0 || n2 <= 0) return 1;
  // C(n1 + n2, n1) as a double: exact far past any sample this is asked about.
  double combinations = 1;
  const int k = std::min(n1, n2);
  for (int i = 1; i <= k; ++i) combinations = combinations * (n1 + n2 - k + i) / i;
  return std::min(1.0, 2 / combinations);
}

}  // namespace benchfleet::stats
