// The end of a series for the operator: every call's throughput in run order, per combination,
// cold and warm apart (never only a median), drops marked, FAILED runs with their reasons,
// SIMULATED said where it applies; and the exit code of `benchfleet-agent run`.
// Pure functions; thread-safe.
#ifndef BENCHFLEET_AGENT_RUNNER_SERIES_SUMMARY_H_
#define BENCHFLEET_AGENT_RUNNER_SERIES_SUMMARY_H_

#include <string>

#include "absl/status/status.h"
#include "agent/runner/series_runner.h"

namespace benchfleet::agent {

// Exit codes of `benchfleet-agent run` for a series that ran (2, bad spec, flags or config, is
// decided before anything runs). They are benchfleet-agent's kExitOk and kExitFailed.
inline constexpr int kSeriesExitClean = 0;     // every planned run made, none FAILED, all delivered
inline constexpr int kSeriesExitNotClean = 1;  // a FAILED run, a combination stopped early, an
                                               // interruption, or records not delivered

// Returns the report, one line per combination (and repetition) and phase, e.g.
//   gpu warm  1: 52.9  2: 52.6  3: 30.0 (THROUGHPUT_DROP -43.0%)  4: 28.2 (THROUGHPUT_DROP -46.4%)
// then, with runs.warm.until, what ended each combination's warm calls
//   warm calls until stable (95% CI of the median of predicted_per_second, half-width <= 2% of it,
//   tested from 5 accepted calls, at most 30):
//     gpu: stopped: stable, CI half-width 1.8% <= 2% after 9 warm calls
// then the drops counted by what they point to (device throttling, busy host, unexplained) and,
// per combination with a drop or a significant change, Pettitt's change point over its warm calls:
//   gpu warm: the level fell from 52.8 to 29.1 at warm call 3 (Pettitt p=0.6 over 4 warm calls, ...)
// then the FAILED runs with their reasons and log tails, and the combinations stopped early.
std::string FormatSeriesSummary(const SeriesResult& result);

// Returns kSeriesExitClean when result is clean and delivery (the uplink's outcome, or the
// outbox's) is OK; kSeriesExitNotClean otherwise.
int SeriesExitCode(const SeriesResult& result, const absl::Status& delivery);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_RUNNER_SERIES_SUMMARY_H_
