#include "coordinator/metrics/prometheus_metrics.h"

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "benchfleet/v1/fleet.pb.h"
#include "common/proto_time.h"
#include "common/stats/spread.h"
#include "common/rejection_codes.h"

namespace benchfleet::coordinator {
namespace {

using prometheus::Labels;

// Positions in PrometheusMetrics::FlagCounters (the order of kRunFlags).
constexpr size_t kCacheHitFlag = 0;
constexpr size_t kThroughputDropFlag = 1;
constexpr size_t kRegressionFlag = 2;
constexpr size_t kFailedFlag = 3;

// The `operation` label's values (metrics/README.md): each exists at 0 from the start.
constexpr const char* kDatabaseOperations[] = {"store_runs", "upsert_machine", "touch_machine",
                                               "scheduler_tick", "fleet_snapshot"};

// Histogram buckets (upper bounds; +Inf is implicit). Listed in metrics/README.md too.
const std::vector<double>& BatchRecordsBuckets() {
  static const auto* b = new std::vector<double>{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};
  return *b;
}
const std::vector<double>& CommitSecondsBuckets() {
  static const auto* b =
      new std::vector<double>{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  return *b;
}
const std::vector<double>& RunSecondsBuckets() {
  static const auto* b =
      new std::vector<double>{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 60, 120, 300, 600};
  return *b;
}
const std::vector<double>& MemoryBytesBuckets() {
  // 64 MiB (2^26) to 256 GiB (2^38), powers of 2.
  static const auto* b = [] {
    auto* v = new std::vector<double>;
    for (int e = 26; e <= 38; ++e) v->push_back(std::ldexp(1.0, e));
    return v;
  }();
  return *b;
}

// "STATE_PENDING" -> "pending": the `state` label of benchfleet_fleet_tasks.
std::vector<std::string> TaskStateLabels() {
  std::vector<std::string> states;
  const auto* descriptor = v1::TaskStatus::State_descriptor();
  for (int i = 0; i < descriptor->value_count(); ++i) {
    const int number = descriptor->value(i)->number();
    if (number == v1::TaskStatus::STATE_UNSPECIFIED) continue;
    states.push_back(absl::AsciiStrToLower(descriptor->value(i)->name().substr(sizeof("STATE_") - 1)));
  }
  return states;
}

Labels RunLabelSet(const RunLabels& l, const std::string& kind) {
  Labels labels{{"agent", l.agent}, {"task", l.task},       {"backend", l.backend},
                {"mode", l.mode},   {"phase", l.phase},     {"variant", l.variant},
                {"simulated", l.simulated}};
  if (!kind.empty()) labels.emplace("kind", kind);
  return labels;
}

// A key for one bench-result label set; '\x1f' cannot come from a label rule.
std::string RunKey(const RunLabels& l) {
  return absl::StrCat(l.agent, "\x1f", l.task, "\x1f", l.backend, "\x1f", l.mode, "\x1f", l.phase,
                      "\x1f", l.variant, "\x1f", l.simulated);
}

}  // namespace

PrometheusMetrics::PrometheusMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  prometheus::Registry& r = *registry_;

  // ---- Fleet health ----
  agents_connected_ = &prometheus::BuildGauge()
                           .Name("benchfleet_coordinator_agents_connected")
                           .Help("Agent streams open on this coordinator")
                           .Register(r)
                           .Add({});
  agent_connected_ = &prometheus::BuildGauge()
                          .Name("benchfleet_coordinator_agent_connected")
                          .Help("1 while this coordinator holds the agent's stream, else 0; present for "
                                "every agent seen in the last 24 hours (max by (agent) across replicas)")
                          .Register(r);
  agents_known_ = &prometheus::BuildGauge()
                       .Name("benchfleet_fleet_agents_known")
                       .Help("Agents in the database (fleet-wide: the same on every replica)")
                       .Register(r)
                       .Add({});
  fleet_tasks_ = &prometheus::BuildGauge()
                      .Name("benchfleet_fleet_tasks")
                      .Help("Tasks in the database by state (fleet-wide: the same on every replica)")
                      .Register(r);
  for (const std::string& state : TaskStateLabels()) fleet_tasks_->Add({{"state", state}});

