// The warm-up transient of a sequence of observations by MSER-m (White 1997; MSER-5 with batches
// of 5, Spratt 1998): the truncation point that minimises the marginal standard error of the mean
// of what is left. The steady-state figures of a serving run (agent/runner/steady_state.h) are
// those of the requests after it. Pure functions; thread-safe.
#ifndef BENCHFLEET_COMMON_STATS_MSER_H_
#define BENCHFLEET_COMMON_STATS_MSER_H_

#include <cstddef>
#include <optional>
#include <vector>

namespace benchfleet::stats {

// MSER-5: batch means of 5 observations.
inline constexpr size_t kMserBatchSize = 5;
// Fewer batches than this give no truncation point: with 2 or 3 the statistic is nearly always
// smallest at the half-way limit, which says nothing about a warm-up.
inline constexpr size_t kMserMinBatches = 4;

struct MserTruncation {
  size_t batches = 0;            // k = floor(n / batch_size); a trailing partial batch is not scored
  size_t truncated_batches = 0;  // d*, the first d* batches are the warm-up
  size_t truncated = 0;          // d* * batch_size observations dropped as warm-up
  double statistic = 0;          // MSER(d*)
  // d* is the largest point searched (floor(k / 2)): the warm-up may last longer than the
  // observations, and the figures after it are not a steady state.
  bool at_limit = false;
};

// Returns MSER-m's truncation point of `observations` (in the order they were made): batch means
// Z_1..Z_k of `batch_size` consecutive observations, and the d in 0..floor(k/2) minimising
// MSER(d) = sum_{j>d} (Z_j - mean(Z_{d+1..k}))^2 / (k - d)^2 (the smallest d on a tie).
// nullopt with fewer than kMserMinBatches batches, or a batch_size of 0.
std::optional<MserTruncation> Mser(const std::vector<double>& observations, size_t batch_size = kMserBatchSize);

}  // namespace benchfleet::stats

#endif  // BENCHFLEET_COMMON_STATS_MSER_H_
