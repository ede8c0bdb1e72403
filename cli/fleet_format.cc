#include "cli/fleet_format.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/output_format.h"
#include "common/record_csv.h"
#include "common/record_validation.h"

namespace benchfleet::cli {
namespace {

constexpr int kBarWidth = 20;

std::string Figure(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

std::string Percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.1f%%", fraction * 100);
  return buf;
}

std::string Flags(const v1::TaskStatus& task) {
  std::map<std::string, uint32_t> sorted(task.flag_counts().begin(), task.flag_counts().end());
  std::vector<std::string> parts;
  for (const auto& [code, count] : sorted) parts.push_back(absl::StrCat(code, ":", count));
  return absl::StrJoin(parts, ",");
}

std::string Runs(const v1::TaskStatus& task) {
  return absl::StrCat(task.runs_done(), "/", task.runs_total());
}

std::string Bar(const v1::TaskStatus& task) {
  int filled = 0;
  if (task.runs_total() > 0) {
    filled = static_cast<int>(uint64_t{task.runs_done()} * kBarWidth / task.runs_total());
    if (filled > kBarWidth) filled = kBarWidth;
  }
  return absl::StrCat("[", std::string(filled, '#'), std::string(kBarWidth - filled, '-'), "]");
}

// A failed run's message on a watch line is cut to this many bytes (the whole is in `runs`).
constexpr size_t kMaxFailureBytes = 100;

std::string AgentOf(const v1::TaskStatus& task) {
  return FormatAgentName(task.agent_id(), AgentName{task.hostname(), task.agent_class()});
}

// "gpu WARM call 4" and "52.9 generation tokens/s, TTFT p99 88.0 ms CACHE_HIT" from the task's
// newest stored run; without one (none stored yet, or an older coordinator), the agent's progress:
// "WARM call 4" and its last_figure.
std::string Position(const v1::TaskStatus& task) {
  if (!task.has_last_run()) {
    return task.phase().empty() ? "" : absl::StrCat(task.phase(), " call ", task.call_index());
  }
  const v1::RunRecord& run = task.last_run();
  std::vector<std::string> parts;
  if (!run.mode().empty()) parts.push_back(run.mode());
  parts.push_back(absl::AsciiStrToUpper(PhaseName(run.phase())));
  parts.push_back(absl::StrCat("call ", run.call_index()));
  return absl::StrJoin(parts, " ");
}

std::string LastFigure(const v1::TaskStatus& task) {
  if (!task.has_last_run()) return task.last_figure();
  const v1::RunRecord& run = task.last_run();
  std::string figure;
  if (run.status().code() == v1::RunStatus::CODE_FAILED) {
    figure = absl::StrCat("FAILED: ", run.status().message());
    if (figure.size() > kMaxFailureBytes) figure = absl::StrCat(figure.substr(0, kMaxFailureBytes), "...");
    return figure;
  }
  figure = HeadlineText(run);
  // A run that declares no figures (an older agent's): what the agent said of its latest run.
  if (figure.empty()) return task.last_figure();
  for (const v1::Flag& flag : run.flags()) absl::StrAppend(&figure, " ", flag.code());
  if (run.simulated()) absl::StrAppend(&figure, " SIMULATED");
  return figure;
}

// The verdict's figure for people: its label (else the metric's name) and, when the label does
// not say it, its unit.
std::string VerdictValue(const v1::RegressionVerdict& v, double value) {
  return v.unit().empty() || LabelSaysUnit(v.label(), v.unit()) ? Figure(value)
                                                                 : absl::StrCat(Figure(value), " ", v.unit());
}

// "REGRESSION", "IMPROVEMENT", "no change", "not significant", "baseline too small", "sample too
// small": the verdict's kind as `series show` writes it.
std::string KindWords(v1::RegressionVerdict::Kind kind) {
  switch (kind) {
    case v1::RegressionVerdict::KIND_REGRESSION: return "REGRESSION";
    case v1::RegressionVerdict::KIND_IMPROVEMENT: return "IMPROVEMENT";
    case v1::RegressionVerdict::KIND_NO_CHANGE: return "no change";
    case v1::RegressionVerdict::KIND_NOT_SIGNIFICANT: return "not significant";
    case v1::RegressionVerdict::KIND_BASELINE_TOO_SMALL: return "baseline too small";
    case v1::RegressionVerdict::KIND_SAMPLE_TOO_SMALL: return "sample too small";
    default: return "unspecified";
  }
}

// The baseline's runs by short id: "1234abcd 2234abcd" (the first 5, then "+N more").
std::string ShortRunIds(const google::protobuf::RepeatedPtrField<std::string>& ids) {
  std::vector<std::string> shown;
  for (int i = 0; i < ids.size() && i < 5; ++i) shown.push_back(ids[i].substr(0, 8));
  std::string out = absl::StrJoin(shown, " ");
  if (ids.size() > 5) absl::StrAppend(&out, " +", ids.size() - 5, " more");
  return out;
}

// A verdict of a test: "gpu warm ctx=4096: REGRESSION: generation tokens/s median 45.2 of 4 warm
// calls of this series vs 52.1 of 5 earlier runs (51 to 53.3; baseline 1234abcd ...): -13.2%,
// Mann-Whitney U, two-sided, exact: p = 0.0159 < 0.05, threshold 10%".
std::string FormatTestVerdict(const v1::RegressionVerdict& v) {
  std::map<std::string, std::string> matrix(v.matrix().begin(), v.matrix().end());
  std::vector<std::string> point = {v.mode().empty() ? "-" : v.mode(), PhaseName(v.phase())};
  std::vector<std::string> cells;
  for (const auto& [key, value] : matrix) cells.push_back(absl::StrCat(key, "=", value));
  if (!cells.empty()) point.push_back(absl::StrJoin(cells, ","));
  const int b = v.baseline_run_ids_size();
  const std::string compared = absl::StrCat(PhaseRunCount(v.phase(), v.sample_run_ids_size()), " of this series vs ");
  const std::string baseline_runs = absl::StrCat(b, b == 1 ? " earlier run" : " earlier runs");
  const std::string figure = v.label().empty() ? v.metric() : v.label();
  std::string out = absl::StrCat(absl::StrJoin(point, " "), ": ", KindWords(v.kind()), ": ", figure);
  if (v.kind() == v1::RegressionVerdict::KIND_BASELINE_TOO_SMALL) {
    const std::string ids = b > 0 ? absl::StrCat(" (", ShortRunIds(v.baseline_run_ids()), ")") : "";
    absl::StrAppend(&out, " ", compared, baseline_runs, ids, ": needs ", v.baseline_runs_needed(), " earlier runs");
  } else {
    absl::StrAppend(&out, " median ", VerdictValue(v, v.sample_median()), " of ", compared,
                    VerdictValue(v, v.baseline_median()), " of ", baseline_runs, " (", Figure(v.baseline_min()),
                    " to ", Figure(v.baseline_max()), "; baseline ", ShortRunIds(v.baseline_run_ids()), "): ",
                    Percent(v.sample_change()), ", ");
    char p[32];
    std::snprintf(p, sizeof(p), "%.3g", v.p_value());
    absl::StrAppend(&out, v.test(), ": p = ", p, v.p_value() < v.level() ? " < " : " >= ", Figure(v.level()));
    if (v.kind() == v1::RegressionVerdict::KIND_SAMPLE_TOO_SMALL) {
      absl::StrAppend(&out, ", too few runs to ever get below it (needs ", v.sample_runs_needed(), ")");
    } else {
      absl::StrAppend(&out, ", threshold ", Figure(v.threshold() * 100), "%");
    }
  }
  if (!v.conditions_change().empty()) absl::StrAppend(&out, "; conditions changed: ", v.conditions_change());
  return out;
}

bool Ended(v1::TaskStatus::State state) {
  return state != v1::TaskStatus::STATE_PENDING && state != v1::TaskStatus::STATE_RUNNING &&
         state != v1::TaskStatus::STATE_UNSPECIFIED;
}

}  // namespace

std::string TaskStateName(v1::TaskStatus::State state) {
  const std::string& name = v1::TaskStatus::State_Name(state);
  return name.rfind("STATE_", 0) == 0 ? name.substr(6) : name;
}

std::string SeriesStateName(v1::SeriesStatus::State state) {
  const std::string& name = v1::SeriesStatus::State_Name(state);
  return name.rfind("STATE_", 0) == 0 ? name.substr(6) : name;
}

std::string FormatSubmitted(const v1::SubmitSeriesResponse& response, bool dry_run) {
  const int n = response.agent_ids_size();
  const std::string agents = absl::StrCat(n, n == 1 ? " agent" : " agents");
  std::string out =
      dry_run ? absl::StrCat("dry run: the series would go to ", agents, ":\n")
              : absl::StrCat("series ", response.series_id(), " submitted to ", agents, ":\n");
  for (const std::string& id : response.agent_ids()) absl::StrAppend(&out, "  ", id, "\n");
  return out;
}

std::string FormatSeriesList(const std::vector<v1::SeriesStatus>& series) {
  std::vector<std::vector<std::string>> rows = {{"SERIES", "NAME", "TASK", "BACKEND", "STATE",
                                                 "AGENTS", "ENDED", "SUCCEEDED", "CREATED",
                                                 "SCHEDULE"}};
  for (const v1::SeriesStatus& s : series) {
    int ended = 0, succeeded = 0;
    for (const v1::TaskStatus& t : s.tasks()) {
      if (Ended(t.state())) ++ended;
      if (t.state() == v1::TaskStatus::STATE_SUCCEEDED) ++succeeded;
    }
    rows.push_back({s.series_id(), s.name(), s.task(), s.backend(), SeriesStateName(s.state()),
                    absl::StrCat(s.tasks_size()), absl::StrCat(ended), absl::StrCat(succeeded),
                    FormatTimestamp(s.create_time()), s.schedule_id()});
  }
  std::string out = AlignColumns(rows);
  absl::StrAppend(&out, series.size(), " series\n");
  return out;
}

std::string FormatVerdict(const v1::RegressionVerdict& v) {
  if (v.kind() != v1::RegressionVerdict::KIND_UNSPECIFIED) return FormatTestVerdict(v);
  // A verdict stored before kinds: the run against the baseline's median and range.
  std::string out =
      absl::StrCat("run ", v.run_id().substr(0, 8), ": ", v.label().empty() ? v.metric() : v.label(), " ",
                   VerdictValue(v, v.value()), " vs baseline median ", VerdictValue(v, v.baseline_median()),
                   " (", Figure(v.baseline_min()), " to ", Figure(v.baseline_max()), ", ",
                   v.baseline_run_ids_size(), v.baseline_run_ids_size() == 1 ? " run" : " runs",
                   "): ", Percent(v.change()), v.regression() ? " REGRESSION" : " ok");
  if (!v.conditions_change().empty()) {
    absl::StrAppend(&out, "; conditions changed: ", v.conditions_change());
  }
  return out;
}

std::string FormatSeries(const v1::SeriesStatus& status) {
  std::string out = absl::StrCat("series ", status.series_id(), ": ", status.name(), " (task ",
                                 status.task(), ", backend ", status.backend(), ")\n");
  absl::StrAppend(&out, "state ", SeriesStateName(status.state()), ", created ",
                  FormatTimestamp(status.create_time()));
  if (status.has_deadline())
    absl::StrAppend(&out, ", deadline ", FormatTimestamp(status.deadline()));
  if (!status.schedule_id().empty()) absl::StrAppend(&out, ", schedule ", status.schedule_id());
  absl::StrAppend(&out, "\n\n");

  std::vector<std::vector<std::string>> rows = {
      {"AGENT", "STATE", "ATTEMPT", "RUNS", "FAILED", "FLAGS", "MESSAGE"}};
  int verdicts = 0;
  std::map<v1::RegressionVerdict::Kind, int> kinds;
  for (const v1::TaskStatus& t : status.tasks()) {
    rows.push_back({AgentOf(t), TaskStateName(t.state()), absl::StrCat(t.attempt()), Runs(t),
                    absl::StrCat(t.runs_failed()), Flags(t), t.message()});
    for (const v1::RegressionVerdict& v : t.regressions()) {
      ++verdicts;
      // A verdict stored before kinds counts as a regression or not.
      ++kinds[v.regression() ? v1::RegressionVerdict::KIND_REGRESSION : v.kind()];
    }
  }
  absl::StrAppend(&out, AlignColumns(rows));
  if (verdicts > 0) {
    const int regressions = kinds[v1::RegressionVerdict::KIND_REGRESSION];
    absl::StrAppend(&out, "\nregression check: ", verdicts, verdicts == 1 ? " run" : " runs",
                    " against their baseline, ", regressions, regressions == 1 ? " regression" : " regressions");
    for (const auto& [kind, count] : kinds) {
      if (kind == v1::RegressionVerdict::KIND_REGRESSION || kind == v1::RegressionVerdict::KIND_UNSPECIFIED) continue;
      absl::StrAppend(&out, ", ", count, " ", KindWords(kind));
    }
    absl::StrAppend(&out, "\n");
    for (const v1::TaskStatus& t : status.tasks()) {
      for (const v1::RegressionVerdict& v : t.regressions()) {
        // Of the verdicts stored before kinds (one per run), the regressions only.
        if (v.kind() == v1::RegressionVerdict::KIND_UNSPECIFIED && !v.regression()) continue;
        absl::StrAppend(&out, "  ", AgentOf(t), " ", FormatVerdict(v), "\n");
      }
    }
  }
  return out;
}

std::string FormatWatchLine(const v1::TaskStatus& task, bool bar) {
  std::vector<std::string> parts = {AgentOf(task)};
  if (bar) parts.push_back(Bar(task));
  parts.push_back(Runs(task));
  if (std::string position = Position(task); !position.empty()) parts.push_back(position);
  if (std::string figure = LastFigure(task); !figure.empty()) parts.push_back(figure);
  parts.push_back(TaskStateName(task.state()));
  if (task.runs_failed() > 0) parts.push_back(absl::StrCat(task.runs_failed(), " failed"));
  if (!task.message().empty()) parts.push_back(task.message());
  return absl::StrJoin(parts, "  ");
}

bool EveryTaskSucceeded(const v1::SeriesStatus& status) {
  if (status.state() != v1::SeriesStatus::STATE_DONE || status.tasks_size() == 0) return false;
  for (const v1::TaskStatus& t : status.tasks()) {
    if (t.state() != v1::TaskStatus::STATE_SUCCEEDED) return false;
  }
  return true;
}

std::string FormatWatchSummary(const v1::SeriesStatus& status) {
  std::map<std::string, int> counts;
  for (const v1::TaskStatus& t : status.tasks()) ++counts[TaskStateName(t.state())];
  std::vector<std::string> parts;
  for (const auto& [state, n] : counts) parts.push_back(absl::StrCat(n, " ", state));
  const int n = status.tasks_size();
  std::string out =
      absl::StrCat("series ", status.series_id(), " ", SeriesStateName(status.state()), ": ", n,
                   n == 1 ? " agent" : " agents");
  if (!parts.empty()) absl::StrAppend(&out, ", ", absl::StrJoin(parts, ", "));
  absl::StrAppend(&out, "\n");
  for (const v1::TaskStatus& t : status.tasks()) {
    if (t.state() == v1::TaskStatus::STATE_SUCCEEDED) continue;
    absl::StrAppend(&out, "  ", AgentOf(t), " ", TaskStateName(t.state()),
                    t.message().empty() ? "" : ": ", t.message(), "\n");
  }
  return out;
}

std::string WatchRenderer::Render(const v1::SeriesStatus& status) {
  std::string out;
  if (tty_) {
    // Back to the top of the block drawn last time, then each line cleared and drawn again.
    if (lines_drawn_ > 0) absl::StrAppend(&out, "\x1b[", lines_drawn_, "A");
    std::vector<std::string> lines;
    lines.push_back(absl::StrCat("series ", status.series_id(), " ", status.name(), "  ",
                                 SeriesStateName(status.state())));
    for (const v1::TaskStatus& t : status.tasks()) lines.push_back(FormatWatchLine(t, true));
    for (const std::string& line : lines) absl::StrAppend(&out, "\x1b[2K", line, "\n");
    // A shorter block than last time: clear what is left of the old one.
    for (size_t i = lines.size(); i < lines_drawn_; ++i) absl::StrAppend(&out, "\x1b[2K\n");
    lines_drawn_ = std::max(lines_drawn_, lines.size());
    return out;
  }
  for (const v1::TaskStatus& t : status.tasks()) {
    std::string line = FormatWatchLine(t, false);
    std::string& last = last_[t.agent_id()];
    if (line == last) continue;
    last = line;
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

std::string FormatSchedules(const std::vector<v1::Schedule>& schedules) {
  std::vector<std::vector<std::string>> rows = {
      {"SCHEDULE", "CRON", "SERIES", "TASK", "NEXT", "LAST", "LAST_SERIES"}};
  for (const v1::Schedule& s : schedules) {
    rows.push_back({s.schedule_id(), s.cron(), s.series_name(), s.task(),
                    FormatTimestamp(s.next_fire_time()), FormatTimestamp(s.last_fire_time()),
                    s.last_series_id()});
  }
  std::string out = AlignColumns(rows);
  absl::StrAppend(&out, schedules.size(), schedules.size() == 1 ? " schedule\n" : " schedules\n");
  return out;
}

std::string FormatScheduleAdded(const v1::Schedule& schedule) {
  std::string out = absl::StrCat("schedule ", schedule.schedule_id(), " added: \"", schedule.cron(),
                                 "\" (UTC) runs series ", schedule.series_name(), " (task ",
                                 schedule.task(), ")\n");
  if (schedule.has_next_fire_time()) {
    absl::StrAppend(&out, "next at ", FormatTimestamp(schedule.next_fire_time()), "\n");
  }
  return out;
}

std::string FormatInvalidated(const std::vector<std::string>& run_ids, const std::string& reason) {
  std::string out = absl::StrCat(run_ids.size(), run_ids.size() == 1 ? " run" : " runs",
                                 " invalidated: ", reason, "\n");
  for (const std::string& id : run_ids) absl::StrAppend(&out, "  ", id, "\n");
  return out;
}

}  // namespace benchfleet::cli
