// The spread of the runs the CLI lists (`benchfleet runs`, `series show`): per setting (agent,
// task, backend, mode, phase, matrix) the main figure over its accepted runs, with the number of
// runs, the median, the 95% confidence interval of the median and the coefficient of variation
// from stats::kMinRunsForSpread runs on (common/stats/spread.h, the guide's own figures for the
// same runs). Plain text for people; pure functions; thread-safe.
#ifndef BENCHFLEET_CLI_RUN_SPREAD_H_
#define BENCHFLEET_CLI_RUN_SPREAD_H_

#include <string>
#include <vector>

#include "benchfleet/v1/record.pb.h"
#include "cli/output_format.h"

namespace benchfleet::cli {

// Returns the block that follows a list of runs: a title line, then one aligned row per setting
// whose accepted runs (status OK, no excluding flag, not invalidated: common/run_flags.h) carry a
// main figure (Metric.headline 1), sorted by agent name, task, mode, phase and matrix:
//
//   main figure per setting over its accepted runs (median, 95% CI of the median and CV from 5 runs on):
//   AGENT                     TASK  BACKEND       MODE  PHASE  MATRIX    FIGURE               N   MEDIAN  95% CI        CV    SOURCE
//   a100-01 (a100, 3f2a9c1e)  qwen  llama-server  gpu   warm   mode=gpu  generation tokens/s  10  41.5    40.6 to 42.6  3.1%  SIMULATED
//   a100-01 (a100, 3f2a9c1e)  qwen  llama-server  gpu   cold   mode=gpu  generation tokens/s  1   -       -             -     SIMULATED
//
// A setting's figures are taken in run order (start time, call index, run id), as the guide takes
// them, so both give the same interval. Above stats::kMaxFiguresForInterval runs the interval is
// "-" and the CV stands alone. SOURCE is SIMULATED when any of the setting's runs is simulated.
// "" when no run qualifies.
std::string FormatRunSpread(const std::vector<v1::RunRecord>& runs, const RunAgents& agents);

}  // namespace benchfleet::cli

#endif  // BENCHFLEET_CLI_RUN_SPREAD_H_
