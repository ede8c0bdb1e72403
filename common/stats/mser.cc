#include "common/stats/mser.h"

namespace benchfleet::stats {

std::optional<MserTruncation> Mser(const std::vector<double>& observations, size_t batch_size) {
  if (batch_size == 0) return std::nullopt;
  const size_t k = observations.size() / batch_size;
  if (k < kMserMinBatches) return std::nullopt;
  std::vector<double> z(k);
  for (size_t j = 0; j < k; ++j) {
    double sum = 0;
    for (size_t i = 0; i < batch_size; ++i) sum += observations[j * batch_size + i];
    z[j] = sum / static_cast<double>(batch_size);
  }
  // The sums of squared deviations of every suffix Z_{d+1..k}, from the last batch backwards by
  // Welford's update: one pass, without the cancellation of sum(x^2) - n mean^2.
  const size_t limit = k / 2;
  std::vector<double> squares(limit + 1);
  double mean = 0, m2 = 0;
  for (size_t j = k; j-- > 0;) {
    const double count = static_cast<double>(k - j);
    const double delta = z[j] - mean;
    mean += delta / count;
    m2 += delta * (z[j] - mean);
    if (j <= limit) squares[j] = m2;
  }
  MserTruncation best;
  best.batches = k;
  for (size_t d = 0; d <= limit; ++d) {
    const double left = static_cast<double>(k - d);
    const double statistic = squares[d] / (left * left);
    if (d == 0 || statistic < best.statistic) {
      best.truncated_batches = d;
      best.statistic = statistic;
    }
  }
  best.truncated = best.truncated_batches * batch_size;
  best.at_limit = best.truncated_batches == limit;
  return best;
}

}  // namespace benchfleet::stats
