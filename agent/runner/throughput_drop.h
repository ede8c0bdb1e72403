// THROUGHPUT_DROP: within one combination and repetition, a warm call whose throughput falls more
// than a threshold below the first warm call's is flagged, with the figures that raised it, so a
// GPU that throttles or falls back to the CPU mid-series shows in the records themselves.
// One tracker per combination and repetition; not thread-safe.
#ifndef BENCHFLEET_AGENT_RUNNER_THROUGHPUT_DROP_H_
#define BENCHFLEET_AGENT_RUNNER_THROUGHPUT_DROP_H_

#include <optional>
#include <string>

#include "benchfleet/v1/record.pb.h"
#include "common/figures.h"

namespace benchfleet::agent {

inline constexpr char kThroughputDropFlag[] = "THROUGHPUT_DROP";
// A backend's flag for a run whose measured work was served from a cache (e.g. ComfyUI's
// execution cache): published, but neither a THROUGHPUT_DROP reference nor compared with one.
inline constexpr char kCacheHitFlag[] = "CACHE_HIT";

// The metric a backend's drops are judged on: its main figure when higher is better, else "" (no
// check).
std::string ThroughputDropMetric(FigureDeclarations figures);

// Returns whether the record carries the flag code.
bool HasFlag(const v1::RunRecord& record, const char* code);

class ThroughputDropTracker {
 public:
  // metric: the backend's throughput metric (higher is better); "" disables the check.
  // threshold: a fraction, e.g. 0.15 for 15%.
  ThroughputDropTracker(std::string metric, double threshold);

  // Looks at one run, in run order. Runs flagged CACHE_HIT are skipped. The first WARM run that
  // is OK, not CACHE_HIT and has the metric becomes the
  // reference (normally warm call 1); a later one more than threshold below it gets the flag
  // {THROUGHPUT_DROP, "predicted_per_second 30.0 is 43.3% below the first warm call's 52.9
  // (threshold 15%)"} and its drop is returned as a fraction (0.433). nullopt otherwise.
  std::optional<double> Observe(v1::RunRecord* record);

 private:
  const std::string metric_;
  const double threshold_;
  std::optional<double> reference_;
  uint32_t reference_call_ = 0;
  bool skipped_cache_hit_ = false;  // a CACHE_HIT warm run came before the reference
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_RUNNER_THROUGHPUT_DROP_H_
