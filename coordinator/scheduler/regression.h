// The regression check of a series' run: the sample (this task's accepted runs of the run's mode,
// phase and matrix point, up to the run: its warm calls so far) against the baseline (the last K
// accepted runs of the same agent, task, mode, phase and point from other tasks, read by
// RunAnnotationStore::Baseline). Key figure: the run's main figure (the metric its backend declares as
// headline 1, with its `better`: a lower-is-better figure regresses when it rises; higher is
// assumed when the declaration says neither), else its wall seconds (lower is better). REGRESSION
// (IMPROVEMENT) needs both a significant difference, Mann-Whitney U two-sided at level 0.05, and
// the sample's median worse (better) than the baseline's by more than the threshold. A baseline
// under kMinBaselineRuns gives BASELINE_TOO_SMALL, a sample too small to reach the level (with
// distinct values, ever) SAMPLE_TOO_SMALL; never a regression. A change of conditions since the baseline's latest run is
// named beside the verdict, never used to start a new baseline (it is often the very cause).
// Pure functions; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_SCHEDULER_REGRESSION_H_
#define BENCHFLEET_COORDINATOR_SCHEDULER_REGRESSION_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "benchfleet/v1/conditions.pb.h"
#include "benchfleet/v1/fleet.pb.h"
#include "benchfleet/v1/record.pb.h"
#include "common/spec/spec_limits.h"
#include "coordinator/store/run_annotation_store.h"

namespace benchfleet::coordinator {

// A baseline needs at least kMinBaselineRuns (common/spec/spec_limits.h, the bound the spec's
// regression.baseline_runs is checked against) runs for a verdict: with fewer, even a complete
// separation from a sample of any size says little about the machine's usual level.
// The significance level of the test (two-sided).
inline constexpr double kRegressionLevel = 0.05;
// The largest sample read for one verdict (its newest runs): far more than significance needs,
// and it bounds the run ids each stored verdict lists.
inline constexpr int kMaxSampleRuns = 100;

// What a verdict is held to: the spec's `regression` keys (scheduler README) and the level.
struct RegressionPolicy {
  int baseline_runs = 5;    // K: the baseline's last K runs
  double threshold = 0.10;  // the change beyond which a significant difference counts
  double level = kRegressionLevel;
};

// Returns the verdict of `run` given its `sample` (this task's accepted runs of the run's point up
// to the run, newest first; the run itself is added when missing) against `baseline` (newest
// first); nullopt only when the run has no key figure. Sample and baseline runs without the key
// figure are left out. `conditions` maps fingerprints to conditions (for conditions_change;
// missing ones are named by fingerprint).
std::optional<v1::RegressionVerdict> CheckRegression(
    const v1::RunRecord& run, const std::vector<BaselineRun>& sample, const std::vector<BaselineRun>& baseline,
    const RegressionPolicy& policy, const std::map<std::string, v1::MachineConditions>& conditions);

// Returns what differs between two sets of conditions, e.g. "driver 550.54 -> 560.28,
// llama-server b4000 -> b4123"; "" when nothing named differs.
std::string DescribeConditionsChange(const v1::MachineConditions& before, const v1::MachineConditions& after);

// Returns what was compared, e.g. "4 warm calls of this series vs 5 earlier runs".
std::string ComparedText(const v1::RegressionVerdict& verdict);

// Returns the verdict in one sentence, the test first (the REGRESSION annotation's reason, which
// the guide shows cut at 160 characters, and the log's), e.g. "REGRESSION: p = 0.00794 < 0.05
// (Mann-Whitney U, two-sided, exact), 5 warm calls of this series vs 5 earlier runs: output
// tokens/s median 46.05 vs 50.05 tokens/s (8.0% worse, threshold 5%)". A verdict stored before
// `kind` reads as before: "generation tokens/s 41.2 tokens/s is 20.0% worse than the median 51.5
// of 5 runs (min 50.1, max 52.3)".
std::string RegressionReason(const v1::RegressionVerdict& verdict);

// "REGRESSION", "IMPROVEMENT", "NO_CHANGE", "NOT_SIGNIFICANT", "BASELINE_TOO_SMALL",
// "SAMPLE_TOO_SMALL"; "UNSPECIFIED" for a verdict stored before kinds.
std::string KindName(v1::RegressionVerdict::Kind kind);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_SCHEDULER_REGRESSION_H_