  auto& records = prometheus::BuildCounter()
                      .Name("benchfleet_coordinator_records_total")
                      .Help("Records received from agents, by what became of them")
                      .Register(r);
  stored_ = &records.Add({{"result", "stored"}});
  duplicated_ = &records.Add({{"result", "duplicate"}});
  conflicts_ = &prometheus::BuildCounter()
                     .Name("benchfleet_coordinator_run_conflicts_total")
                     .Help("Records refused because their run_id was already stored with different content")
                     .Register(r)
                     .Add({});
  rejected_ = &prometheus::BuildCounter()
                   .Name("benchfleet_coordinator_records_rejected_total")
                   .Help("Records refused, by reason")
                   .Register(r);
  for (const char* reason : kRejectionCodes) rejected_->Add({{"reason", reason}});
  batch_records_ = &prometheus::BuildHistogram()
                        .Name("benchfleet_coordinator_ingest_batch_records")
                        .Help("Records per RecordBatch received from an agent")
                        .Register(r)
                        .Add({}, BatchRecordsBuckets());
  commit_duration_ = &prometheus::BuildHistogram()
                          .Name("benchfleet_coordinator_commit_duration_seconds")
                          .Help("Latency of one group commit (COPY to COMMIT), in seconds")
                          .Register(r)
                          .Add({}, CommitSecondsBuckets());
  commits_ = &prometheus::BuildCounter()
                  .Name("benchfleet_coordinator_group_commits_total")
                  .Help("Group commits: transactions that stored a group of runs")
                  .Register(r)
                  .Add({});
  committed_runs_ = &prometheus::BuildCounter()
                         .Name("benchfleet_coordinator_group_commit_runs_total")
                         .Help("Runs written by group commits (stored, duplicate or refused)")
                         .Register(r)
                         .Add({});
  database_errors_ = &prometheus::BuildCounter()
                          .Name("benchfleet_coordinator_database_errors_total")
                          .Help("Database operations that failed, by operation")
                          .Register(r);
  for (const char* operation : kDatabaseOperations) database_errors_->Add({{"operation", operation}});
  stale_task_updates_ = &prometheus::BuildCounter()
                             .Name("benchfleet_coordinator_stale_task_updates_total")
                             .Help("Task updates ignored because their attempt is not the task's current one")
                             .Register(r)
                             .Add({});
  grpc_requests_ = &prometheus::BuildCounter()
                        .Name("benchfleet_coordinator_grpc_requests_total")
                        .Help("gRPC calls finished, by full method name and status code")
                        .Register(r);
  regression_checks_ = &prometheus::BuildCounter()
                            .Name("benchfleet_coordinator_regression_checks_total")
                            .Help("Runs of series checked against their baseline, by agent, task and verdict "
                                  "(regression, improvement, no_change, not_significant, baseline_too_small, "
                                  "sample_too_small)")
                            .Register(r);

