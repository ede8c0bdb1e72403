// The spread gauges' arithmetic (metrics/README.md, "Spread of the main figure"): which stored runs
// count, the window of a label set's last accepted main figures, and their median, 95% interval
// of the median and coefficient of variation (common/stats/spread.h, the guide's own). Kept apart
// from prometheus-cpp so that it is unit-tested directly. Used by PrometheusMetrics. A
// FigureWindow is thread-compatible; the functions are pure and thread-safe.
#ifndef BENCHFLEET_COORDINATOR_METRICS_FIGURE_WINDOW_H_
#define BENCHFLEET_COORDINATOR_METRICS_FIGURE_WINDOW_H_

#include <cstddef>
#include <deque>
#include <optional>
#include <vector>

#include "benchfleet/v1/record.pb.h"

namespace benchfleet::coordinator {

// The spread gauges read a label set's last this many accepted runs: enough for an interval
// (stats::kMinRunsForSpread is 5), few enough that a bootstrap per stored run costs well under a
// millisecond, and recent enough to follow a change.
inline constexpr size_t kSpreadWindowRuns = 20;

// Whether a stored run's main figure enters the window: status OK and no flag that keeps a run
// out of aggregates (common/run_flags.h: a cache hit, a busy host, ...; an operator's INVALIDATED).
bool CountsTowardSpread(const v1::RunRecord& record);

// The last kSpreadWindowRuns values, oldest first.
class FigureWindow {
 public:
  void Add(double value);
  void Clear() { values_.clear(); }
  size_t size() const { return values_.size(); }
  std::vector<double> values() const { return std::vector<double>(values_.begin(), values_.end()); }

 private:
  std::deque<double> values_;
};

struct WindowSpread {
  size_t runs = 0;
  // From stats::kMinRunsForSpread values on; `cv` none when their mean is 0.
  std::optional<double> median, ci_low, ci_high, cv;
};

// The spread of `values` (oldest first: the bootstrap draws by position).
WindowSpread SpreadOf(const std::vector<double>& values);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_METRICS_FIGURE_WINDOW_H_
