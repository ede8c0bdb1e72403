#include "agent/runner/series_summary.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/probes/device_sampler.h"
#include "agent/runner/figures.h"
#include "agent/runner/steady_state.h"
#include "agent/runner/throughput_drop.h"
#include "common/string_views.h"
#include "common/record_validation.h"

namespace benchfleet::agent {
namespace {

constexpr int kLogTailLines = 3;

// The label of a run in the report: its combination, and its repetition when there are several.
std::string Where(const SeriesResult& result, const RunResult& run) {
  return result.repetitions > 1 ? absl::StrCat(run.label, " rep ", run.record.repetition()) : run.label;
}

// One call in a figure line: "3: 30.0 (THROUGHPUT_DROP -43.3%)", "2: FAILED", "1: -".
std::string Call(const SeriesResult& result, const RunResult& run) {
  const v1::RunRecord& record = run.record;
  std::string text = absl::StrCat(record.call_index(), ": ");
  if (record.status().code() != v1::RunStatus::CODE_OK) return absl::StrCat(text, "FAILED");
  if (result.throughput_metric.empty()) return absl::StrCat(text, "OK");
  const std::optional<double> value = MetricValue(record, result.throughput_metric);
  if (!value.has_value()) return absl::StrCat(text, "-");
  absl::StrAppend(&text, FormatFigure(*value));
  if (run.throughput_drop.has_value()) {
    absl::StrAppend(&text, absl::StrFormat(" (%s -%.1f%%)", kThroughputDropFlag, *run.throughput_drop * 100));
  }
  if (HasFlag(record, kCacheHitFlag)) absl::StrAppend(&text, " (", kCacheHitFlag, ")");
  return text;
}

// The last non-empty lines of a log tail.
std::vector<std::string> LastLines(const std::string& log_tail, int n) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(log_tail, '\n')) {
    if (!line.empty()) lines.emplace_back(line);
  }
  if (lines.size() > size_t(n)) lines.erase(lines.begin(), lines.end() - n);
  return lines;
}

}  // namespace

