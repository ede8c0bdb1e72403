#include "agent/uplink/pacer.h"

#include <algorithm>

namespace benchfleet::agent {

absl::Duration Pacer::Reserve(size_t n) {
  if (rate_ <= 0) return absl::ZeroDuration();
  const absl::Duration now = clock_->Monotonic();
  // Idle time is not saved up: a burst after a quiet hour is still paced.
  if (!started_ || next_free_ < now) next_free_ = now;
  started_ = true;
  const absl::Duration wait = next_free_ - now;
  next_free_ += absl::Seconds(static_cast<double>(n) / rate_);
  return wait;
}

size_t Pacer::BatchLimit(size_t max_batch) const {
  if (rate_ <= 0) return max_batch;
  return std::clamp<size_t>(static_cast<size_t>(rate_ / 4), 1, max_batch);
}

}  // namespace benchfleet::agent
