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
  ChangePoint best;
  best.n = n;
  for (size_t t = 1; t < n; ++t) {
    for (size_t j = 0; j < n; ++j) u += Sign(values[t - 1] - values[j]);
    if (std::fabs(u) > best.k) {
      best.k = std::fabs(u);
      best.u = u;
      best.first_after = t;
    }
  }
  if (best.k == 0) return std::nullopt;
  const double nd = static_cast<double>(n);
  best.p_value = std::min(1.0, 2 * std::exp(-6 * best.k * best.k / (nd * nd * nd + nd * nd)));
  best.median_before = *Median(std::vector<double>(values.begin(), values.begin() + best.first_after));
  best.median_after = *Median(std::vector<double>(values.begin() + best.first_after, values.end()));
  return best;
}

}  // namespace benchfleet::stats
