#include "coordinator/metrics/figure_window.h"

#include "common/run_flags.h"
#include "common/stats/spread.h"

namespace benchfleet::coordinator {

bool CountsTowardSpread(const v1::RunRecord& record) {
  if (record.status().code() != v1::RunStatus::CODE_OK) return false;
  for (const v1::Flag& flag : record.flags()) {
    if (IsExcludingFlag(flag.code()) || flag.code() == kInvalidatedCode) return false;
  }
  return true;
}

void FigureWindow::Add(double value) {
  values_.push_back(value);
  while (values_.size() > kSpreadWindowRuns) values_.pop_front();
}

WindowSpread SpreadOf(const std::vector<double>& values) {
  WindowSpread spread;
  spread.runs = values.size();
  if (values.size() < static_cast<size_t>(stats::kMinRunsForSpread)) return spread;
  spread.median = stats::Median(values);
  if (const std::optional<stats::Interval> interval = stats::BootstrapMedianInterval(values)) {
    spread.ci_low = interval->low;
    spread.ci_high = interval->high;
  }
  spread.cv = stats::CoefficientOfVariation(values);
  return spread;
}

}  // namespace benchfleet::coordinator
