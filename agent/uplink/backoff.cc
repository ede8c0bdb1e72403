#include "agent/uplink/backoff.h"

#include <algorithm>
#include <memory>
#include <random>

namespace benchfleet::agent {

Backoff::Backoff(BackoffPolicy policy, std::function<double()> uniform)
    : policy_(policy), uniform_(std::move(uniform)) {
  if (!uniform_) {
    auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
    uniform_ = [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
  }
}

absl::Duration Backoff::Ceiling(int attempt) const {
  // Past 2^30 the product overflows long before it matters: the cap has been reached anyway.
  if (attempt >= 30) return policy_.cap;
  return std::min(policy_.cap, policy_.base * (int64_t{1} << attempt));
}

absl::Duration Backoff::Next() {
  const absl::Duration ceiling = Ceiling(attempt_);
  ++attempt_;
  const double u = std::clamp(uniform_(), 0.0, 1.0);
  return absl::Nanoseconds(static_cast<int64_t>(u * static_cast<double>(absl::ToInt64Nanoseconds(ceiling))));
}

}  // namespace benchfleet::agent
