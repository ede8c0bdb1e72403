// CoordinatorMetrics on a prometheus-cpp Registry (every family of metrics/README.md), and the
// HTTP endpoint (/metrics) that serves it. The only place the coordinator touches prometheus-cpp.
// Owned by CoordinatorServer; thread-safe (prometheus-cpp metrics are atomic; the label-set
// bookkeeping below is guarded by one mutex).
#ifndef BENCHFLEET_COORDINATOR_METRICS_PROMETHEUS_METRICS_H_
#define BENCHFLEET_COORDINATOR_METRICS_PROMETHEUS_METRICS_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "coordinator/metrics/coordinator_metrics.h"
#include "coordinator/metrics/figure_window.h"
#include "coordinator/metrics/run_labels.h"

namespace prometheus {
class Collectable;
class Counter;
class Exposer;
class Gauge;
class Histogram;
class Registry;
template <typename T>
class Family;
struct MetricFamily;
}  // namespace prometheus

namespace benchfleet::coordinator {

// At most this many distinct variant label values per (agent, task); later ones are "other".
inline constexpr size_t kMaxVariantsPerTask = 16;

// At most this many distinct headline figures (figure, unit, headline, better) per (agent, task);
// later ones all go to the one whose four labels are "other". A backend declares a handful
// (llama-server 3, openai 5, plus energy per token or per image where measured, plus the steady
// state's 2 on runs with requests: openai's 8 at most), so only a record that does not come from a
// declaration reaches it.
inline constexpr size_t kMaxFiguresPerTask = 8;

// The caps on the bench-result labels' values (metrics/README.md, "Label rules"): each counts the
// distinct values this coordinator has seen since it started, first come first kept; a value
// past its cap is exported as kLabelOther. They bound /metrics whatever the records say (5,000
// records with distinct task and mode names once made 355,087 series and a 70 MB /metrics).
inline constexpr char kLabelOther[] = "_other";
inline constexpr size_t kMaxAgentLabels = 256;    // `agent` values (bench results, flags, checks)
inline constexpr size_t kMaxTaskLabels = 64;      // `task` values
inline constexpr size_t kMaxBackendLabels = 16;   // `backend` values
inline constexpr size_t kMaxModesPerTask = 8;     // `mode` values per task
// (agent, task) pairs with flag and regression-check counters; past it, a new pair is counted
// on ("_other", "_other").
inline constexpr size_t kMaxAgentTaskPairs = 1024;
// Bench-result label sets (agent, task, backend, mode, phase, variant, simulated); past it, a
// new label set's figures go to the one whose agent, task, backend and mode are "_other" and
// variant "other" (its phase and simulated kept: at most 6 such sets).
inline constexpr size_t kMaxRunLabelSets = 1024;

// The worst-case number of samples /metrics can show, from the caps (metrics/README.md,
// "Worst-case series count"): 151 per bench-result label set (7 memory kinds, 5 spread gauges of the
// main figure), 4 flags and 6 verdicts (kRegressionVerdicts) per (agent, task) pair, 418 for fleet
// health (gRPC: 21 methods x 17 codes); not counting benchfleet_coordinator_agent_connected (one per
// agent that said Hello within 24 hours: the fleet's size).
inline constexpr size_t kWorstCaseSeries = (kMaxRunLabelSets + 6) * 151 + (kMaxAgentTaskPairs + 1) * (4 + 6) + 418;

class PrometheusMetrics : public CoordinatorMetrics {
 public:
  PrometheusMetrics();
  ~PrometheusMetrics() override;
  PrometheusMetrics(const PrometheusMetrics&) = delete;
  PrometheusMetrics& operator=(const PrometheusMetrics&) = delete;

  void RecordsStored(uint64_t count) override;
  void RecordsDuplicated(uint64_t count) override;
  void RecordsConflicted(uint64_t count) override;
  void RecordRejected(std::string_view reason) override;
  void AgentConnected(std::string_view agent_id) override;
  void AgentDisconnected(std::string_view agent_id) override;
  void BatchReceived(uint64_t records) override;
  void GroupCommitted(uint64_t runs, absl::Duration latency) override;
  void DatabaseError(std::string_view operation) override;
  void RunStored(const v1::RunRecord& record) override;
  void RegressionChecked(std::string_view agent_id, std::string_view task, std::string_view verdict) override;
  void TaskKnown(std::string_view agent_id, std::string_view task) override;
  void StaleTaskUpdate() override;
  void FleetObserved(const FleetSnapshot& snapshot) override;
  void RpcHandled(std::string_view method, std::string_view code) override;

