#include "synthesis/render/run_bins.h"

#include <algorithm>
#include <cmath>

namespace benchfleet::synthesis {
namespace {

// Fills min, median and max from `values` (reordered).
void Summarize(std::vector<double>& values, RunBin* bin) {
  bin->runs = values.size();
  if (values.empty()) return;
  std::sort(values.begin(), values.end());
  bin->min = values.front();
  bin->max = values.back();
  const size_t n = values.size();
  bin->median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

std::vector<RunBin> BinByKey(std::vector<std::pair<uint32_t, double>> points) {
  std::sort(points.begin(), points.end());
  size_t distinct = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    if (i == 0 || points[i].first != points[i - 1].first) ++distinct;
  }
  const size_t keys_per_bin = std::max<size_t>(1, (distinct + kMaxBinsPerCell - 1) / kMaxBinsPerCell);
  std::vector<RunBin> bins;
  std::vector<double> values;
  size_t keys_in_bin = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const bool new_key = i == 0 || points[i].first != points[i - 1].first;
    if (new_key && keys_in_bin == keys_per_bin) {
      Summarize(values, &bins.back());
      values.clear();
      keys_in_bin = 0;
    }
    if (new_key) {
      if (keys_in_bin == 0) bins.push_back(RunBin{points[i].first, points[i].first});
      bins.back().last_key = points[i].first;
      ++keys_in_bin;
    }
    values.push_back(points[i].second);
  }
  if (!bins.empty()) Summarize(values, &bins.back());
  return bins;
}

std::vector<RunBin> BinInOrder(const std::vector<double>& values) {
  const size_t n = values.size();
  const size_t count = std::min(n, kMaxBinsPerCell);
  std::vector<RunBin> bins;
  bins.reserve(count);
  std::vector<double> group;
  for (size_t b = 0; b < count; ++b) {
    const size_t from = b * n / count, to = (b + 1) * n / count;
    group.assign(values.begin() + static_cast<std::ptrdiff_t>(from), values.begin() + static_cast<std::ptrdiff_t>(to));
    RunBin bin;
    Summarize(group, &bin);
    bins.push_back(bin);
  }
  return bins;
}

size_t RunsPerMark(size_t total, size_t bins) {
  if (bins == 0) return 0;
  return static_cast<size_t>(std::llround(static_cast<double>(total) / static_cast<double>(bins)));
}

}  // namespace benchfleet::synthesis
