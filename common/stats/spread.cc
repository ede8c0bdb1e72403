#include "common/stats/spread.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace benchfleet::stats {

uint64_t SplitMix64(uint64_t& state) {
  state += 0x9e3779b97f4a7c15ULL;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

namespace {

// The median of non-empty `values`, which it reorders: two selections, no sort (the bootstrap takes
// a thousand medians of each cell's figures; sorting them was a tenth of a million-run guide).
double MedianInPlace(std::vector<double>& values) {
  const size_t n = values.size();
  const auto middle = values.begin() + n / 2;
  std::nth_element(values.begin(), middle, values.end());
  if (n % 2 == 1) return *middle;
  // The lower middle is the largest of the elements nth_element put before `middle`.
  return (*std::max_element(values.begin(), middle) + *middle) / 2;
}

}  // namespace

std::optional<double> Median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  return MedianInPlace(values);
}

std::optional<double> CoefficientOfVariation(const std::vector<double>& values) {
  if (values.size() < 2) return std::nullopt;
  const double n = static_cast<double>(values.size());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  if (mean == 0) return std::nullopt;
  double squares = 0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / (n - 1)) / std::fabs(mean);
}

std::optional<Interval> BootstrapMedianInterval(const std::vector<double>& values, double level, int resamples,
                                                uint64_t seed) {
  if (values.size() < 2 || resamples < 1 || !(level > 0 && level < 1)) return std::nullopt;
  const size_t n = values.size();
  std::vector<double> medians;
  medians.reserve(resamples);
  std::vector<double> draw(n);
  uint64_t state = seed;
  for (int b = 0; b < resamples; ++b) {
    for (size_t i = 0; i < n; ++i) draw[i] = values[SplitMix64(state) % n];
    medians.push_back(MedianInPlace(draw));
  }
  std::sort(medians.begin(), medians.end());
  const double count = static_cast<double>(resamples);
  const size_t low = static_cast<size_t>(std::floor(count * (1 - level) / 2));
  const size_t high = static_cast<size_t>(std::ceil(count * (1 + level) / 2)) - 1;
  return Interval{medians[std::min(low, medians.size() - 1)], medians[std::min(high, medians.size() - 1)], level};
}

}  // namespace benchfleet::stats
