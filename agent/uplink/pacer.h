// Pacer: spaces out sends to at most `rate` records per second (for slow or metered links), by
// the injected Clock so tests step it without sleeping. Owned by one uplink; not thread-safe.
#ifndef BENCHFLEET_AGENT_UPLINK_PACER_H_
#define BENCHFLEET_AGENT_UPLINK_PACER_H_

#include <cstddef>

#include "absl/time/time.h"
#include "common/clock.h"

namespace benchfleet::agent {

class Pacer {
 public:
  // rate <= 0 means unlimited.
  Pacer(Clock* clock, double rate) : clock_(clock), rate_(rate) {}

  // Reserves n records' worth of the budget and returns how long to wait before sending them
  // (zero when the link is idle enough).
  absl::Duration Reserve(size_t n);

  // Returns a batch size that keeps sends smooth: about a quarter second of records, at least 1,
  // at most max_batch.
  size_t BatchLimit(size_t max_batch) const;

  bool limited() const { return rate_ > 0; }

 private:
  Clock* clock_;
  double rate_;
  absl::Duration next_free_ = absl::ZeroDuration();  // on clock_->Monotonic()'s scale
  bool started_ = false;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_UPLINK_PACER_H_