  // ---- Bench results ----
  last_wall_ = &prometheus::BuildGauge()
                    .Name("benchfleet_run_last_wall_seconds")
                    .Help("Wall time of the last stored run of the label set, in seconds")
                    .Register(r);
  wall_ = &prometheus::BuildHistogram()
               .Name("benchfleet_run_wall_seconds")
               .Help("Wall time of stored runs, in seconds")
               .Register(r);
  last_figure_ = &prometheus::BuildGauge()
                      .Name("benchfleet_run_last_figure")
                      .Help("Each headline figure of the last stored run of the label set that has it, as its "
                            "backend declares it: figure (its name for people), unit (of the value), headline "
                            "(1: the run's main figure, 2, 3...: the others), better (higher or lower)")
                      .Register(r);
  last_memory_ = &prometheus::BuildGauge()
                      .Name("benchfleet_run_last_memory_peak_bytes")
                      .Help("Largest memory figure of each kind in the last stored run of the label set, "
                            "in bytes (process and device kinds are different things: never add them)")
                      .Register(r);
  memory_ = &prometheus::BuildHistogram()
                 .Name("benchfleet_run_memory_peak_bytes")
                 .Help("Largest memory figure of each kind in stored runs, in bytes")
                 .Register(r);
  last_start_ = &prometheus::BuildGauge()
                     .Name("benchfleet_run_last_start_timestamp_seconds")
                     .Help("Start of the last stored run of the label set whose figures the last-value gauges "
                           "show (Unix seconds; the time it was stored when it has no start): across "
                           "replicas, the one with the newest holds the current values")
                     .Register(r);
  spread_runs_ = &prometheus::BuildGauge()
                     .Name("benchfleet_run_main_figure_window_runs")
                     .Help("Accepted runs of the label set in the window of the spread gauges (its last 20 "
                           "accepted runs stored here): the n of the median, interval and CV beside it")
                     .Register(r);
  spread_median_ = &prometheus::BuildGauge()
                       .Name("benchfleet_run_main_figure_median")
                       .Help("Median of the main figure over the window's accepted runs (from 5 on), in unit")
                       .Register(r);
  spread_ci_low_ = &prometheus::BuildGauge()
                       .Name("benchfleet_run_main_figure_median_ci_low")
                       .Help("Lower bound of the 95% bootstrap confidence interval of that median (2,000 "
                             "resamples, fixed seed: the guide's method), in unit")
                       .Register(r);
  spread_ci_high_ = &prometheus::BuildGauge()
                        .Name("benchfleet_run_main_figure_median_ci_high")
                        .Help("Upper bound of the 95% bootstrap confidence interval of that median, in unit")
                        .Register(r);
  spread_cv_ = &prometheus::BuildGauge()
                   .Name("benchfleet_run_main_figure_cv_ratio")
                   .Help("Coefficient of variation of the main figure over the window's accepted runs (from 5 "
                         "on): sample standard deviation over the mean, a ratio (0.05 is 5%)")
                   .Register(r);
  flagged_ = &prometheus::BuildCounter()
                  .Name("benchfleet_runs_flagged_total")
                  .Help("Stored runs flagged cache_hit or throughput_drop, found a regression by the "
                        "coordinator's check, or failed; by agent, task and flag")
                  .Register(r);
}

PrometheusMetrics::~PrometheusMetrics() = default;

void PrometheusMetrics::RecordsStored(uint64_t count) { stored_->Increment(static_cast<double>(count)); }

void PrometheusMetrics::RecordsDuplicated(uint64_t count) {
  duplicated_->Increment(static_cast<double>(count));
}

void PrometheusMetrics::RecordsConflicted(uint64_t count) {
  conflicts_->Increment(static_cast<double>(count));
}

void PrometheusMetrics::RecordRejected(std::string_view reason) {
  // Family::Add returns the existing counter for labels it has seen: safe from any thread.
  rejected_->Add({{"reason", std::string(reason)}}).Increment();
}

void PrometheusMetrics::AgentConnected(std::string_view agent_id) {
  agents_connected_->Increment();
  std::lock_guard<std::mutex> lock(mu_);
  // One agent may briefly hold two streams (a reconnect before the old one is noticed dead).
  ++streams_by_agent_[std::string(agent_id)];
  AgentGaugeLocked(std::string(agent_id)).Set(1);
}

void PrometheusMetrics::AgentDisconnected(std::string_view agent_id) {
  agents_connected_->Decrement();
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = streams_by_agent_.find(agent_id);
  if (it == streams_by_agent_.end()) return;
  if (--it->second > 0) return;
  streams_by_agent_.erase(it);
  AgentGaugeLocked(std::string(agent_id)).Set(0);
}

prometheus::Gauge& PrometheusMetrics::AgentGaugeLocked(const std::string& agent) {
  auto [it, inserted] = agent_gauges_.try_emplace(agent, nullptr);
  if (inserted) it->second = &agent_connected_->Add({{"agent", agent}});
  return *it->second;
}

void PrometheusMetrics::BatchReceived(uint64_t records) {
  batch_records_->Observe(static_cast<double>(records));
}

void PrometheusMetrics::GroupCommitted(uint64_t runs, absl::Duration latency) {
  commits_->Increment();
  committed_runs_->Increment(static_cast<double>(runs));
  commit_duration_->Observe(absl::ToDoubleSeconds(latency));
}

void PrometheusMetrics::DatabaseError(std::string_view operation) {
  database_errors_->Add({{"operation", std::string(operation)}}).Increment();
}

std::string PrometheusMetrics::CappedLocked(std::set<std::string, std::less<>>& seen, size_t cap,
                                            const std::string& value) {
  if (seen.count(value) > 0) return value;
  if (seen.size() >= cap) return kLabelOther;
  seen.insert(value);
  return value;
}

PrometheusMetrics::AgentTask PrometheusMetrics::BoundedPairLocked(const std::string& agent, const std::string& task) {
  AgentTask pair(CappedLocked(agents_, kMaxAgentLabels, agent), CappedLocked(tasks_, kMaxTaskLabels, task));
  if (pairs_.count(pair) > 0) return pair;
  if (pairs_.size() >= kMaxAgentTaskPairs) return AgentTask(kLabelOther, kLabelOther);
  pairs_.insert(pair);
  return pair;
}

PrometheusMetrics::FlagCounters& PrometheusMetrics::FlagsOfLocked(const std::string& raw_agent,
                                                                  const std::string& raw_task) {
  const AgentTask pair = BoundedPairLocked(raw_agent, raw_task);
  auto [it, inserted] = flags_.try_emplace(pair);
  if (inserted) {
    const auto& [agent, task] = pair;
    // All four at once, so that increase() sees the first flag of any kind.
    for (size_t i = 0; i < it->second.size(); ++i) {
      it->second[i] = &flagged_->Add({{"agent", agent}, {"task", task}, {"flag", kRunFlags[i]}});
    }
  }
  return it->second;
}

std::string PrometheusMetrics::BoundedVariantLocked(const RunLabels& labels) {
  // A variant already "other" (too long) takes none of the 16 places.
  if (labels.variant == kVariantOther) return labels.variant;
  std::set<std::string>& seen = variants_[AgentTask(labels.agent, labels.task)];
  if (seen.count(labels.variant) > 0) return labels.variant;
  if (seen.size() >= kMaxVariantsPerTask) return kVariantOther;
  seen.insert(labels.variant);
  return labels.variant;
}

prometheus::Gauge& PrometheusMetrics::HeadlineGaugeLocked(RunSeries& series, const HeadlineFigure& figure) {
  const std::string key = figure.Key();
  if (const auto it = series.headlines.find(key); it != series.headlines.end()) return *it->second;
  // A figure past the per-(agent, task) limit goes to the "other" gauge; its own key is not kept,
  // so that any number of such figures takes no memory.
  const RunLabels& l = series.labels;
  HeadlineFigure other;
  other.figure = other.unit = other.headline = other.better = kFigureOther;
  const std::string other_key = other.Key();
  HeadlineFigure bounded = figure;
  if (key != other_key) {
    std::set<std::string>& seen = figures_[AgentTask(l.agent, l.task)];
    if (seen.count(key) == 0) {
      if (seen.size() < kMaxFiguresPerTask) {
        seen.insert(key);
      } else {
        bounded = other;
      }
    }
  }
  const std::string bounded_key = bounded.Key();
  auto [it, created] = series.headlines.try_emplace(bounded_key, nullptr);
  if (created) {
    Labels set = RunLabelSet(l, "");
    set.emplace("figure", bounded.figure);
    set.emplace("unit", bounded.unit);
    set.emplace("headline", bounded.headline);
    set.emplace("better", bounded.better);
    it->second = &last_figure_->Add(set);
  }
  return *it->second;
}

PrometheusMetrics::FigureSeries& PrometheusMetrics::FigureOfLocked(
    const RunLabels& labels, FigureSeries& series, prometheus::Family<prometheus::Gauge>* last,
    prometheus::Family<prometheus::Histogram>* histogram, const std::vector<double>& buckets,
    const std::string& kind) {
  if (series.last == nullptr) {
    const Labels set = RunLabelSet(labels, kind);
    series.last = &last->Add(set);
    series.histogram = &histogram->Add(set, buckets);
  }
  return series;
}

void PrometheusMetrics::ObserveFigure(FigureSeries& series, double value) {
  series.last->Set(value);
  series.histogram->Observe(value);
}

PrometheusMetrics::KnownRun PrometheusMetrics::KnownRunLocked(const v1::RunRecord& record, bool failed) {
  key_scratch_.clear();
  absl::StrAppend(&key_scratch_, record.agent_id(), "\x1f", record.task(), "\x1f", record.backend(), "\x1f",
                  record.mode(), "\x1f", static_cast<int>(record.phase()), "\x1f", VariantOf(record), "\x1f",
                  record.simulated() ? "1" : "0");
  if (const auto it = known_runs_.find(key_scratch_); it != known_runs_.end()) return it->second;

  const RunLabels raw = RunLabelsOf(record);
  RunLabels labels = raw;
  const AgentTask pair = BoundedPairLocked(raw.agent, raw.task);
  labels.agent = pair.first;
  labels.task = pair.second;
  labels.backend = CappedLocked(backends_, kMaxBackendLabels, raw.backend);
  labels.mode = CappedLocked(modes_[labels.task], kMaxModesPerTask, raw.mode);
  KnownRun run;
  run.flags = &FlagsOfLocked(labels.agent, labels.task);
  if (failed) return run;  // it creates no series, so it takes no variant place either
  labels.variant = BoundedVariantLocked(labels);
  std::string key = RunKey(labels);
  if (run_series_.count(key) == 0) {
    if (named_label_sets_ >= kMaxRunLabelSets) {
      labels.agent = labels.task = labels.backend = labels.mode = kLabelOther;
      labels.variant = kVariantOther;
      key = RunKey(labels);
    } else {
      ++named_label_sets_;
    }
  }
  auto [series, created] = run_series_.try_emplace(key);
  if (created) series->second.labels = labels;
  run.series = &series->second;
  // A capped value stands for any number of others: caching those would grow without bound.
  const bool as_sent = labels.agent == raw.agent && labels.task == raw.task && labels.backend == raw.backend &&
                       labels.mode == raw.mode && labels.variant == raw.variant;
  if (as_sent) known_runs_.emplace(key_scratch_, run);
  return run;
}

void PrometheusMetrics::WindowLocked(RunSeries& series, const v1::RunRecord& record,
                                     const std::vector<HeadlineFigure>& headlines) {
  if (!CountsTowardSpread(record)) return;
  const auto main = std::find_if(headlines.begin(), headlines.end(),
                                 [](const HeadlineFigure& f) { return f.headline == "1"; });
  // A main figure past the figure cap went to the "other" gauge: no spread of a mixture.
  if (main == headlines.end() || main->figure == kFigureOther || series.headlines.count(main->Key()) == 0) return;
  SpreadSeries& spread = series.spread;
  if (spread.figure_key != main->Key()) {
    // Another main figure (a new declaration): a window of its own, and only its series, so that a
    // label set keeps five spread series whatever its records declare.
    const std::pair<prometheus::Gauge**, prometheus::Family<prometheus::Gauge>*> gauges[] = {
        {&spread.runs, spread_runs_},       {&spread.median, spread_median_}, {&spread.ci_low, spread_ci_low_},
        {&spread.ci_high, spread_ci_high_}, {&spread.cv, spread_cv_}};
    for (const auto& [gauge, family] : gauges) {
      if (*gauge != nullptr) family->Remove(*gauge);
      *gauge = nullptr;
    }
    spread.window.Clear();
    spread.figure_key = main->Key();
  }
  spread.window.Add(main->value);
  auto labels = [&] {
    Labels set = RunLabelSet(series.labels, "");
    set.emplace("figure", main->figure);
    set.emplace("unit", main->unit);
    return set;
  };
  if (spread.runs == nullptr) spread.runs = &spread_runs_->Add(labels());
  spread.runs->Set(static_cast<double>(spread.window.size()));
  if (spread.window.size() < static_cast<size_t>(stats::kMinRunsForSpread)) return;
  if (spread.median == nullptr) {
    const Labels set = labels();
    spread.median = &spread_median_->Add(set);
    spread.ci_low = &spread_ci_low_->Add(set);
    spread.ci_high = &spread_ci_high_->Add(set);
    spread.cv = &spread_cv_->Add(set);
  }
  if (!spread.dirty) {
    spread.dirty = true;
    dirty_spreads_.push_back(&spread);
  }
}

void PrometheusMetrics::RefreshSpreads() {
  struct Work {
    SpreadSeries* series;
    std::string figure_key;
    std::vector<double> values;
    WindowSpread spread;
  };
  std::vector<Work> work;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (SpreadSeries* s : dirty_spreads_) {
      s->dirty = false;
      work.push_back(Work{s, s->figure_key, s->window.values(), {}});
    }
    dirty_spreads_.clear();
  }
  // The bootstraps (a few milliseconds each on a busy machine) run outside the lock, so that
  // stored runs and RPCs never wait for them.
  for (Work& w : work) w.spread = SpreadOf(w.values);
  std::lock_guard<std::mutex> lock(mu_);
  for (const Work& w : work) {
    SpreadSeries& s = *w.series;
    // Another main figure meanwhile: those gauges are gone, its own window is dirty.
    if (s.figure_key != w.figure_key || s.median == nullptr || !w.spread.median) continue;
    s.median->Set(*w.spread.median);
    if (w.spread.ci_low && w.spread.ci_high) {
      s.ci_low->Set(*w.spread.ci_low);
      s.ci_high->Set(*w.spread.ci_high);
    }
    s.cv->Set(w.spread.cv ? *w.spread.cv : std::nan(""));
  }
}

