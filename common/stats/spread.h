// The spread of a set of figures, shown beside every aggregate: the median, the coefficient of
// variation and a bootstrap confidence interval of the median. The bootstrap draws from a fixed
// seed, so the same figures always give the same interval (the guide stays byte-identical).
// Pure functions; thread-safe.
#ifndef BENCHFLEET_COMMON_STATS_SPREAD_H_
#define BENCHFLEET_COMMON_STATS_SPREAD_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace benchfleet::stats {

// Spread is shown from this many accepted runs on; below it a median is shown alone.
inline constexpr int kMinRunsForSpread = 5;

// The bootstrap's defaults: 2,000 resamples, 95%, and the seed every caller uses.
inline constexpr int kBootstrapResamples = 2000;
inline constexpr double kIntervalLevel = 0.95;
inline constexpr uint64_t kBootstrapSeed = 20261202;

// The bootstrap costs kBootstrapResamples times the figures: what shows an interval beside a median
// (the guide, the CLI) computes it up to this many figures and shows the CV alone beyond, so that a
// setting of a million runs costs no more than reading them.
inline constexpr size_t kMaxFiguresForInterval = 1000;

// Returns the median (the mean of the two middle values for an even count); nullopt when empty.
std::optional<double> Median(std::vector<double> values);

// Returns the sample standard deviation (n - 1) divided by the mean, as a fraction (0.05 for 5%);
// nullopt for fewer than 2 values or a mean of 0.
std::optional<double> CoefficientOfVariation(const std::vector<double>& values);

struct Interval {
  double low = 0;
  double high = 0;
  double level = 0;  // e.g. 0.95
};

// Returns the percentile-bootstrap confidence interval of the median: `resamples` resamples of
// values.size() draws with replacement, index = splitmix64() % n from `seed`; the medians sorted,
// low = medians[floor(B * (1 - level) / 2)], high = medians[ceil(B * (1 + level) / 2) - 1].
// nullopt for fewer than 2 values.
std::optional<Interval> BootstrapMedianInterval(const std::vector<double>& values, double level = kIntervalLevel,
                                                int resamples = kBootstrapResamples,
                                                uint64_t seed = kBootstrapSeed);

// The next value of the splitmix64 generator whose state is `state` (advanced): the bootstrap's
// draws, written out so that a test can compute the same interval independently.
uint64_t SplitMix64(uint64_t& state);

}  // namespace benchfleet::stats

#endif  // BENCHFLEET_COMMON_STATS_SPREAD_H_
