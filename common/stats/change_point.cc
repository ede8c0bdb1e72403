#include "common/stats/change_point.h"

#include <algorithm>
#include <cmath>

#include "common/stats/spread.h"

namespace benchfleet::stats {
namespace {

int Sign(double d) { return d > 0 ? 1 : d < 0 ? -1 : 0; }

double AbsoluteDeviations(const std::vector<double>& values, double center) {
  double sum = 0;
  for (double v : values) sum += std::fabs(v - center);
  return sum;
}

}  // namespace

std::optional<ChangePoint> PettittChangePoint(const std::vector<double>& values) {
  const size_t n = values.size();
  if (n < kMinValuesForChangePoint) return std::nullopt;
  // U(t) = U(t-1) + sum over j of sign(x[t] - x[j]) (Pettitt's recurrence, t 1-based): the
  // pairs with x[t] on the left side are added, those with it on the right removed.
  double u = 0;
  std::vector<double> us;
  double k = 0;
  for (size_t t = 1; t < n; ++t) {
    for (size_t j = 0; j < n; ++j) u += Sign(values[t - 1] - values[j]);
    us.push_back(u);
    k = std::max(k, std::fabs(u));
  }
  if (k == 0) return std::nullopt;
  ChangePoint best;
  best.n = n;
  best.k = k;
  // The location: the split with the least sum of absolute deviations from each side's median.
  double best_cost = 0;
  for (size_t t = 1; t < n; ++t) {
    const std::vector<double> before(values.begin(), values.begin() + t);
    const std::vector<double> after(values.begin() + t, values.end());
    const double median_before = *Median(before);
    const double median_after = *Median(after);
    const double cost = AbsoluteDeviations(before, median_before) + AbsoluteDeviations(after, median_after);
    if (t > 1 && cost >= best_cost) continue;
    best_cost = cost;
    best.first_after = t;
    best.u = us[t - 1];
    best.median_before = median_before;
    best.median_after = median_after;
  }
  const double nd = static_cast<double>(n);
  best.p_value = std::min(1.0, 2 * std::exp(-6 * k * k / (nd * nd * nd + nd * nd)));
  return best;
}

}  // namespace benchfleet::stats