std::vector<prometheus::MetricFamily> PrometheusMetrics::Collect() {
  RefreshSpreads();
  return registry_->Collect();
}

void PrometheusMetrics::RunStored(const v1::RunRecord& record) {
  const RunFigures figures = RunFiguresOf(record);

  std::lock_guard<std::mutex> lock(mu_);
  const KnownRun run = KnownRunLocked(record, figures.failed);
  FlagCounters& flags = *run.flags;
  if (figures.cache_hit) flags[kCacheHitFlag]->Increment();
  if (figures.throughput_drop) flags[kThroughputDropFlag]->Increment();
  if (figures.failed) {
    flags[kFailedFlag]->Increment();
    return;  // a failed run's figures measure nothing
  }

  RunSeries& series = *run.series;
  const RunLabels& labels = series.labels;
  if (figures.wall_seconds.has_value()) {
    ObserveFigure(FigureOfLocked(labels, series.wall, last_wall_, wall_, RunSecondsBuckets()),
                  *figures.wall_seconds);
  }
  for (const HeadlineFigure& figure : figures.headlines) HeadlineGaugeLocked(series, figure).Set(figure.value);
  for (const auto& [kind, bytes] : figures.memory_peak_bytes) {
    ObserveFigure(
        FigureOfLocked(labels, series.memory[kind], last_memory_, memory_, MemoryBytesBuckets(), kind), bytes);
  }
  // When the values above were measured, so that a replica an agent has left, still holding its
  // older values, can be told from the one it moved to (rules.yml's :latest rules).
  if (series.last_start == nullptr) series.last_start = &last_start_->Add(RunLabelSet(labels, ""));
  const absl::Time start = record.has_start_time() ? ToTime(record.start_time()) : absl::Now();
  series.last_start->Set(absl::ToDoubleSeconds(start - absl::UnixEpoch()));
  WindowLocked(series, record, figures.headlines);
}

