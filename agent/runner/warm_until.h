// Repeat until stable (runs.warm.until in the series spec): within one combination and repetition,
// decides after each warm call whether the warm calls end there, because the bootstrap confidence
// interval of the median of the accepted calls' main figure is narrow enough, or because the
// maximum is reached; the deciding call's record gets the WarmStop that says which.
// One tracker per combination and repetition, owned by the series runner; not thread-safe.
#ifndef BENCHFLEET_AGENT_RUNNER_WARM_UNTIL_H_
#define BENCHFLEET_AGENT_RUNNER_WARM_UNTIL_H_

#include <string>
#include <vector>

#include "benchfleet/v1/record.pb.h"
#include "common/spec/series_spec.h"

namespace benchfleet::agent {

class WarmUntilTracker {
 public:
  // metric: the backend's main figure (its headline 1), whichever way is better.
  WarmUntilTracker(const WarmUntil& until, std::string metric);

  // Looks at one warm run, in run order, after the runner has filled it (flags included). A run
  // is accepted when it is OK, carries no excluding flag (common/run_flags.h) and has the metric.
  // From until.min accepted runs on, computes the interval of their median; when its relative
  // half-width is at most until.ci_halfwidth, or the run is the until.max-th warm call, sets
  // record->warm_stop (REASON_STABLE or REASON_MAX, with its message, e.g. "stopped: stable, CI
  // half-width 1.8% <= 2% after 9 warm calls") and returns true: no warm call follows. Returns
  // false otherwise, and for runs of other phases.
  bool Observe(v1::RunRecord* record);

 private:
  const WarmUntil until_;
  const std::string metric_;
  std::vector<double> accepted_;
  uint32_t calls_ = 0;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_RUNNER_WARM_UNTIL_H_
