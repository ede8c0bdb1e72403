// Binning of a chart's points when a cell holds too many runs to draw one mark each (charts.cc,
// render.cc): groups of runs, each drawn as its min–max line and its median. Below the threshold
// the charts draw every run and never call this. Pure functions; thread-safe.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_RUN_BINS_H_
#define BENCHFLEET_SYNTHESIS_RENDER_RUN_BINS_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace benchfleet::synthesis {

// Above this many runs in a cell a chart bins them; at or below, every run is its own mark.
inline constexpr size_t kBinRunsAbove = 2000;
// At most this many marks per binned cell.
inline constexpr size_t kMaxBinsPerCell = 200;

struct RunBin {
  uint32_t first_key = 0, last_key = 0;  // the call indices the bin covers (call-index chart)
  size_t runs = 0;
  double min = 0, median = 0, max = 0;   // median: the middle value, or the mean of the two middle ones
};

// Bins (key, value) points by key: one bin per distinct key, or runs of consecutive distinct keys
// when there are more than kMaxBinsPerCell of them. Bins in key order.
std::vector<RunBin> BinByKey(std::vector<std::pair<uint32_t, double>> points);

// Bins values in their given order into at most kMaxBinsPerCell groups of consecutive values of
// (nearly) equal size.
std::vector<RunBin> BinInOrder(const std::vector<double>& values);

// About how many runs one mark stands for: total / bins, rounded.
size_t RunsPerMark(size_t total, size_t bins);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_RUN_BINS_H_
