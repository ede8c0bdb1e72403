// How the CLI prints fleet scheduling: the result of `series submit`, the series list, one
// series in detail (`series show`), the live bars of `series watch` and its summary, schedules
// and invalidated runs. Plain text for people; pure functions (and one small renderer that
// remembers what it drew); thread-compatible.
#ifndef BENCHFLEET_CLI_FLEET_FORMAT_H_
#define BENCHFLEET_CLI_FLEET_FORMAT_H_

#include <map>
#include <string>
#include <vector>

#include "benchfleet/v1/fleet.pb.h"

namespace benchfleet::cli {

// "RUNNING" for STATE_RUNNING, "DONE" for STATE_DONE, ...
std::string TaskStateName(v1::TaskStatus::State state);
std::string SeriesStateName(v1::SeriesStatus::State state);

// `series submit`: the series id and the agents it went to (or, dry_run, would go to).
std::string FormatSubmitted(const v1::SubmitSeriesResponse& response, bool dry_run);

// `series list`: one line per series.
std::string FormatSeriesList(const std::vector<v1::SeriesStatus>& series);

// `series show` (and `series cancel`): the series, one row per agent (state, runs done/total,
// failures, flags, message), then the regression check: how many verdicts of each kind, and each
// verdict (the newest of each task's point; of verdicts stored before kinds, the regressions) with
// its test, p-value, level and baseline. `series show` follows it with the spread of each setting
// over the series' runs (run_spread.h). Agents are named by hostname and class with a short id
// beside them ("a100-01 (a100, 3f2a9c1e)", FormatAgentName), as the coordinator fills
// TaskStatus.hostname and agent_class.
std::string FormatSeries(const v1::SeriesStatus& status);

// One regression verdict on one line: "gpu warm ctx=4096: REGRESSION: generation tokens/s median
// 45.2 of 4 warm calls of this series vs 52.1 of 5 earlier runs (51 to 53.3; baseline 1234abcd
// 2234abcd 3234abcd 4234abcd 5234abcd): -13.2%, Mann-Whitney U, two-sided, exact: p = 0.0159 <
// 0.05, threshold 10%" (then "; conditions changed: driver 550 -> 560" when they did). A verdict
// stored before kinds: "run 1234abcd: generation tokens/s 45.2 vs baseline median 52.1 (51 to
// 53.3, 5 runs): -13.2% REGRESSION". The figure's label and, when the label does not say it, its
// unit; the metric's name from a coordinator that sends no label.
std::string FormatVerdict(const v1::RegressionVerdict& verdict);

// One agent's progress line of `series watch`: the agent's name, bar (tty) or not, runs
// done/total, then of its newest stored run (TaskStatus.last_run) the mode, phase and call and
// the headline figures, main figure first, with its flags ("a100-01 (a100, 3f2a9c1e)  5/20  gpu
// WARM call 4  52.9 generation tokens/s  RUNNING"); without one, the agent's progress (phase,
// call and last_figure); then state, failed runs and message.
std::string FormatWatchLine(const v1::TaskStatus& task, bool bar);

// `series watch`'s closing lines: the series' end, counts per task state, and each agent that
// did not succeed with its message.
std::string FormatWatchSummary(const v1::SeriesStatus& status);

// True when the series ended and every task SUCCEEDED (`series watch` exits 0).
bool EveryTaskSucceeded(const v1::SeriesStatus& status);

// Draws successive statuses of one series. On a terminal it redraws its block of lines in place
// (ANSI: cursor up, clear line); otherwise it appends a line for each agent whose line changed.
class WatchRenderer {
 public:
  explicit WatchRenderer(bool tty) : tty_(tty) {}

  // Returns the text to write for this status.
  std::string Render(const v1::SeriesStatus& status);

 private:
  const bool tty_;
  size_t lines_drawn_ = 0;                   // tty: the block's height on screen
  std::map<std::string, std::string> last_;  // plain: last line written per agent
};

// `schedule list`: one line per schedule.
std::string FormatSchedules(const std::vector<v1::Schedule>& schedules);
// `schedule add`: the new schedule and its next firing.
std::string FormatScheduleAdded(const v1::Schedule& schedule);

// `runs invalidate`: how many runs, the reason, and their ids.
std::string FormatInvalidated(const std::vector<std::string>& run_ids, const std::string& reason);

}  // namespace benchfleet::cli

#endif  // BENCHFLEET_CLI_FLEET_FORMAT_H_