  // Declares the gRPC methods served ("/benchfleet.v1.Admin/ListRuns", ...): each gets
  // benchfleet_coordinator_grpc_requests_total{code="OK"} at 0, and RpcHandled counts only these
  // (so the `method` label stays bounded whatever a client asks for).
  void RpcMethodsServed(const std::vector<std::string>& methods);

  // The registry, for tests (Registry::Collect, no HTTP): the spread gauges as last refreshed.
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  // Computes the spread gauges (median, interval, CV) of every label set whose window gained runs
  // since the last call. A bootstrap costs milliseconds, so it runs once per scrape rather than per
  // stored run: at most one per label set with new runs, outside the lock.
  void RefreshSpreads();
  // RefreshSpreads, then every family: what a scrape sees.
  std::vector<prometheus::MetricFamily> Collect();
  // The Collectable an Exposer serves (Collect() at every scrape); lives as long as this object.
  std::shared_ptr<prometheus::Collectable> scrape_view();

 private:
  // The last-value gauge and the histogram of one figure of one label set.
  struct FigureSeries {
    prometheus::Gauge* last = nullptr;
    prometheus::Histogram* histogram = nullptr;
  };
  // The spread gauges of a label set's main figure (benchfleet_run_main_figure_*), over its window.
  struct SpreadSeries {
    std::string figure_key;  // HeadlineFigure::Key() of the main figure the window holds
    FigureWindow window;
    bool dirty = false;  // in dirty_spreads_: values added since the gauges were last computed
    prometheus::Gauge* runs = nullptr;  // from the first accepted run
    prometheus::Gauge *median = nullptr, *ci_low = nullptr, *ci_high = nullptr, *cv = nullptr;  // from 5
  };
  // The series of one (agent, task, backend, mode, phase, variant, simulated), created when a
  // run first has the figure.
  struct RunSeries {
    RunLabels labels;  // variant bounded
    FigureSeries wall;
    std::map<std::string, prometheus::Gauge*> headlines;  // by HeadlineFigure::Key(), figures bounded
    std::map<std::string, FigureSeries> memory;  // by kind
    prometheus::Gauge* last_start = nullptr;     // benchfleet_run_last_start_timestamp_seconds
    SpreadSeries spread;
  };
  // benchfleet_runs_flagged_total of one (agent, task), in kRunFlags order.
  using FlagCounters = std::array<prometheus::Counter*, 4>;
  using AgentTask = std::pair<std::string, std::string>;
  // Where a stored run's flags and figures go (series null for a failed run not seen before).
  struct KnownRun {
    FlagCounters* flags = nullptr;
    RunSeries* series = nullptr;
  };

  prometheus::Gauge& AgentGaugeLocked(const std::string& agent);
  // `value`, or kLabelOther when `seen` holds `cap` other values already (then `value` is not kept).
  static std::string CappedLocked(std::set<std::string, std::less<>>& seen, size_t cap, const std::string& value);
  // The (agent, task) pair as exported: each capped, and ("_other", "_other") past kMaxAgentTaskPairs.
  AgentTask BoundedPairLocked(const std::string& agent, const std::string& task);
  FlagCounters& FlagsOfLocked(const std::string& agent, const std::string& task);
  std::string BoundedVariantLocked(const RunLabels& labels);
  prometheus::Gauge& HeadlineGaugeLocked(RunSeries& series, const HeadlineFigure& figure);
  KnownRun KnownRunLocked(const v1::RunRecord& record, bool failed);
  FigureSeries& FigureOfLocked(const RunLabels& labels, FigureSeries& series,
                               prometheus::Family<prometheus::Gauge>* last,
                               prometheus::Family<prometheus::Histogram>* histogram,
                               const std::vector<double>& buckets, const std::string& kind = "");
  void ObserveFigure(FigureSeries& series, double value);
  // Adds the run's main figure to the label set's window when it counts (CountsTowardSpread, a
  // main figure kept under the figure cap), sets window_runs, and from the fifth value makes the
  // other four gauges and marks the window for RefreshSpreads.
  void WindowLocked(RunSeries& series, const v1::RunRecord& record, const std::vector<HeadlineFigure>& headlines);

  std::shared_ptr<prometheus::Registry> registry_;

