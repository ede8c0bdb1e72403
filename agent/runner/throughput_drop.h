// THROUGHPUT_DROP: within one combination and repetition, a warm call whose throughput falls more
// than a threshold below a robust reference (the median of the first kDropReferenceCalls judged
// warm calls) is flagged, with the figures that raised it, the change of level Pettitt's test
// finds over the warm calls so far (common/stats/change_point.h) and what the run's own readings
// point to: the device throttling (THROTTLED, or its SM clock fallen below the reference calls'),
// the host being busy (CONTENDED), or nothing (unexplained).
//
// Records are streamed as soon as they are made, so each run's flag is decided when it is made
// and never revised: the warm calls before the reference is complete (calls 1 and 2 normally) are
// part of it and are never flagged; from the third on, each call is judged against the median of
// the first three (itself included when it is the third). One fast or slow call among the first
// three does not move a median of three beyond the other two, so it neither flags the later calls
// nor hides their drop; a fall right after warm call 1 cannot be told from a fast first call and
// is not flagged (the series summary still shows Pettitt's change point over every warm call).
// One tracker per combination and repetition; not thread-safe.
#ifndef BENCHFLEET_AGENT_RUNNER_THROUGHPUT_DROP_H_
#define BENCHFLEET_AGENT_RUNNER_THROUGHPUT_DROP_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "benchfleet/v1/record.pb.h"
#include "common/figures.h"
#include "common/stats/change_point.h"

namespace benchfleet::agent {

inline constexpr char kThroughputDropFlag[] = "THROUGHPUT_DROP";
// A backend's flag for a run whose measured work was served from a cache (e.g. ComfyUI's
// execution cache): published, but neither a THROUGHPUT_DROP reference nor compared with one.
inline constexpr char kCacheHitFlag[] = "CACHE_HIT";

// The reference is the median of this many first judged warm calls.
inline constexpr int kDropReferenceCalls = 3;
// A dropped run whose mean SM clock is more than this fraction below the median of the reference
// calls' is a clock fall: the device slowed down even when it reported no throttle reason.
inline constexpr double kClockFallFraction = 0.10;

// The metric a backend's drops are judged on: its main figure when higher is better, else "" (no
// check).
std::string ThroughputDropMetric(FigureDeclarations figures);

// Returns whether the record carries the flag code.
bool HasFlag(const v1::RunRecord& record, const char* code);

// The value a run is judged on: a WARM run, OK, not CACHE_HIT, carrying the metric; else nullopt.
std::optional<double> JudgedValue(const v1::RunRecord& record, const std::string& metric);

// What a dropped run's own flags point to, the device sampler's THROTTLED and CONTENDED
// (agent/probes/device_sampler.h; THROTTLED wins over CONTENDED when both: the device's
// own readings say it slowed down).
enum class DropCause { kUnexplained, kThrottled, kContended };
DropCause CauseOfDrop(const v1::RunRecord& record);

struct WarmCall {
  uint32_t call_index = 0;
  double value = 0;
};

// Pettitt's change point of the calls' values, with the warm call where the new level starts.
struct LevelChange {
  uint32_t call_index = 0;
  stats::ChangePoint test;
};
std::optional<LevelChange> FindLevelChange(const std::vector<WarmCall>& calls);

// Returns e.g. "the level fell from 52.9 to 29.1 at warm call 3 (Pettitt p=0.6 over 4 warm calls,
// not significant at 5%)".
std::string DescribeLevelChange(const LevelChange& change);

class ThroughputDropTracker {
 public:
  // metric: the backend's throughput metric (higher is better); "" disables the check.
  // threshold: a fraction, e.g. 0.15 for 15%.
  ThroughputDropTracker(std::string metric, double threshold);

  // Looks at one run, in run order; only judged runs (JudgedValue) count. Once the reference is
  // complete, a run more than threshold below it gets the flag {THROUGHPUT_DROP, "predicted_per_second
  // 30.0 is 43.3% below the reference 52.9, the median of warm calls 1-3 (threshold 15%); the level
  // fell from 52.9 to 30.0 at warm call 3 (Pettitt p=1 over 3 warm calls, not significant at 5%);
  // <cause>"} and its drop is returned as a fraction (0.433); nullopt otherwise. A dropped run
  // whose SM clock fell (kClockFallFraction) and that carries no THROTTLED flag gets one too.
  std::optional<double> Observe(v1::RunRecord* record);

 private:
  std::string Attribution(v1::RunRecord* record) const;

  const std::string metric_;
  const double threshold_;
  std::vector<WarmCall> calls_;  // the judged warm calls so far
  std::optional<double> reference_;
  // Per SM clock metric ("device_sm_clock_mhz_mean", "device0_..."): the reference calls' values,
  // then (once complete) their median.
  std::map<std::string, std::vector<double>> reference_clock_values_;
  std::map<std::string, double> reference_clocks_;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_RUNNER_THROUGHPUT_DROP_H_
