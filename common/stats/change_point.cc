#include "common/stats/change_point.h"

#include <algorithm>
#include <cmath>

#include "common/stats/spread.h"

namespace benchfleet::stats {
namespace {

int Sign(double d) { return d > 0 ? 1 : d < 0 ? -1 : 0; }

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
  double best_gap = -1;
  for (size_t t = 1; t < n; ++t) {
    if (std::fabs(us[t - 1]) != k) continue;
    const double before = *Median(std::vector<double>(values.begin(), values.begin() + t));
    const double after = *Median(std::vector<double>(values.begin() + t, values.end()));
    if (std::fabs(before - after) <= best_gap) continue;
    best_gap = std::fabs(before - after);
    best.first_after = t;
    best.u = us[t - 1];
    best.median_before = before;
    best.median_after = after;
  }
  const double nd = static_cast<double>(n);
  best.p_value = std::min(1.0, 2 * std::exp(-6 * k * k / (nd * nd * nd + nd * nd)));
  return best;
}

}  // namespace benchfleet::stats