void PrometheusMetrics::RegressionChecked(std::string_view agent_id, std::string_view task, std::string_view verdict) {
  if (std::find(kRegressionVerdicts.begin(), kRegressionVerdicts.end(), verdict) == kRegressionVerdicts.end()) return;
  std::lock_guard<std::mutex> lock(mu_);
  const auto [agent, task_name] = BoundedPairLocked(std::string(agent_id), std::string(task));
  // Every verdict exists from the first check of an (agent, task), so increase() alerts see the
  // first regression.
  for (std::string_view v : kRegressionVerdicts) {
    auto& counter = regression_checks_->Add({{"agent", agent}, {"task", task_name}, {"verdict", std::string(v)}});
    if (v == verdict) counter.Increment();
  }
  FlagCounters& flags = FlagsOfLocked(agent, task_name);
  if (verdict == "regression") flags[kRegressionFlag]->Increment();
}

void PrometheusMetrics::TaskKnown(std::string_view agent_id, std::string_view task) {
  std::lock_guard<std::mutex> lock(mu_);
  FlagsOfLocked(std::string(agent_id), std::string(task));
}

void PrometheusMetrics::StaleTaskUpdate() { stale_task_updates_->Increment(); }

void PrometheusMetrics::FleetObserved(const FleetSnapshot& snapshot) {
  agents_known_->Set(static_cast<double>(snapshot.agents_known));
  for (const auto& [state, count] : snapshot.tasks_by_state) {
    fleet_tasks_->Add({{"state", state}}).Set(static_cast<double>(count));
  }

  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [agent, task] : snapshot.open_tasks) FlagsOfLocked(agent, task);

  // Every agent seen lately has its gauge (at 0 unless its stream is here); one not seen for
  // 24 hours and not connected here loses it, so label sets do not outlive the fleet.
  const std::set<std::string> recent(snapshot.recent_agents.begin(), snapshot.recent_agents.end());
  for (const std::string& agent : recent) AgentGaugeLocked(agent);
  for (auto it = agent_gauges_.begin(); it != agent_gauges_.end();) {
    if (recent.count(it->first) > 0 || streams_by_agent_.count(it->first) > 0) {
      ++it;
      continue;
    }
    agent_connected_->Remove(it->second);
    it = agent_gauges_.erase(it);
  }
}