  // Fleet health.
  prometheus::Gauge* agents_connected_;
  prometheus::Family<prometheus::Gauge>* agent_connected_;
  prometheus::Gauge* agents_known_;
  prometheus::Family<prometheus::Gauge>* fleet_tasks_;
  prometheus::Counter* stored_;
  prometheus::Counter* duplicated_;
  prometheus::Counter* conflicts_;
  prometheus::Family<prometheus::Counter>* rejected_;
  prometheus::Histogram* batch_records_;
  prometheus::Histogram* commit_duration_;
  prometheus::Counter* commits_;
  prometheus::Counter* committed_runs_;
  prometheus::Family<prometheus::Counter>* database_errors_;
  prometheus::Counter* stale_task_updates_;
  prometheus::Family<prometheus::Counter>* grpc_requests_;
  prometheus::Family<prometheus::Counter>* regression_checks_;

  // Bench results.
  prometheus::Family<prometheus::Gauge>* last_wall_;
  prometheus::Family<prometheus::Histogram>* wall_;
  prometheus::Family<prometheus::Gauge>* last_figure_;
  prometheus::Family<prometheus::Gauge>* last_memory_;
  prometheus::Family<prometheus::Histogram>* memory_;
  prometheus::Family<prometheus::Gauge>* last_start_;
  prometheus::Family<prometheus::Gauge>* spread_runs_;
  prometheus::Family<prometheus::Gauge>* spread_median_;
  prometheus::Family<prometheus::Gauge>* spread_ci_low_;
  prometheus::Family<prometheus::Gauge>* spread_ci_high_;
  prometheus::Family<prometheus::Gauge>* spread_cv_;
  prometheus::Family<prometheus::Counter>* flagged_;

  std::mutex mu_;
  std::map<std::string, int, std::less<>> streams_by_agent_ ABSL_GUARDED_BY(mu_);  // open streams
  std::map<std::string, prometheus::Gauge*> agent_gauges_ ABSL_GUARDED_BY(mu_);  // agent_connected
  std::map<AgentTask, FlagCounters> flags_ ABSL_GUARDED_BY(mu_);  // bounded pairs
  std::set<AgentTask> pairs_ ABSL_GUARDED_BY(mu_);  // kMaxAgentTaskPairs
  std::set<std::string, std::less<>> agents_, tasks_, backends_;  // capped values; guarded by mu_
  std::map<std::string, std::set<std::string, std::less<>>> modes_ ABSL_GUARDED_BY(mu_);  // by (capped) task
  size_t named_label_sets_ ABSL_GUARDED_BY(mu_) = 0;  // run_series_ entries not made by the label-set cap
  std::map<AgentTask, std::set<std::string>> variants_ ABSL_GUARDED_BY(mu_);  // the first 16
  std::map<AgentTask, std::set<std::string>> figures_ ABSL_GUARDED_BY(mu_);  // the first 8 keys
  std::map<std::string, RunSeries> run_series_ ABSL_GUARDED_BY(mu_);  // by joined labels
  // RunStored's fast path, one hash lookup for a label set seen before: the run's labels as it
  // carries them (variant not bounded) -> its flags and series. Only runs whose variant kept its
  // name are kept, so this holds at most one entry per series of run_series_.
  std::unordered_map<std::string, KnownRun> known_runs_ ABSL_GUARDED_BY(mu_);
  std::string key_scratch_ ABSL_GUARDED_BY(mu_);  // reused for the lookup key, so a known run allocates nothing
  std::set<std::string, std::less<>> rpc_methods_ ABSL_GUARDED_BY(mu_);
  std::vector<SpreadSeries*> dirty_spreads_ ABSL_GUARDED_BY(mu_);
  class ScrapeView;
  std::shared_ptr<ScrapeView> scrape_view_ ABSL_GUARDED_BY(mu_);
};

// Serves a registry on http://ADDRESS/metrics until destroyed.
class MetricsEndpoint {
 public:
  // Binds `address` (HOST:PORT; port 0 picks a free one). INVALID_ARGUMENT when it cannot.
  // `registry`: PrometheusMetrics::scrape_view(), or any Collectable.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string& address, std::shared_ptr<prometheus::Collectable> registry);
  ~MetricsEndpoint();

  // The port actually bound.
  int port() const { return port_; }

 private:
  MetricsEndpoint() = default;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<prometheus::Collectable> registry_;
  int port_ = 0;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_METRICS_PROMETHEUS_METRICS_H_
