// Backoff: delays between reconnection attempts, exponential with "full jitter" (a uniform draw in
// [0, min(cap, base * 2^attempt)]), so a fleet of agents that lost the same coordinator does not
// reconnect in lockstep. Owned by one uplink; not thread-safe.
#ifndef BENCHFLEET_AGENT_UPLINK_BACKOFF_H_
#define BENCHFLEET_AGENT_UPLINK_BACKOFF_H_

#include <functional>

#include "absl/time/time.h"

namespace benchfleet::agent {

struct BackoffPolicy {
  absl::Duration base = absl::Milliseconds(200);
  absl::Duration cap = absl::Seconds(30);
};

class Backoff {
 public:
  // uniform returns a draw in [0, 1]; empty means a random generator seeded from the OS. Tests
  // pass a fixed one to get exact delays.
  explicit Backoff(BackoffPolicy policy, std::function<double()> uniform = {});

  // Returns the delay before the next attempt and counts one more failed attempt.
  absl::Duration Next();

  // Forgets past failures (after a successful Welcome).
  void Reset() { attempt_ = 0; }

  // Returns the upper bound of the delay after `attempt` failures (0-based): min(cap, base*2^n).
  absl::Duration Ceiling(int attempt) const;

  int attempt() const { return attempt_; }

 private:
  BackoffPolicy policy_;
  std::function<double()> uniform_;
  int attempt_ = 0;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_UPLINK_BACKOFF_H_