void PrometheusMetrics::RpcMethodsServed(const std::vector<std::string>& methods) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& method : methods) {
    rpc_methods_.insert(method);
    grpc_requests_->Add({{"method", method}, {"code", "OK"}});
  }
}

void PrometheusMetrics::RpcHandled(std::string_view method, std::string_view code) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (rpc_methods_.find(method) == rpc_methods_.end()) return;
  }
  grpc_requests_->Add({{"method", std::string(method)}, {"code", std::string(code)}}).Increment();
}

// What an Exposer serves: the spread gauges brought up to date, then the registry.
class PrometheusMetrics::ScrapeView final : public prometheus::Collectable {
 public:
  explicit ScrapeView(PrometheusMetrics* metrics) : metrics_(metrics) {}
  std::vector<prometheus::MetricFamily> Collect() const override { return metrics_->Collect(); }

 private:
  PrometheusMetrics* const metrics_;
};

std::shared_ptr<prometheus::Collectable> PrometheusMetrics::scrape_view() {
  std::lock_guard<std::mutex> lock(mu_);
  if (scrape_view_ == nullptr) scrape_view_ = std::make_shared<ScrapeView>(this);
  return scrape_view_;
}

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& address, std::shared_ptr<prometheus::Collectable> registry) {
  std::unique_ptr<MetricsEndpoint> endpoint(new MetricsEndpoint());
  try {
    endpoint->exposer_ = std::make_unique<prometheus::Exposer>(address, /*num_threads=*/1);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot serve metrics on ", address, ": ", e.what()));
  }
  endpoint->registry_ = std::move(registry);
  endpoint->exposer_->RegisterCollectable(endpoint->registry_);
  const std::vector<int> ports = endpoint->exposer_->GetListeningPorts();
  endpoint->port_ = ports.empty() ? 0 : ports.front();
  return endpoint;
}

MetricsEndpoint::~MetricsEndpoint() = default;

}  // namespace benchfleet::coordinator