std::string FormatSeriesSummary(const SeriesResult& result) {
  std::string out;
  const int ok = static_cast<int>(result.runs.size()) - result.failed_runs;
  std::string version;
  if (auto it = result.conditions.backend_versions().find(result.backend);
      it != result.conditions.backend_versions().end()) {
    version = absl::StrCat(" ", it->second);
  }
  absl::StrAppend(&out, "series ", result.series, " (task ", result.task, ", backend ", result.backend, version,
                  "): ", result.runs.size(), " runs, ", ok, " OK, ", result.failed_runs, " FAILED\n");
  const bool any_simulated = std::any_of(result.runs.begin(), result.runs.end(),
                                         [](const RunResult& run) { return run.record.simulated(); });
  if (any_simulated) {
    absl::StrAppend(&out, "SIMULATED: the measured server (", result.backend,
                    ") announced itself as a simulator; its figures are not measurements of this machine\n");
  }

  // Lines in the order their combination (and repetition) first ran; phases in series order.
  struct Line {
    std::string where;
    v1::Phase phase;
    std::vector<std::string> calls;
    bool simulated = false;
  };
  std::vector<Line> lines;
  std::vector<std::string> order;
  std::map<std::pair<std::string, int>, size_t> index;  // (where, phase) -> lines
  for (const RunResult& run : result.runs) {
    const std::string where = Where(result, run);
    if (std::find(order.begin(), order.end(), where) == order.end()) order.push_back(where);
    const auto key = std::make_pair(where, static_cast<int>(run.record.phase()));
    auto [it, inserted] = index.emplace(key, lines.size());
    if (inserted) lines.push_back(Line{where, run.record.phase(), {}, false});
    Line& line = lines[it->second];
    line.calls.push_back(Call(result, run));
    line.simulated = line.simulated || run.record.simulated();
  }
  std::stable_sort(lines.begin(), lines.end(), [&](const Line& a, const Line& b) {
    const auto ia = std::find(order.begin(), order.end(), a.where) - order.begin();
    const auto ib = std::find(order.begin(), order.end(), b.where) - order.begin();
    return ia != ib ? ia < ib : a.phase < b.phase;
  });
  size_t where_width = 0;
  size_t phase_width = 0;
  for (const Line& line : lines) {
    where_width = std::max(where_width, line.where.size());
    phase_width = std::max(phase_width, PhaseName(line.phase).size());
  }

  if (!lines.empty()) {
    if (result.throughput_metric.empty()) {
      absl::StrAppend(&out, "status of every call, in run order:\n");
    } else {
      std::string unit;
      for (const RunResult& run : result.runs) {
        unit = MetricUnit(run.record, result.throughput_metric);
        if (!unit.empty()) break;
      }
      absl::StrAppend(&out, result.throughput_metric, unit.empty() ? "" : absl::StrCat(" (", unit, ")"),
                      " of every call, in run order:\n");
    }
  }
  for (const Line& line : lines) {
    absl::StrAppend(&out, absl::StrFormat("%-*s %-*s  %s", where_width, line.where, phase_width,
                                          PhaseName(line.phase), absl::StrJoin(line.calls, "  ")),
                    line.simulated ? "  SIMULATED" : "", "\n");
  }

  if (result.warm_until.has_value()) {
    const WarmUntil& until = *result.warm_until;
    absl::StrAppend(&out, absl::StrFormat("warm calls until stable (95%% CI of the median of %s, half-width <= %g%% "
                                          "of it, tested from %d accepted calls, at most %d):\n",
                                          result.warm_until_metric, until.ci_halfwidth * 100, until.min, until.max));
    for (const RunResult& run : result.runs) {
      if (run.record.has_warm_stop()) {
        absl::StrAppend(&out, "  ", Where(result, run), ": ", run.record.warm_stop().message(),
                        run.record.simulated() ? "  SIMULATED" : "", "\n");
      }
    }
  }
  // Per combination (and repetition), in run order: its judged warm calls and what its drops
  // point to; Pettitt's change point is shown where a call was flagged or the change is
  // significant.
  struct Warm {
    std::vector<WarmCall> calls;
    int drops = 0;
  };
  std::vector<std::pair<std::string, Warm>> warm;
  int drops = 0;
  int causes[3] = {0, 0, 0};  // DropCause: unexplained, throttled, contended
  for (const RunResult& run : result.runs) {
    const std::optional<double> value = JudgedValue(run.record, result.throughput_metric);
    if (!value.has_value()) continue;
    const std::string where = Where(result, run);
    auto it = std::find_if(warm.begin(), warm.end(), [&](const auto& w) { return w.first == where; });
    if (it == warm.end()) it = warm.insert(warm.end(), {where, Warm{}});
    it->second.calls.push_back(WarmCall{run.record.call_index(), *value});
    if (!run.throughput_drop.has_value()) continue;
    ++drops;
    ++it->second.drops;
    ++causes[static_cast<int>(CauseOfDrop(run.record))];
  }
  if (drops > 0) {
    std::vector<std::string> why;
    if (causes[static_cast<int>(DropCause::kThrottled)] > 0) {
      why.push_back(absl::StrCat(causes[static_cast<int>(DropCause::kThrottled)], " with the device throttling"));
    }
    if (causes[static_cast<int>(DropCause::kContended)] > 0) {
      why.push_back(absl::StrCat(causes[static_cast<int>(DropCause::kContended)], " on a busy host (",
                                 kContendedFlag, ")"));
    }
    if (causes[static_cast<int>(DropCause::kUnexplained)] > 0) {
      why.push_back(absl::StrCat(causes[static_cast<int>(DropCause::kUnexplained)], " unexplained"));
    }
    absl::StrAppend(&out, absl::StrFormat("%s: %d warm call(s) fell more than %g%% below the median of the first %d "
                                          "warm calls of their combination: %s\n",
                                          kThroughputDropFlag, drops, result.throughput_drop_threshold * 100,
                                          kDropReferenceCalls, absl::StrJoin(why, ", ")));
  }
  for (const auto& [where, w] : warm) {
    const std::optional<LevelChange> change = FindLevelChange(w.calls);
    if (!change.has_value() || (w.drops == 0 && !change->test.significant())) continue;
    absl::StrAppend(&out, where, " warm: ", DescribeLevelChange(*change), "\n");
  }
  std::vector<const RunResult*> cache_hits;
  for (const RunResult& run : result.runs) {
    if (HasFlag(run.record, kCacheHitFlag)) cache_hits.push_back(&run);
  }
  if (!cache_hits.empty()) {
    absl::StrAppend(&out, cache_hits.size(), " run(s) flagged ", kCacheHitFlag,
                    ": published, excluded from every aggregate\n");
    for (const RunResult* run : cache_hits) {
      for (const v1::Flag& flag : run->record.flags()) {
        if (flag.code() != kCacheHitFlag) continue;
        absl::StrAppend(&out, "  ", Where(result, *run), " ", PhaseName(run->record.phase()), " ",
                        run->record.call_index(), ": ", flag.reason(), "\n");
      }
    }
  }
  if (result.failed_runs > 0) {
    absl::StrAppend(&out, "FAILED runs:\n");
    for (const RunResult& run : result.runs) {
      const v1::RunRecord& record = run.record;
      if (record.status().code() == v1::RunStatus::CODE_OK) continue;
      absl::StrAppend(&out, "  ", Where(result, run), " ", PhaseName(record.phase()), " ", record.call_index(), ": ",
                      record.status().message(), "\n");
      for (const std::string& line : LastLines(record.status().log_tail(), kLogTailLines)) {
        absl::StrAppend(&out, "    | ", line, "\n");
      }
    }
  }
  // The serving runs' warm-up, beside their whole-run figures: computed again from the requests
  // the record keeps (the record's steady-state metrics are the same figures).
  std::vector<std::string> steady_lines;
  for (const RunResult& run : result.runs) {
    if (run.record.status().code() != v1::RunStatus::CODE_OK) continue;
    if (std::optional<SteadyState> steady = SteadyStateOf(run.record); steady.has_value()) {
      steady_lines.push_back(absl::StrCat("  ", Where(result, run), " ", PhaseName(run.record.phase()), " ",
                                          run.record.call_index(), ": ", SteadyStateLine(*steady),
                                          run.record.simulated() ? "  SIMULATED" : ""));
    }
  }
  if (!steady_lines.empty()) {
    absl::StrAppend(&out, "steady state of the runs with requests (MSER-5 warm-up dropped; whole run -> steady):\n");
    for (const std::string& line : steady_lines) absl::StrAppend(&out, line, "\n");
  }
  if (!result.notes.empty()) {
    absl::StrAppend(&out, "notes:\n");
    for (const std::string& note : result.notes) absl::StrAppend(&out, "  ", note, "\n");
  }
  if (result.interrupted) absl::StrAppend(&out, "interrupted: the series was stopped before its end\n");
  return out;
}

int SeriesExitCode(const SeriesResult& result, const absl::Status& delivery) {
  return result.clean() && delivery.ok() ? kSeriesExitClean : kSeriesExitNotClean;
}

}  // namespace benchfleet::agent
