// The regression check of a scheduled series' run: its key figure against the baseline (the last K
// accepted runs of the same task, agent, mode, phase and matrix, read by FleetStore::Baseline).
// Key figure: the run's main figure (the metric its backend declares as headline 1, with its
// `better`: a lower-is-better figure regresses when it rises; higher is assumed when the
// declaration says neither), else its wall seconds (lower is better). REGRESSION when the run is worse
// than the baseline's median by more than the threshold AND outside the baseline's [min, max]. A
// change of conditions since the baseline's latest run is named beside the verdict, never used to
// start a new baseline (it is often the very cause). Pure functions; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_SCHEDULER_REGRESSION_H_
#define BENCHFLEET_COORDINATOR_SCHEDULER_REGRESSION_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "benchfleet/v1/conditions.pb.h"
#include "benchfleet/v1/fleet.pb.h"
#include "benchfleet/v1/record.pb.h"
#include "coordinator/store/fleet_store.h"

namespace benchfleet::coordinator {

// Returns the verdict of `run` against `baseline` (newest first), or nullopt when the run has no
// key figure or no baseline run has it. `conditions` maps fingerprints to conditions (for
// conditions_change; missing ones are named by fingerprint).
std::optional<v1::RegressionVerdict> CheckRegression(
    const v1::RunRecord& run, const std::vector<BaselineRun>& baseline, double threshold,
    const std::map<std::string, v1::MachineConditions>& conditions);

// Returns what differs between two sets of conditions, e.g. "driver 550.54 -> 560.28,
// llama-server b4000 -> b4123"; "" when nothing named differs.
std::string DescribeConditionsChange(const v1::MachineConditions& before, const v1::MachineConditions& after);

// Returns the REGRESSION annotation's reason, e.g. "generation tokens/s 41.2 tokens/s is 20.0%
// worse than the median 51.5 of 5 runs (min 50.1, max 52.3)".
std::string RegressionReason(const v1::RegressionVerdict& verdict);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_SCHEDULER_REGRESSION_H_
