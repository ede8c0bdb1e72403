// What one stored RunRecord contributes to the bench-result metrics: its label values (agent,
// task, backend, mode, phase, variant, simulated) and its figures (wall seconds, the headline
// figures its backend declares, peak memory by kind, flags). Kept apart from prometheus-cpp so that the rules
// of metrics/README.md ("Label rules", "bench results") are unit-tested directly. Used by
// PrometheusMetrics. Pure functions; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_METRICS_RUN_LABELS_H_
#define BENCHFLEET_COORDINATOR_METRICS_RUN_LABELS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "benchfleet/v1/record.pb.h"

namespace benchfleet::coordinator {

// The variant label's special values and its length limit.
inline constexpr char kVariantNone[] = "none";
inline constexpr char kVariantOther[] = "other";
inline constexpr size_t kMaxVariantLength = 64;

// The `figure` and `unit` labels' length limit, and the value of every figure label (`figure`,
// `unit`, `headline`, `better`) of a figure past the limits (see PrometheusMetrics for the
// per-(agent, task) limit of distinct figures).
inline constexpr size_t kMaxFigureLabelLength = 64;
inline constexpr char kFigureOther[] = "other";

// The `flag` label's values, in the order the counters are created.
inline constexpr const char* kRunFlags[] = {"cache_hit", "throughput_drop", "regression", "failed"};

// Returns the variant label of `record`: its matrix as "k=v,k=v" sorted by key, leaving out
// every key that contains "seed" or "prompt" (any case), since those take a new value on every
// run; "none" when nothing is left; "other" when longer than kMaxVariantLength characters. The
// per-(agent, task) limit of distinct variants is the caller's (it needs state).
std::string VariantOf(const v1::RunRecord& record);

// Returns "cold", "warm", "validation" ("unspecified" for a phase validation lets through by
// mistake, so that the label stays bounded).
std::string PhaseLabel(v1::Phase phase);

// Returns "process_peak_rss", "device_used", ... ; "" for MEMORY_KIND_UNSPECIFIED and values
// this build does not know (those figures are not exported).
std::string MemoryKindLabel(v1::MemoryKind kind);

// The label values of a run's bench-result series (variant before the per-(agent, task) limit).
struct RunLabels {
  std::string agent;
  std::string task;
  std::string backend;
  std::string mode;
  std::string phase;
  std::string variant;
  std::string simulated;  // "true" / "false"
};

RunLabels RunLabelsOf(const v1::RunRecord& record);

// One headline figure of a run, as its backend's declaration stamped it on the Metric (never by
// the metric's name: common/figures.h). Its label values: `figure`, `unit`, `headline`, `better`.
struct HeadlineFigure {
  std::string figure;  // the Metric's label, else its name ("generation tokens/s", "TTFT p99")
  std::string unit;    // "tokens/s", "s", "images/s", "J/token", ...
  std::string headline;  // its rank: "1" for the run's main figure, then "2", "3", ...
  std::string better;  // "higher", "lower", or "unspecified"
  double value = 0;

  // Returns a key for these four label values (compared, never split).
  std::string Key() const;
};

// The figures a run contributes. A FAILED run contributes none: only `failed` (and its flags).
struct RunFigures {
  bool failed = false;
  bool cache_hit = false;        // a flag CACHE_HIT
  bool throughput_drop = false;  // a flag THROUGHPUT_DROP
  std::optional<double> wall_seconds;  // wall_duration
  // The metrics stamped as headline figures (Metric.headline > 0), main figure first, then by
  // rank; `figure` and `unit` are kFigureOther when longer than kMaxFigureLabelLength (and then so
  // are `headline` and `better`).
  std::vector<HeadlineFigure> headlines;
  // (kind label, the largest figure of that kind in the run), sorted by kind.
  std::vector<std::pair<std::string, double>> memory_peak_bytes;
};

// Reads the figures of `record`. Non-finite metric values are left out (a gauge cannot use them);
// a metric repeated in one record counts with its last value, as the `metrics` column of the
// runs table keeps it.
RunFigures RunFiguresOf(const v1::RunRecord& record);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_METRICS_RUN_LABELS_H_
