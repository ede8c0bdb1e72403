// PrometheusMetrics fed known calls and records, asserted through Registry::Collect() serialised
// with prometheus-cpp's own TextSerializer (what /metrics serves), without HTTP: families, HELP,
// labels, values, zero-initialised label sets, histograms, the variant and figure rules, failed runs, and
// the label cardinality under 10,000 runs that differ only by seed, prompt and run id.
#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "benchfleet/v1/record.pb.h"
#include "common/hashing.h"
#include "common/rejection_codes.h"
#include "coordinator/metrics/figure_window.h"
#include "coordinator/metrics/prometheus_metrics.h"
#include "coordinator/metrics/run_labels.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace benchfleet::coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// Returns the families named `names`, in that order, each with its samples sorted by labels
// (prometheus-cpp keeps them in a hash map), serialised as /metrics would serve them.
std::string Exposition(PrometheusMetrics& metrics, const std::vector<std::string>& names) {
  const std::vector<prometheus::MetricFamily> all = metrics.registry()->Collect();
  std::vector<prometheus::MetricFamily> picked;
  for (const std::string& name : names) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const auto& f) { return f.name == name; });
    if (it == all.end()) {
      ADD_FAILURE() << "no family " << name;
      continue;
    }
    prometheus::MetricFamily family = *it;
    std::sort(family.metric.begin(), family.metric.end(),
              [](const prometheus::ClientMetric& a, const prometheus::ClientMetric& b) { return a.label < b.label; });
    picked.push_back(std::move(family));
  }
  return prometheus::TextSerializer().Serialize(picked);
}

// Returns the number of samples (lines that are not comments) the registry exposes.
size_t SampleCount(PrometheusMetrics& metrics) {
  const std::string text = prometheus::TextSerializer().Serialize(metrics.Collect());
  size_t samples = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (line[0] != '#') ++samples;
  }
  return samples;
}

// Returns the value of `label` of every sample of family `name`, sorted.
std::set<std::string> LabelValues(PrometheusMetrics& metrics, const std::string& name, const std::string& label) {
  std::set<std::string> values;
  for (const auto& family : metrics.registry()->Collect()) {
    if (family.name != name) continue;
    for (const auto& m : family.metric) {
      for (const auto& l : m.label) {
        if (l.name == label) values.insert(l.value);
      }
    }
  }
  return values;
}

// A stored warm run of llama-gen on gpu-01: wall 2.5 s, its main figure 50 tokens/s and a second
// headline figure TTFT 0.2 s (stamped as a backend's declaration stamps them), a figure that is no
// headline, two device buffers and a process peak, batch_size=8 in its matrix beside a seed.
v1::RunRecord WarmRun() {
  v1::RunRecord r;
  r.set_run_id(NewUuid());
  r.set_series_id("series-1");
  r.set_agent_id("gpu-01");
  r.set_backend("llama-server");
  r.set_task("llama-gen");
  r.set_mode("gpu");
  r.set_phase(v1::PHASE_WARM);
  (*r.mutable_matrix())["batch_size"] = "8";
  (*r.mutable_matrix())["seed"] = "42";
  (*r.mutable_params())["seed"] = "42";
  (*r.mutable_params())["prompt_sha256"] = Sha256Hex("hello");
  r.mutable_wall_duration()->set_seconds(2);
  r.mutable_wall_duration()->set_nanos(500000000);
  auto add_metric = [&](const std::string& name, double value, const std::string& unit, uint32_t headline,
                        const std::string& label, v1::Better better) {
    v1::Metric* m = r.add_metrics();
    m->set_name(name);
    m->set_value(value);
    m->set_unit(unit);
    m->set_headline(headline);
    m->set_label(label);
    m->set_better(better);
  };
  add_metric("tokens_per_second", 50, "tokens/s", 1, "output tokens/s", v1::BETTER_HIGHER);
  add_metric("time_to_first_token_seconds", 0.2, "s", 2, "time to first token", v1::BETTER_LOWER);
  add_metric("prompt_tokens", 31, "tokens", 0, "", v1::BETTER_UNSPECIFIED);
  auto add_memory = [&](v1::MemoryKind kind, const std::string& scope, uint64_t bytes) {
    v1::MemoryFigure* m = r.add_memory();
    m->set_kind(kind);
    m->set_scope(scope);
    m->set_bytes(bytes);
  };
  add_memory(v1::MEMORY_KIND_DEVICE_BUFFER, "CUDA0", uint64_t{1} << 30);
  add_memory(v1::MEMORY_KIND_DEVICE_BUFFER, "CUDA1", uint64_t{1} << 29);
  add_memory(v1::MEMORY_KIND_PROCESS_PEAK_RSS, "llama-server", uint64_t{3} << 30);
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  return r;
}

// ---- The pure pieces ----

TEST(VariantOfTest, SortsTheMatrixAndLeavesOutSeedsAndPrompts) {
  v1::RunRecord r;
  EXPECT_EQ(VariantOf(r), "none");
  (*r.mutable_matrix())["steps"] = "20";
  (*r.mutable_matrix())["batch_size"] = "8";
  (*r.mutable_matrix())["Seed"] = "1";
  (*r.mutable_matrix())["noise_seed"] = "7";
  (*r.mutable_matrix())["prompt"] = "a cat";
  (*r.mutable_matrix())["negative_PROMPT"] = "blurry";
  EXPECT_EQ(VariantOf(r), "batch_size=8,steps=20");

  // Only per-run keys: nothing is left to tell variants apart.
  v1::RunRecord seeds_only;
  (*seeds_only.mutable_matrix())["seed"] = "1";
  EXPECT_EQ(VariantOf(seeds_only), "none");
}

TEST(VariantOfTest, IsOtherPast64Characters) {
  v1::RunRecord r;
  // "k=" + 62 characters: exactly 64.
  (*r.mutable_matrix())["k"] = std::string(62, 'x');
  EXPECT_EQ(VariantOf(r), "k=" + std::string(62, 'x'));
  (*r.mutable_matrix())["k"] = std::string(63, 'x');
  EXPECT_EQ(VariantOf(r), "other");
}

TEST(RunLabelsOfTest, ReadsEveryLabelFromTheRecord) {
  v1::RunRecord r = WarmRun();
  r.set_simulated(true);
  const RunLabels labels = RunLabelsOf(r);
  EXPECT_EQ(labels.agent, "gpu-01");
  EXPECT_EQ(labels.task, "llama-gen");
  EXPECT_EQ(labels.backend, "llama-server");
  EXPECT_EQ(labels.mode, "gpu");
  EXPECT_EQ(labels.phase, "warm");
  EXPECT_EQ(labels.variant, "batch_size=8");
  EXPECT_EQ(labels.simulated, "true");
  EXPECT_EQ(PhaseLabel(v1::PHASE_COLD), "cold");
  EXPECT_EQ(PhaseLabel(v1::PHASE_VALIDATION), "validation");
  EXPECT_EQ(MemoryKindLabel(v1::MEMORY_KIND_CONTAINER_PEAK), "container_peak");
  EXPECT_EQ(MemoryKindLabel(v1::MEMORY_KIND_UNSPECIFIED), "");
  EXPECT_EQ(MemoryKindLabel(static_cast<v1::MemoryKind>(99)), "");
}

// The label values of a headline figure, and its value, for matchers.
std::tuple<std::string, std::string, std::string, std::string, double> Of(const HeadlineFigure& h) {
  return {h.figure, h.unit, h.headline, h.better, h.value};
}
using Figure = std::tuple<std::string, std::string, std::string, std::string, double>;

TEST(RunFiguresOfTest, ReadsTheHeadlineFiguresByRankWhateverTheirNames) {
  v1::RunRecord r = WarmRun();
  r.add_metrics()->set_name("predicted_per_second");  // no headline: not exported, whatever its name
  // Ranks, not record order, say which comes first.
  v1::Metric* third = r.mutable_metrics()->Add();
  third->set_name("goodput_requests_per_second");
  third->set_value(7);
  third->set_unit("requests/s");
  third->set_headline(3);
  r.mutable_metrics()->SwapElements(0, r.metrics_size() - 1);
  r.add_flags()->set_code("CACHE_HIT");
  v1::MemoryFigure* unknown = r.add_memory();
  unknown->set_kind(v1::MEMORY_KIND_UNSPECIFIED);
  unknown->set_bytes(1);
  const RunFigures f = RunFiguresOf(r);
  EXPECT_FALSE(f.failed);
  EXPECT_TRUE(f.cache_hit);
  EXPECT_FALSE(f.throughput_drop);
  EXPECT_EQ(f.wall_seconds, 2.5);
  std::vector<Figure> headlines;
  for (const HeadlineFigure& h : f.headlines) headlines.push_back(Of(h));
  // A figure its declaration gives no label is named by its metric; no `better`: "unspecified".
  EXPECT_THAT(headlines, ElementsAre(Figure("output tokens/s", "tokens/s", "1", "higher", 50),
                                     Figure("time to first token", "s", "2", "lower", 0.2),
                                     Figure("goodput_requests_per_second", "requests/s", "3", "unspecified", 7)));
  EXPECT_THAT(f.memory_peak_bytes, ElementsAre(Pair("device_buffer", 1073741824.0),
                                               Pair("process_peak_rss", 3221225472.0)));
}

TEST(RunFiguresOfTest, ARepeatedFigureKeepsItsLastValueAndNonFiniteOrOverlongOnesAreLeftOutOrOther) {
  v1::RunRecord r;
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  auto add = [&](const std::string& name, double value, uint32_t headline, const std::string& label) {
    v1::Metric* m = r.add_metrics();
    m->set_name(name);
    m->set_value(value);
    m->set_unit("s");
    m->set_headline(headline);
    m->set_label(label);
    m->set_better(v1::BETTER_LOWER);
  };
  add("latency_mean_seconds", 0.5, 1, "mean latency");
  add("ttft_p99_seconds", std::numeric_limits<double>::quiet_NaN(), 2, "TTFT p99");
  add("latency_mean_seconds", 0.75, 1, "mean latency");
  add("long", 1, 3, std::string(kMaxFigureLabelLength + 1, 'x'));
  add("just_long_enough", 2, 4, std::string(kMaxFigureLabelLength, 'y'));
  const RunFigures f = RunFiguresOf(r);
  std::vector<Figure> headlines;
  for (const HeadlineFigure& h : f.headlines) headlines.push_back(Of(h));
  EXPECT_THAT(headlines, ElementsAre(Figure("mean latency", "s", "1", "lower", 0.75),
                                     Figure("other", "other", "other", "other", 1),
                                     Figure(std::string(kMaxFigureLabelLength, 'y'), "s", "4", "lower", 2)));
  EXPECT_EQ(f.wall_seconds, std::nullopt);
  EXPECT_TRUE(f.memory_peak_bytes.empty());
}

TEST(RunFiguresOfTest, AFailedRunHasNoFigures) {
  v1::RunRecord r = WarmRun();
  r.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
  r.add_flags()->set_code("THROUGHPUT_DROP");
  const RunFigures f = RunFiguresOf(r);
  EXPECT_TRUE(f.failed);
  EXPECT_TRUE(f.throughput_drop);
  EXPECT_EQ(f.wall_seconds, std::nullopt);
  EXPECT_TRUE(f.headlines.empty());
  EXPECT_TRUE(f.memory_peak_bytes.empty());
}

// ---- The exposition ----

TEST(PrometheusMetricsTest, ExposesEveryFamilyOfTheCatalogueWithHelp) {
  PrometheusMetrics metrics;
  // prometheus-cpp leaves out a family without any label set: these are the ones whose labels
  // come from the fleet (agents, tasks, methods); the others exist from the start.
  std::set<std::string> at_start;
  for (const auto& f : metrics.registry()->Collect()) at_start.insert(f.name);
  EXPECT_EQ(at_start, (std::set<std::string>{
                          "benchfleet_coordinator_agents_connected", "benchfleet_fleet_agents_known",
                          "benchfleet_fleet_tasks", "benchfleet_coordinator_records_total",
                          "benchfleet_coordinator_records_rejected_total",
                          "benchfleet_coordinator_ingest_batch_records",
                          "benchfleet_coordinator_commit_duration_seconds",
                          "benchfleet_coordinator_group_commits_total",
                          "benchfleet_coordinator_group_commit_runs_total",
                          "benchfleet_coordinator_database_errors_total",
                          "benchfleet_coordinator_stale_task_updates_total",
                          "benchfleet_coordinator_run_conflicts_total"}));
  metrics.RpcMethodsServed({"/benchfleet.v1.Admin/ListRuns"});
  metrics.AgentConnected("gpu-01");
  // Five accepted runs: the spread gauges exist from the fifth.
  for (int i = 0; i < 5; ++i) metrics.RunStored(WarmRun());
  metrics.RegressionChecked("gpu-01", "llama-gen", "no_change");

  std::map<std::string, prometheus::MetricType> families;
  for (const auto& f : metrics.registry()->Collect()) {
    EXPECT_FALSE(f.help.empty()) << f.name;
    families[f.name] = f.type;
  }
  using prometheus::MetricType;
  const std::map<std::string, MetricType> catalogue = {
      {"benchfleet_coordinator_agents_connected", MetricType::Gauge},
      {"benchfleet_coordinator_agent_connected", MetricType::Gauge},
      {"benchfleet_fleet_agents_known", MetricType::Gauge},
      {"benchfleet_fleet_tasks", MetricType::Gauge},
      {"benchfleet_coordinator_records_total", MetricType::Counter},
      {"benchfleet_coordinator_records_rejected_total", MetricType::Counter},
      {"benchfleet_coordinator_run_conflicts_total", MetricType::Counter},
      {"benchfleet_coordinator_ingest_batch_records", MetricType::Histogram},
      {"benchfleet_coordinator_commit_duration_seconds", MetricType::Histogram},
      {"benchfleet_coordinator_group_commits_total", MetricType::Counter},
      {"benchfleet_coordinator_group_commit_runs_total", MetricType::Counter},
      {"benchfleet_coordinator_database_errors_total", MetricType::Counter},
      {"benchfleet_coordinator_stale_task_updates_total", MetricType::Counter},
      {"benchfleet_coordinator_grpc_requests_total", MetricType::Counter},
      {"benchfleet_coordinator_regression_checks_total", MetricType::Counter},
      {"benchfleet_run_last_wall_seconds", MetricType::Gauge},
      {"benchfleet_run_wall_seconds", MetricType::Histogram},
      {"benchfleet_run_last_figure", MetricType::Gauge},
      {"benchfleet_run_last_memory_peak_bytes", MetricType::Gauge},
      {"benchfleet_run_memory_peak_bytes", MetricType::Histogram},
      {"benchfleet_run_last_start_timestamp_seconds", MetricType::Gauge},
      {"benchfleet_run_main_figure_window_runs", MetricType::Gauge},
      {"benchfleet_run_main_figure_median", MetricType::Gauge},
      {"benchfleet_run_main_figure_median_ci_low", MetricType::Gauge},
      {"benchfleet_run_main_figure_median_ci_high", MetricType::Gauge},
      {"benchfleet_run_main_figure_cv_ratio", MetricType::Gauge},
      {"benchfleet_runs_flagged_total", MetricType::Counter},
  };
  EXPECT_EQ(families, catalogue);
}

TEST(PrometheusMetricsTest, FleetHealthAfterKnownCalls) {
  PrometheusMetrics metrics;
  metrics.RpcMethodsServed({"/benchfleet.v1.Admin/ListRuns", "/benchfleet.v1.Fleet/GetSeries"});
  metrics.AgentConnected("agent-a");
  metrics.AgentConnected("agent-b");
  metrics.AgentDisconnected("agent-b");
  metrics.RecordsStored(5);
  metrics.RecordsDuplicated(2);
  metrics.RecordRejected("malformed");
  metrics.BatchReceived(3);
  metrics.BatchReceived(100);
  metrics.GroupCommitted(7, absl::Milliseconds(20));
  metrics.DatabaseError("store_runs");
  metrics.RpcHandled("/benchfleet.v1.Admin/ListRuns", "OK");
  metrics.RpcHandled("/benchfleet.v1.Admin/ListRuns", "OK");
  metrics.RpcHandled("/benchfleet.v1.Fleet/GetSeries", "NOT_FOUND");
  metrics.RpcHandled("/grpc.health.v1.Health/Check", "OK");  // not served here: not a label value
  FleetSnapshot snapshot;
  snapshot.agents_known = 3;
  snapshot.recent_agents = {"agent-a", "agent-c"};
  snapshot.tasks_by_state = {{"pending", 2}, {"running", 1}, {"succeeded", 4}, {"failed", 0}, {"refused", 0},
                             {"lost", 1},    {"expired", 0}, {"cancelled", 0}};
  snapshot.open_tasks = {{"agent-c", "txt2img"}};
  metrics.FleetObserved(snapshot);

  // agent-b closed its stream and was not seen lately: its gauge is gone; agent-c was seen by
  // another replica: present at 0 here.
  EXPECT_EQ(Exposition(metrics, {"benchfleet_coordinator_agents_connected",
                                 "benchfleet_coordinator_agent_connected", "benchfleet_fleet_agents_known",
                                 "benchfleet_fleet_tasks", "benchfleet_coordinator_records_total",
                                 "benchfleet_coordinator_records_rejected_total",
                                 "benchfleet_coordinator_group_commits_total",
                                 "benchfleet_coordinator_group_commit_runs_total",
                                 "benchfleet_coordinator_database_errors_total",
                                 "benchfleet_coordinator_grpc_requests_total", "benchfleet_runs_flagged_total"}),
            R"(# HELP benchfleet_coordinator_agents_connected Agent streams open on this coordinator
# TYPE benchfleet_coordinator_agents_connected gauge
benchfleet_coordinator_agents_connected 1
# HELP benchfleet_coordinator_agent_connected 1 while this coordinator holds the agent's stream, else 0; present for every agent seen in the last 24 hours (max by (agent) across replicas)
# TYPE benchfleet_coordinator_agent_connected gauge
benchfleet_coordinator_agent_connected{agent="agent-a"} 1
benchfleet_coordinator_agent_connected{agent="agent-c"} 0
# HELP benchfleet_fleet_agents_known Agents in the database (fleet-wide: the same on every replica)
# TYPE benchfleet_fleet_agents_known gauge
benchfleet_fleet_agents_known 3
# HELP benchfleet_fleet_tasks Tasks in the database by state (fleet-wide: the same on every replica)
# TYPE benchfleet_fleet_tasks gauge
benchfleet_fleet_tasks{state="cancelled"} 0
benchfleet_fleet_tasks{state="expired"} 0
benchfleet_fleet_tasks{state="failed"} 0
benchfleet_fleet_tasks{state="lost"} 1
benchfleet_fleet_tasks{state="pending"} 2
benchfleet_fleet_tasks{state="refused"} 0
benchfleet_fleet_tasks{state="running"} 1
benchfleet_fleet_tasks{state="succeeded"} 4
# HELP benchfleet_coordinator_records_total Records received from agents, by what became of them
# TYPE benchfleet_coordinator_records_total counter
benchfleet_coordinator_records_total{result="duplicate"} 2
benchfleet_coordinator_records_total{result="stored"} 5
# HELP benchfleet_coordinator_records_rejected_total Records refused, by reason
# TYPE benchfleet_coordinator_records_rejected_total counter
benchfleet_coordinator_records_rejected_total{reason="invalid_run_id"} 0
benchfleet_coordinator_records_rejected_total{reason="malformed"} 1
benchfleet_coordinator_records_rejected_total{reason="missing_agent_id"} 0
benchfleet_coordinator_records_rejected_total{reason="missing_run_id"} 0
benchfleet_coordinator_records_rejected_total{reason="out_of_bounds"} 0
benchfleet_coordinator_records_rejected_total{reason="permission_denied"} 0
benchfleet_coordinator_records_rejected_total{reason="refused_by_database"} 0
benchfleet_coordinator_records_rejected_total{reason="too_large"} 0
benchfleet_coordinator_records_rejected_total{reason="unknown_phase"} 0
benchfleet_coordinator_records_rejected_total{reason="unknown_status"} 0
benchfleet_coordinator_records_rejected_total{reason="unrepresentable"} 0
# HELP benchfleet_coordinator_group_commits_total Group commits: transactions that stored a group of runs
# TYPE benchfleet_coordinator_group_commits_total counter
benchfleet_coordinator_group_commits_total 1
# HELP benchfleet_coordinator_group_commit_runs_total Runs written by group commits (stored, duplicate or refused)
# TYPE benchfleet_coordinator_group_commit_runs_total counter
benchfleet_coordinator_group_commit_runs_total 7
# HELP benchfleet_coordinator_database_errors_total Database operations that failed, by operation
# TYPE benchfleet_coordinator_database_errors_total counter
benchfleet_coordinator_database_errors_total{operation="fleet_snapshot"} 0
benchfleet_coordinator_database_errors_total{operation="scheduler_tick"} 0
benchfleet_coordinator_database_errors_total{operation="store_runs"} 1
benchfleet_coordinator_database_errors_total{operation="touch_machine"} 0
benchfleet_coordinator_database_errors_total{operation="upsert_machine"} 0
# HELP benchfleet_coordinator_grpc_requests_total gRPC calls finished, by full method name and status code
# TYPE benchfleet_coordinator_grpc_requests_total counter
benchfleet_coordinator_grpc_requests_total{code="NOT_FOUND",method="/benchfleet.v1.Fleet/GetSeries"} 1
benchfleet_coordinator_grpc_requests_total{code="OK",method="/benchfleet.v1.Admin/ListRuns"} 2
benchfleet_coordinator_grpc_requests_total{code="OK",method="/benchfleet.v1.Fleet/GetSeries"} 0
# HELP benchfleet_runs_flagged_total Stored runs flagged cache_hit or throughput_drop, found a regression by the coordinator's check, or failed; by agent, task and flag
# TYPE benchfleet_runs_flagged_total counter
benchfleet_runs_flagged_total{agent="agent-c",flag="cache_hit",task="txt2img"} 0
benchfleet_runs_flagged_total{agent="agent-c",flag="failed",task="txt2img"} 0
benchfleet_runs_flagged_total{agent="agent-c",flag="regression",task="txt2img"} 0
benchfleet_runs_flagged_total{agent="agent-c",flag="throughput_drop",task="txt2img"} 0
)");

  // Every reason RejectionCode can return exists at 0 before the first refusal.
  std::set<std::string> codes(std::begin(kRejectionCodes), std::end(kRejectionCodes));
  EXPECT_EQ(LabelValues(metrics, "benchfleet_coordinator_records_rejected_total", "reason"), codes);
}

TEST(PrometheusMetricsTest, IngestHistograms) {
  PrometheusMetrics metrics;
  metrics.BatchReceived(3);
  metrics.BatchReceived(100);
  metrics.GroupCommitted(7, absl::Milliseconds(20));
  EXPECT_EQ(Exposition(metrics, {"benchfleet_coordinator_ingest_batch_records",
                                 "benchfleet_coordinator_commit_duration_seconds"}),
            R"(# HELP benchfleet_coordinator_ingest_batch_records Records per RecordBatch received from an agent
# TYPE benchfleet_coordinator_ingest_batch_records histogram
benchfleet_coordinator_ingest_batch_records_count 2
benchfleet_coordinator_ingest_batch_records_sum 103
benchfleet_coordinator_ingest_batch_records_bucket{le="1"} 0
benchfleet_coordinator_ingest_batch_records_bucket{le="2"} 0
benchfleet_coordinator_ingest_batch_records_bucket{le="5"} 1
benchfleet_coordinator_ingest_batch_records_bucket{le="10"} 1
benchfleet_coordinator_ingest_batch_records_bucket{le="20"} 1
benchfleet_coordinator_ingest_batch_records_bucket{le="50"} 1
benchfleet_coordinator_ingest_batch_records_bucket{le="100"} 2
benchfleet_coordinator_ingest_batch_records_bucket{le="200"} 2
benchfleet_coordinator_ingest_batch_records_bucket{le="500"} 2
benchfleet_coordinator_ingest_batch_records_bucket{le="1000"} 2
benchfleet_coordinator_ingest_batch_records_bucket{le="+Inf"} 2
# HELP benchfleet_coordinator_commit_duration_seconds Latency of one group commit (COPY to COMMIT), in seconds
# TYPE benchfleet_coordinator_commit_duration_seconds histogram
benchfleet_coordinator_commit_duration_seconds_count 1
benchfleet_coordinator_commit_duration_seconds_sum 0.02
benchfleet_coordinator_commit_duration_seconds_bucket{le="0.001"} 0
benchfleet_coordinator_commit_duration_seconds_bucket{le="0.0025"} 0
benchfleet_coordinator_commit_duration_seconds_bucket{le="0.005"} 0
benchfleet_coordinator_commit_duration_seconds_bucket{le="0.01"} 0
benchfleet_coordinator_commit_duration_seconds_bucket{le="0.025"} 1
benchfleet_coordinator_commit_duration_seconds_bucket{le="0.05"} 1
benchfleet_coordinator_commit_duration_seconds_bucket{le="0.1"} 1
benchfleet_coordinator_commit_duration_seconds_bucket{le="0.25"} 1
benchfleet_coordinator_commit_duration_seconds_bucket{le="0.5"} 1
benchfleet_coordinator_commit_duration_seconds_bucket{le="1"} 1
benchfleet_coordinator_commit_duration_seconds_bucket{le="2.5"} 1
benchfleet_coordinator_commit_duration_seconds_bucket{le="5"} 1
benchfleet_coordinator_commit_duration_seconds_bucket{le="10"} 1
benchfleet_coordinator_commit_duration_seconds_bucket{le="+Inf"} 1
)");
}

constexpr char kFigureHelp[] =
    "Each headline figure of the last stored run of the label set that has it, as its backend declares it: "
    "figure (its name for people), unit (of the value), headline (1: the run's main figure, 2, 3...: the "
    "others), better (higher or lower)";

TEST(PrometheusMetricsTest, StoredRunsSetTheirFiguresAndFailedOnesOnlyCount) {
  PrometheusMetrics metrics;
  v1::RunRecord first = WarmRun();
  first.add_flags()->set_code("CACHE_HIT");
  metrics.RunStored(first);
  // The same label set again: only its main figure this time (30 tokens/s), no TTFT and no memory,
  // so those keep the first run's values.
  v1::RunRecord second = WarmRun();
  second.mutable_metrics()->DeleteSubrange(1, 2);
  second.mutable_metrics(0)->set_value(30);
  second.clear_memory();
  second.mutable_wall_duration()->set_seconds(1);
  second.add_flags()->set_code("THROUGHPUT_DROP");
  (*second.mutable_matrix())["seed"] = "43";
  metrics.RunStored(second);
  // A failed run of another mode: counted as failed, no series of its own.
  v1::RunRecord failed = WarmRun();
  failed.set_mode("cpu");
  failed.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
  metrics.RunStored(failed);
  metrics.RegressionChecked("gpu-01", "llama-gen", "regression");
  metrics.RegressionChecked("gpu-01", "llama-gen", "not_significant");
  metrics.RegressionChecked("gpu-01", "llama-gen", "ok");  // not a verdict: not counted

  const std::string labels =
      R"(agent="gpu-01",backend="llama-server",mode="gpu",phase="warm",simulated="false",task="llama-gen",variant="batch_size=8")";
  // The run labels with a figure's four, in the order /metrics sorts them.
  auto figure_labels = [](const std::string& better, const std::string& figure, const std::string& headline,
                          const std::string& unit) {
    return absl::StrCat(R"(agent="gpu-01",backend="llama-server",better=")", better, R"(",figure=")", figure,
                        R"(",headline=")", headline,
                        R"(",mode="gpu",phase="warm",simulated="false",task="llama-gen",unit=")", unit,
                        R"(",variant="batch_size=8")");
  };
  auto buckets = [&](const std::string& name, const std::vector<std::pair<std::string, int>>& counts) {
    std::string out;
    for (const auto& [le, n] : counts) absl::StrAppend(&out, name, "_bucket{", labels, ",le=\"", le, "\"} ", n, "\n");
    return out;
  };
  const std::string expected = absl::StrCat(
      "# HELP benchfleet_run_last_wall_seconds Wall time of the last stored run of the label set, in seconds\n"
      "# TYPE benchfleet_run_last_wall_seconds gauge\n"
      "benchfleet_run_last_wall_seconds{", labels, "} 1.5\n",
      "# HELP benchfleet_run_wall_seconds Wall time of stored runs, in seconds\n"
      "# TYPE benchfleet_run_wall_seconds histogram\n"
      "benchfleet_run_wall_seconds_count{", labels, "} 2\n",
      "benchfleet_run_wall_seconds_sum{", labels, "} 4\n",
      buckets("benchfleet_run_wall_seconds", {{"0.05", 0}, {"0.1", 0}, {"0.25", 0}, {"0.5", 0}, {"1", 0},
                                              {"2.5", 2}, {"5", 2}, {"10", 2}, {"25", 2}, {"60", 2},
                                              {"120", 2}, {"300", 2}, {"600", 2}, {"+Inf", 2}}),
      "# HELP benchfleet_run_last_figure ", kFigureHelp, "\n"
      "# TYPE benchfleet_run_last_figure gauge\n"
      "benchfleet_run_last_figure{", figure_labels("higher", "output tokens/s", "1", "tokens/s"), "} 30\n",
      "benchfleet_run_last_figure{", figure_labels("lower", "time to first token", "2", "s"), "} 0.2\n",
      "# HELP benchfleet_runs_flagged_total Stored runs flagged cache_hit or throughput_drop, found a regression "
      "by the coordinator's check, or failed; by agent, task and flag\n"
      "# TYPE benchfleet_runs_flagged_total counter\n"
      "benchfleet_runs_flagged_total{agent=\"gpu-01\",flag=\"cache_hit\",task=\"llama-gen\"} 1\n"
      "benchfleet_runs_flagged_total{agent=\"gpu-01\",flag=\"failed\",task=\"llama-gen\"} 1\n"
      "benchfleet_runs_flagged_total{agent=\"gpu-01\",flag=\"regression\",task=\"llama-gen\"} 1\n"
      "benchfleet_runs_flagged_total{agent=\"gpu-01\",flag=\"throughput_drop\",task=\"llama-gen\"} 1\n"
      "# HELP benchfleet_coordinator_regression_checks_total Runs of series checked against their baseline, by "
      "agent, task and verdict (regression, improvement, no_change, not_significant, baseline_too_small, "
      "sample_too_small)\n"
      "# TYPE benchfleet_coordinator_regression_checks_total counter\n"
      "benchfleet_coordinator_regression_checks_total{agent=\"gpu-01\",task=\"llama-gen\",verdict=\"baseline_too_small\"} 0\n"
      "benchfleet_coordinator_regression_checks_total{agent=\"gpu-01\",task=\"llama-gen\",verdict=\"improvement\"} 0\n"
      "benchfleet_coordinator_regression_checks_total{agent=\"gpu-01\",task=\"llama-gen\",verdict=\"no_change\"} 0\n"
      "benchfleet_coordinator_regression_checks_total{agent=\"gpu-01\",task=\"llama-gen\",verdict=\"not_significant\"} 1\n"
      "benchfleet_coordinator_regression_checks_total{agent=\"gpu-01\",task=\"llama-gen\",verdict=\"regression\"} 1\n"
      "benchfleet_coordinator_regression_checks_total{agent=\"gpu-01\",task=\"llama-gen\",verdict=\"sample_too_small\"} 0\n");
  EXPECT_EQ(Exposition(metrics, {"benchfleet_run_last_wall_seconds", "benchfleet_run_wall_seconds",
                                 "benchfleet_run_last_figure", "benchfleet_runs_flagged_total",
                                 "benchfleet_coordinator_regression_checks_total"}),
            expected);
}

TEST(PrometheusMetricsTest, TheLastStartTellsWhenTheLastValuesWereMeasured) {
  PrometheusMetrics metrics;
  const std::string labels =
      R"(agent="gpu-01",backend="llama-server",mode="gpu",phase="warm",simulated="false",task="llama-gen",variant="batch_size=8")";
  auto last_start = [&] {
    return Exposition(metrics, {"benchfleet_run_last_start_timestamp_seconds"});
  };
  const std::string header =
      "# HELP benchfleet_run_last_start_timestamp_seconds Start of the last stored run of the label set whose "
      "figures the last-value gauges show (Unix seconds; the time it was stored when it has no start): across "
      "replicas, the one with the newest holds the current values\n"
      "# TYPE benchfleet_run_last_start_timestamp_seconds gauge\n";
  v1::RunRecord run = WarmRun();
  run.mutable_start_time()->set_seconds(1767225600);
  run.mutable_start_time()->set_nanos(500000000);
  metrics.RunStored(run);
  EXPECT_EQ(last_start(), absl::StrCat(header, "benchfleet_run_last_start_timestamp_seconds{", labels, "} 1767225600.5\n"));
  // A failed run measures nothing: the time stays that of the values shown.
  v1::RunRecord failed = WarmRun();
  failed.mutable_start_time()->set_seconds(1767229200);
  failed.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
  metrics.RunStored(failed);
  EXPECT_EQ(last_start(), absl::StrCat(header, "benchfleet_run_last_start_timestamp_seconds{", labels, "} 1767225600.5\n"));
  // Without a start, the time it was stored.
  v1::RunRecord undated = WarmRun();
  undated.clear_start_time();
  const absl::Time before = absl::Now();
  metrics.RunStored(undated);
  for (const auto& family : metrics.registry()->Collect()) {
    if (family.name != "benchfleet_run_last_start_timestamp_seconds") continue;
    ASSERT_EQ(family.metric.size(), 1u);
    EXPECT_GE(family.metric[0].gauge.value, absl::ToDoubleSeconds(before - absl::UnixEpoch()));
  }
}

TEST(PrometheusMetricsTest, MemoryIsByKindWithTheLargestFigureOfEach) {
  PrometheusMetrics metrics;
  metrics.RunStored(WarmRun());
  const std::string labels =
      R"(agent="gpu-01",backend="llama-server",kind="device_buffer",mode="gpu",phase="warm",simulated="false",task="llama-gen",variant="batch_size=8")";
  const std::string rss_labels =
      R"(agent="gpu-01",backend="llama-server",kind="process_peak_rss",mode="gpu",phase="warm",simulated="false",task="llama-gen",variant="batch_size=8")";
  EXPECT_EQ(Exposition(metrics, {"benchfleet_run_last_memory_peak_bytes"}),
            absl::StrCat("# HELP benchfleet_run_last_memory_peak_bytes Largest memory figure of each kind in the last "
                         "stored run of the label set, in bytes (process and device kinds are different things: "
                         "never add them)\n"
                         "# TYPE benchfleet_run_last_memory_peak_bytes gauge\n"
                         "benchfleet_run_last_memory_peak_bytes{", labels, "} 1073741824\n",
                         "benchfleet_run_last_memory_peak_bytes{", rss_labels, "} 3221225472\n"));

  std::string histogram = absl::StrCat(
      "# HELP benchfleet_run_memory_peak_bytes Largest memory figure of each kind in stored runs, in bytes\n"
      "# TYPE benchfleet_run_memory_peak_bytes histogram\n");
  const std::vector<std::pair<std::string, int64_t>> series = {{labels, int64_t{1} << 30},
                                                                {rss_labels, int64_t{3} << 30}};
  for (const auto& [l, value] : series) {
    absl::StrAppend(&histogram, "benchfleet_run_memory_peak_bytes_count{", l, "} 1\n",
                    "benchfleet_run_memory_peak_bytes_sum{", l, "} ", value, "\n");
    // Buckets 64 MiB (2^26) .. 256 GiB (2^38).
    for (int e = 26; e <= 38; ++e) {
      const int64_t le = int64_t{1} << e;
      absl::StrAppend(&histogram, "benchfleet_run_memory_peak_bytes_bucket{", l, ",le=\"", le, "\"} ",
                      le >= value ? 1 : 0, "\n");
    }
    absl::StrAppend(&histogram, "benchfleet_run_memory_peak_bytes_bucket{", l, ",le=\"+Inf\"} 1\n");
  }
  EXPECT_EQ(Exposition(metrics, {"benchfleet_run_memory_peak_bytes"}), histogram);
}

TEST(PrometheusMetricsTest, FlagCountersExistAtZeroOnceTheirAgentAndTaskAreKnown) {
  PrometheusMetrics metrics;
  EXPECT_EQ(LabelValues(metrics, "benchfleet_runs_flagged_total", "agent"), std::set<std::string>{});
  metrics.TaskKnown("gpu-02", "txt2img");
  EXPECT_EQ(Exposition(metrics, {"benchfleet_runs_flagged_total"}),
            R"(# HELP benchfleet_runs_flagged_total Stored runs flagged cache_hit or throughput_drop, found a regression by the coordinator's check, or failed; by agent, task and flag
# TYPE benchfleet_runs_flagged_total counter
benchfleet_runs_flagged_total{agent="gpu-02",flag="cache_hit",task="txt2img"} 0
benchfleet_runs_flagged_total{agent="gpu-02",flag="failed",task="txt2img"} 0
benchfleet_runs_flagged_total{agent="gpu-02",flag="regression",task="txt2img"} 0
benchfleet_runs_flagged_total{agent="gpu-02",flag="throughput_drop",task="txt2img"} 0
)");
  // A first stored run of another pair brings its four too.
  metrics.RunStored(WarmRun());
  EXPECT_EQ(LabelValues(metrics, "benchfleet_runs_flagged_total", "agent"),
            (std::set<std::string>{"gpu-01", "gpu-02"}));
  EXPECT_EQ(LabelValues(metrics, "benchfleet_runs_flagged_total", "flag"),
            (std::set<std::string>{"cache_hit", "failed", "regression", "throughput_drop"}));
}

TEST(PrometheusMetricsTest, AgentGaugesFollowStreamsAndTheFleetSnapshot) {
  PrometheusMetrics metrics;
  // Two streams of one agent (a reconnect before the old one is noticed dead): 1 until both end.
  metrics.AgentConnected("a");
  metrics.AgentConnected("a");
  metrics.AgentDisconnected("a");
  FleetSnapshot snapshot;
  snapshot.recent_agents = {"b"};
  metrics.FleetObserved(snapshot);  // a is connected here: it stays
  const std::string head =
      "# HELP benchfleet_coordinator_agent_connected 1 while this coordinator holds the agent's stream, else 0; "
      "present for every agent seen in the last 24 hours (max by (agent) across replicas)\n"
      "# TYPE benchfleet_coordinator_agent_connected gauge\n";
  EXPECT_EQ(Exposition(metrics, {"benchfleet_coordinator_agent_connected"}),
            head + "benchfleet_coordinator_agent_connected{agent=\"a\"} 1\n"
                   "benchfleet_coordinator_agent_connected{agent=\"b\"} 0\n");
  metrics.AgentDisconnected("a");
  EXPECT_EQ(Exposition(metrics, {"benchfleet_coordinator_agent_connected"}),
            head + "benchfleet_coordinator_agent_connected{agent=\"a\"} 0\n"
                   "benchfleet_coordinator_agent_connected{agent=\"b\"} 0\n");
  // b no longer seen within 24 h, a seen: b's label set goes.
  snapshot.recent_agents = {"a"};
  metrics.FleetObserved(snapshot);
  EXPECT_EQ(Exposition(metrics, {"benchfleet_coordinator_agent_connected"}),
            head + "benchfleet_coordinator_agent_connected{agent=\"a\"} 0\n");
}

TEST(PrometheusMetricsTest, VariantsPastSixteenPerAgentAndTaskAreOther) {
  PrometheusMetrics metrics;
  std::set<std::string> expected;
  for (int i = 0; i < 18; ++i) {
    v1::RunRecord r = WarmRun();
    (*r.mutable_matrix())["batch_size"] = std::to_string(i);
    metrics.RunStored(r);
    if (i < 16) expected.insert("batch_size=" + std::to_string(i));
  }
  // A variant seen among the first 16 keeps its name after the limit was reached.
  v1::RunRecord again = WarmRun();
  (*again.mutable_matrix())["batch_size"] = "3";
  metrics.RunStored(again);
  // Another task of the same agent has a limit of its own; a too-long variant is other at once.
  v1::RunRecord other_task = WarmRun();
  other_task.set_task("txt2img");
  metrics.RunStored(other_task);
  v1::RunRecord long_variant = WarmRun();
  long_variant.set_task("txt2img-long");
  (*long_variant.mutable_matrix())["checkpoint"] = std::string(80, 'c');
  metrics.RunStored(long_variant);
  // ... and takes none of that task's 16 places.
  std::set<std::string> expected_long = {"other"};
  for (int i = 0; i < 16; ++i) {
    v1::RunRecord r = long_variant;
    (*r.mutable_matrix())["checkpoint"] = "c" + std::to_string(i);
    metrics.RunStored(r);
    expected_long.insert("batch_size=8,checkpoint=c" + std::to_string(i));
  }
  // Without a matrix: none.
  v1::RunRecord no_matrix = WarmRun();
  no_matrix.set_task("bench");
  no_matrix.clear_matrix();
  metrics.RunStored(no_matrix);

  std::map<std::string, std::set<std::string>> variants_by_task;
  std::map<std::string, double> count_by_variant;  // llama-gen's histogram counts
  for (const auto& family : metrics.registry()->Collect()) {
    if (family.name != "benchfleet_run_wall_seconds") continue;
    for (const auto& m : family.metric) {
      std::map<std::string, std::string> l;
      for (const auto& label : m.label) l[label.name] = label.value;
      variants_by_task[l["task"]].insert(l["variant"]);
      if (l["task"] == "llama-gen") count_by_variant[l["variant"]] = static_cast<double>(m.histogram.sample_count);
    }
  }
  expected.insert("other");
  EXPECT_EQ(variants_by_task["llama-gen"], expected);
  EXPECT_EQ(count_by_variant["other"], 2);         // batch_size 16 and 17
  EXPECT_EQ(count_by_variant["batch_size=3"], 2);  // the first and `again`
  EXPECT_EQ(variants_by_task["txt2img"], std::set<std::string>{"batch_size=8"});
  EXPECT_EQ(variants_by_task["txt2img-long"], expected_long);
  EXPECT_EQ(variants_by_task["bench"], std::set<std::string>{"none"});
}

// A backend declares a handful of headline figures; a record with more (not from a declaration)
// gets eight named ones per (agent, task), the rest in one series whose figure labels are "other".
TEST(PrometheusMetricsTest, HeadlineFiguresPastEightPerAgentAndTaskAreOther) {
  PrometheusMetrics metrics;
  auto run = [](const std::string& task, v1::Phase phase, int figures, double value) {
    v1::RunRecord r = WarmRun();
    r.set_task(task);
    r.set_phase(phase);
    r.clear_metrics();
    for (int i = 1; i <= figures; ++i) {
      v1::Metric* m = r.add_metrics();
      m->set_name("figure_" + std::to_string(i));
      m->set_label("figure " + std::to_string(i));
      m->set_unit("things/s");
      m->set_headline(i);
      m->set_better(v1::BETTER_HIGHER);
      m->set_value(value + i);
    }
    return r;
  };
  metrics.RunStored(run("llama-gen", v1::PHASE_WARM, 10, 100));
  // The cold phase of the same (agent, task) shares its eight places; another task has its own.
  metrics.RunStored(run("llama-gen", v1::PHASE_COLD, 10, 200));
  metrics.RunStored(run("txt2img", v1::PHASE_WARM, 9, 300));

  std::map<std::string, std::map<std::string, double>> by_series;  // task/phase -> figure -> value
  for (const auto& family : metrics.registry()->Collect()) {
    if (family.name != "benchfleet_run_last_figure") continue;
    for (const auto& m : family.metric) {
      std::map<std::string, std::string> l;
      for (const auto& label : m.label) l[label.name] = label.value;
      if (l["figure"] == "other") {
        EXPECT_EQ(l["unit"], "other");
        EXPECT_EQ(l["headline"], "other");
        EXPECT_EQ(l["better"], "other");
      }
      by_series[l["task"] + "/" + l["phase"]][l["figure"]] = m.gauge.value;
    }
  }
  std::map<std::string, double> warm, cold, image;
  for (int i = 1; i <= 8; ++i) {
    warm["figure " + std::to_string(i)] = 100 + i;
    cold["figure " + std::to_string(i)] = 200 + i;
    image["figure " + std::to_string(i)] = 300 + i;
  }
  warm["other"] = 110;  // figures 9 and 10: the last one set it
  cold["other"] = 210;
  image["other"] = 309;
  EXPECT_EQ(by_series["llama-gen/warm"], warm);
  EXPECT_EQ(by_series["llama-gen/cold"], cold);
  EXPECT_EQ(by_series["txt2img/warm"], image);
}

// Energy where a probe gave power, and the steady state of a serving run, as the series runner
// stamps them after the backend's figures (agent/probes/device_sampler.h,
// agent/runner/steady_state.h): a gauge each, by their labels; a run without them adds none.
TEST(PrometheusMetricsTest, EnergyAndSteadyStateFiguresAreGaugesWhereMeasured) {
  PrometheusMetrics metrics;
  auto add = [](v1::RunRecord* r, const std::string& name, double value, const std::string& unit, uint32_t headline,
                const std::string& label, v1::Better better) {
    v1::Metric* m = r->add_metrics();
    m->set_name(name);
    m->set_value(value);
    m->set_unit(unit);
    m->set_headline(headline);
    m->set_label(label);
    m->set_better(better);
  };
  // An openai-like run: its 5 headline figures, energy per token (6), the steady state (8, 9):
  // 8 figures, within the cap of 8 per (agent, task), so none is "other".
  v1::RunRecord serving = WarmRun();
  serving.set_task("chat-serve");
  serving.set_backend("openai");
  serving.clear_metrics();
  for (int i = 1; i <= 5; ++i) {
    add(&serving, "figure_" + std::to_string(i), i, "s", i, "figure " + std::to_string(i), v1::BETTER_LOWER);
  }
  add(&serving, "energy_token", 0.52, "J/token", 6, "energy per output token", v1::BETTER_LOWER);
  add(&serving, "steady_mean", 0.999375, "s", 8, "steady-state mean latency", v1::BETTER_LOWER);
  add(&serving, "warm_up", 20, "requests", 9, "MSER-5 warm-up requests", v1::BETTER_UNSPECIFIED);
  metrics.RunStored(serving);
  // A ComfyUI-like run with energy per image; a llama-server run measured without power.
  v1::RunRecord images = WarmRun();
  images.set_task("txt2img");
  images.set_backend("comfyui");
  images.clear_metrics();
  images.clear_matrix();
  add(&images, "per_second", 0.5, "images/s", 1, "images/s", v1::BETTER_HIGHER);
  add(&images, "energy_image", 150, "J/image", 4, "energy per image", v1::BETTER_LOWER);
  metrics.RunStored(images);
  metrics.RunStored(WarmRun());

  std::map<std::string, std::map<std::string, std::string>> by_task;  // task -> figure -> "unit headline better value"
  for (const auto& family : metrics.registry()->Collect()) {
    if (family.name != "benchfleet_run_last_figure") continue;
    for (const auto& m : family.metric) {
      std::map<std::string, std::string> l;
      for (const auto& label : m.label) l[label.name] = label.value;
      by_task[l["task"]][l["figure"]] = absl::StrCat(l["unit"], " ", l["headline"], " ", l["better"], " ", m.gauge.value);
    }
  }
  EXPECT_EQ(by_task["chat-serve"].size(), 8u);
  EXPECT_EQ(by_task["chat-serve"].count("other"), 0u);
  EXPECT_EQ(by_task["chat-serve"]["energy per output token"], "J/token 6 lower 0.52");
  EXPECT_EQ(by_task["chat-serve"]["steady-state mean latency"], "s 8 lower 0.999375");
  EXPECT_EQ(by_task["chat-serve"]["MSER-5 warm-up requests"], "requests 9 unspecified 20");
  EXPECT_EQ(by_task["txt2img"], (std::map<std::string, std::string>{{"energy per image", "J/image 4 lower 150"},
                                                                     {"images/s", "images/s 1 higher 0.5"}}));
  EXPECT_EQ(by_task["llama-gen"], (std::map<std::string, std::string>{{"output tokens/s", "tokens/s 1 higher 50"},
                                                                       {"time to first token", "s 2 lower 0.2"}}));
}

TEST(PrometheusMetricsTest, RunsDifferingOnlyBySeedPromptAndRunIdAddNoSeries) {
  PrometheusMetrics metrics;
  metrics.RpcMethodsServed({"/benchfleet.v1.Admin/ListRuns"});
  // The first set: 2 agents x 2 tasks x 2 phases x 2 variants, every figure, every flag.
  auto run = [](int i) {
    v1::RunRecord r = WarmRun();
    r.set_agent_id(i % 2 == 0 ? "gpu-01" : "gpu-02");
    r.set_task((i / 2) % 2 == 0 ? "llama-gen" : "llama-chat");
    r.set_phase((i / 4) % 2 == 0 ? v1::PHASE_WARM : v1::PHASE_COLD);
    (*r.mutable_matrix())["batch_size"] = (i / 8) % 2 == 0 ? "8" : "16";
    return r;
  };
  for (int i = 0; i < 16; ++i) {
    // Five accepted runs: the spread gauges of the main figure too.
    for (int k = 0; k < 5; ++k) metrics.RunStored(run(i));
    v1::RunRecord r = run(i);
    r.add_flags()->set_code("CACHE_HIT");
    metrics.RunStored(r);
    r.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
    metrics.RunStored(r);
    metrics.RegressionChecked(r.agent_id(), r.task(), "no_change");
  }
  const size_t before = SampleCount(metrics);

  for (int i = 0; i < 10000; ++i) {
    v1::RunRecord r = run(i % 16);  // a new run_id each time
    const std::string seed = std::to_string(1000 + i);
    const std::string prompt = Sha256Hex("prompt " + std::to_string(i));
    (*r.mutable_params())["seed"] = seed;
    (*r.mutable_params())["prompt_sha256"] = prompt;
    (*r.mutable_matrix())["seed"] = seed;
    (*r.mutable_matrix())["prompt"] = "a photo of cat number " + std::to_string(i);
    (*r.mutable_matrix())["negative_prompt_sha256"] = prompt;
    r.mutable_wall_duration()->set_seconds(1 + i % 100);
    r.mutable_metrics(0)->set_value(10 + i % 90);
    metrics.RunStored(r);
  }
  EXPECT_EQ(SampleCount(metrics), before);

  // The runs were counted, not dropped: 16 x 6 + 10,000 observations over the 16 label sets.
  uint64_t observed = 0;
  for (const auto& family : metrics.registry()->Collect()) {
    if (family.name != "benchfleet_run_wall_seconds") continue;
    EXPECT_EQ(family.metric.size(), 16u);
    for (const auto& m : family.metric) observed += m.histogram.sample_count;
  }
  EXPECT_EQ(observed, 10096u);
}

// Case 5 of issue 19: 5,000 records with distinct task and mode names (and more agents and
// backends than their caps) once gave 355,087 series. Every label is capped: the samples stay
// under the worst case README.md states, and the overflow values carry the rest.
TEST(PrometheusMetricsTest, DistinctLabelValuesPastTheCapsGoToOtherAndStayUnderTheWorstCase) {
  PrometheusMetrics metrics;
  for (int i = 0; i < 5000; ++i) {
    v1::RunRecord r = WarmRun();
    r.set_agent_id(absl::StrCat("agent-", i % 1000));
    r.set_task(absl::StrCat("task-", i));
    r.set_mode(absl::StrCat("mode-", i));
    r.set_backend(absl::StrCat("backend-", i % 20));
    r.set_phase(i % 3 == 0 ? v1::PHASE_COLD : i % 3 == 1 ? v1::PHASE_WARM : v1::PHASE_VALIDATION);
    r.set_simulated(i % 2 == 0);
    (*r.mutable_matrix())["batch_size"] = std::to_string(i);
    // Every memory kind, and more headline figures than the per-(agent, task) limit.
    for (int kind = v1::MEMORY_KIND_PROCESS_PEAK_RSS; kind <= v1::MEMORY_KIND_BUFFER_UNKNOWN; ++kind) {
      v1::MemoryFigure* m = r.add_memory();
      m->set_kind(static_cast<v1::MemoryKind>(kind));
      m->set_bytes(uint64_t{1} << 30);
    }
    for (int f = 0; f < 12; ++f) {
      v1::Metric* m = r.add_metrics();
      m->set_name(absl::StrCat("figure_", f, "_", i % 7));
      m->set_value(f);
      m->set_unit("s");
      m->set_headline(3 + f);
      m->set_label(absl::StrCat("figure ", f, " ", i % 7));
    }
    if (i % 5 == 0) r.add_flags()->set_code("CACHE_HIT");
    metrics.RunStored(r);
    if (i % 4 == 0) {
      r.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
      metrics.RunStored(r);
    }
    metrics.RegressionChecked(r.agent_id(), r.task(), i % 2 == 0 ? "regression" : "not_significant");
    metrics.TaskKnown(r.agent_id(), r.task());
  }
  const size_t samples = SampleCount(metrics);
  EXPECT_LE(samples, kWorstCaseSeries);  // no agent said Hello: no agent_connected sample

  const std::set<std::string> tasks = LabelValues(metrics, "benchfleet_run_last_wall_seconds", "task");
  EXPECT_EQ(tasks.size(), kMaxTaskLabels + 1);
  EXPECT_EQ(tasks.count(kLabelOther), 1u);
  EXPECT_EQ(LabelValues(metrics, "benchfleet_runs_flagged_total", "task").size(), kMaxTaskLabels + 1);
  EXPECT_EQ(LabelValues(metrics, "benchfleet_coordinator_regression_checks_total", "task").size(),
            kMaxTaskLabels + 1);
  const std::set<std::string> agents = LabelValues(metrics, "benchfleet_runs_flagged_total", "agent");
  EXPECT_EQ(agents.size(), kMaxAgentLabels + 1);
  EXPECT_EQ(agents.count(kLabelOther), 1u);
  EXPECT_EQ(LabelValues(metrics, "benchfleet_run_last_wall_seconds", "backend").size(), kMaxBackendLabels + 1);
  EXPECT_EQ(LabelValues(metrics, "benchfleet_run_last_wall_seconds", "mode").count(kLabelOther), 1u);

  // Bench-result label sets: the first kMaxRunLabelSets, then the overflow set of each phase and
  // simulated value; every run counted in one of them.
  uint64_t observed = 0;
  size_t overflow_sets = 0;
  for (const auto& family : metrics.registry()->Collect()) {
    if (family.name != "benchfleet_run_wall_seconds") continue;
    // The 1,024 named sets (some of them already all "_other": those are overflow sets too).
    EXPECT_GE(family.metric.size(), kMaxRunLabelSets);
    EXPECT_LE(family.metric.size(), kMaxRunLabelSets + 6);
    for (const auto& m : family.metric) {
      observed += m.histogram.sample_count;
      std::map<std::string, std::string> labels;
      for (const auto& l : m.label) labels[l.name] = l.value;
      if (labels["agent"] == kLabelOther && labels["task"] == kLabelOther && labels["backend"] == kLabelOther &&
          labels["mode"] == kLabelOther && labels["variant"] == kVariantOther) {
        ++overflow_sets;
      }
    }
  }
  EXPECT_EQ(overflow_sets, 6u);
  EXPECT_EQ(observed, 5000u);
  std::printf("5,000 records with distinct task and mode names: %zu samples (worst case %zu)\n", samples,
              kWorstCaseSeries);
}

}  // namespace
}  // namespace benchfleet::coordinator

namespace benchfleet::coordinator {
namespace {

// The spread gauges of the main figure (metrics/README.md, "Spread of the main figure"). Reference
// values from Python 3.11, computed independently: statistics.median, statistics.stdev(v) /
// statistics.mean(v), and a separate Python implementation of the splitmix64 percentile bootstrap
// that common/stats/spread.h describes (seed 20261202, 2,000 resamples, 95%).

const std::vector<double> kTen = {41.0, 42.5, 40.2, 43.1, 41.7, 39.8, 44.0, 42.2, 40.9, 41.3};

v1::RunRecord WarmRunAt(double tokens_per_second) {
  v1::RunRecord r = WarmRun();
  r.mutable_metrics(0)->set_value(tokens_per_second);
  return r;
}

// The one sample of family `name` (its value and labels); fails when there is not exactly one.
std::pair<double, std::map<std::string, std::string>> OneSample(PrometheusMetrics& metrics, const std::string& name) {
  for (const auto& family : metrics.Collect()) {
    if (family.name != name) continue;
    EXPECT_EQ(family.metric.size(), 1u) << name;
    if (family.metric.empty()) break;
    std::map<std::string, std::string> labels;
    for (const auto& l : family.metric[0].label) labels[l.name] = l.value;
    return {family.metric[0].gauge.value, labels};
  }
  ADD_FAILURE() << "no family " << name;
  return {NAN, {}};
}

bool HasFamily(PrometheusMetrics& metrics, const std::string& name) {
  const auto all = metrics.Collect();
  return std::any_of(all.begin(), all.end(), [&](const auto& f) { return f.name == name; });
}

TEST(FigureWindowTest, OnlyAcceptedRunsCount) {
  v1::RunRecord ok = WarmRun();
  EXPECT_TRUE(CountsTowardSpread(ok));
  v1::RunRecord drop = WarmRun();
  drop.add_flags()->set_code("THROUGHPUT_DROP");  // published and aggregated: it measured something
  EXPECT_TRUE(CountsTowardSpread(drop));
  for (const char* code : {"CACHE_HIT", "PROMPT_CACHE_USED", "CONTENDED", "NO_OFFLOAD", "PARTIAL_OFFLOAD", "INVALIDATED"}) {
    v1::RunRecord r = WarmRun();
    r.add_flags()->set_code(code);
    EXPECT_FALSE(CountsTowardSpread(r)) << code;
  }
  v1::RunRecord failed = WarmRun();
  failed.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
  EXPECT_FALSE(CountsTowardSpread(failed));
}

TEST(FigureWindowTest, KeepsTheLastTwentyAndGivesTheSpreadFromFive) {
  FigureWindow window;
  for (int i = 0; i < 25; ++i) window.Add(i);
  EXPECT_EQ(window.size(), kSpreadWindowRuns);
  EXPECT_EQ(window.values().front(), 5);
  EXPECT_EQ(window.values().back(), 24);
  const WindowSpread four = SpreadOf({41.0, 42.5, 40.2, 43.1});
  EXPECT_EQ(four.runs, 4u);
  EXPECT_FALSE(four.median || four.ci_low || four.cv);
  // Python: median 41.5, bootstrap (40.6, 42.650000000000006), CV 0.03127023411065691.
  const WindowSpread ten = SpreadOf(kTen);
  EXPECT_EQ(ten.runs, 10u);
  EXPECT_EQ(ten.median, 41.5);
  EXPECT_DOUBLE_EQ(*ten.ci_low, 40.6);
  EXPECT_DOUBLE_EQ(*ten.ci_high, 42.65);
  EXPECT_NEAR(*ten.cv, 0.03127023411065691, 1e-12);
}

TEST(PrometheusMetricsTest, TheMainFigureHasItsSpreadFromFiveAcceptedRunsOn) {
  PrometheusMetrics metrics;
  for (int i = 0; i < 4; ++i) metrics.RunStored(WarmRunAt(kTen[i]));
  // A cache hit and a failure measured nothing: neither enters the window.
  v1::RunRecord cached = WarmRunAt(900);
  cached.add_flags()->set_code("CACHE_HIT");
  metrics.RunStored(cached);
  v1::RunRecord failed = WarmRunAt(1);
  failed.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
  metrics.RunStored(failed);
  // Below five: the number of runs, no spread.
  const auto [runs, labels] = OneSample(metrics, "benchfleet_run_main_figure_window_runs");
  EXPECT_EQ(runs, 4);
  EXPECT_EQ(labels, (std::map<std::string, std::string>{{"agent", "gpu-01"},
                                                        {"task", "llama-gen"},
                                                        {"backend", "llama-server"},
                                                        {"mode", "gpu"},
                                                        {"phase", "warm"},
                                                        {"variant", "batch_size=8"},
                                                        {"simulated", "false"},
                                                        {"figure", "output tokens/s"},
                                                        {"unit", "tokens/s"}}));
  for (const char* name : {"benchfleet_run_main_figure_median", "benchfleet_run_main_figure_median_ci_low",
                           "benchfleet_run_main_figure_median_ci_high", "benchfleet_run_main_figure_cv_ratio"}) {
    EXPECT_FALSE(HasFamily(metrics, name)) << name;
  }

  for (int i = 4; i < 10; ++i) metrics.RunStored(WarmRunAt(kTen[i]));
  // Ten runs. Python: median 41.5, bootstrap (40.6, 42.650000000000006), CV 0.03127023411065691.
  EXPECT_EQ(OneSample(metrics, "benchfleet_run_main_figure_window_runs").first, 10);
  EXPECT_EQ(OneSample(metrics, "benchfleet_run_main_figure_median").first, 41.5);
  EXPECT_DOUBLE_EQ(OneSample(metrics, "benchfleet_run_main_figure_median_ci_low").first, 40.6);
  EXPECT_DOUBLE_EQ(OneSample(metrics, "benchfleet_run_main_figure_median_ci_high").first, 42.65);
  EXPECT_NEAR(OneSample(metrics, "benchfleet_run_main_figure_cv_ratio").first, 0.03127023411065691, 1e-12);
  EXPECT_EQ(OneSample(metrics, "benchfleet_run_main_figure_cv_ratio").second, labels);

  // Fifteen more, 40.0 + 0.25 k: the window keeps the last twenty (kTen[5..9] then the fifteen).
  // Python: median 41.625, bootstrap (40.95, 42.375), CV 0.02882308726515553.
  for (int k = 0; k < 15; ++k) metrics.RunStored(WarmRunAt(40.0 + 0.25 * k));
  EXPECT_EQ(OneSample(metrics, "benchfleet_run_main_figure_window_runs").first, 20);
  EXPECT_EQ(OneSample(metrics, "benchfleet_run_main_figure_median").first, 41.625);
  EXPECT_DOUBLE_EQ(OneSample(metrics, "benchfleet_run_main_figure_median_ci_low").first, 40.95);
  EXPECT_DOUBLE_EQ(OneSample(metrics, "benchfleet_run_main_figure_median_ci_high").first, 42.375);
  EXPECT_NEAR(OneSample(metrics, "benchfleet_run_main_figure_cv_ratio").first, 0.02882308726515553, 1e-12);
}

TEST(PrometheusMetricsTest, TheSpreadIsComputedAtTheScrapeNotAtEveryStoredRun) {
  PrometheusMetrics metrics;
  for (double v : kTen) metrics.RunStored(WarmRunAt(v));
  // Stored, not yet scraped: the gauges exist, the registry alone shows them unset.
  const auto unset = metrics.registry()->Collect();
  const auto median = std::find_if(unset.begin(), unset.end(),
                                   [](const auto& f) { return f.name == "benchfleet_run_main_figure_median"; });
  ASSERT_NE(median, unset.end());
  EXPECT_EQ(median->metric.at(0).gauge.value, 0);
  // What an Exposer serves refreshes them first; so does the scrape view.
  std::vector<prometheus::MetricFamily> scraped = metrics.scrape_view()->Collect();
  const auto refreshed = std::find_if(scraped.begin(), scraped.end(),
                                      [](const auto& f) { return f.name == "benchfleet_run_main_figure_median"; });
  ASSERT_NE(refreshed, scraped.end());
  EXPECT_EQ(refreshed->metric.at(0).gauge.value, 41.5);  // statistics.median
}

TEST(PrometheusMetricsTest, AnotherMainFigureStartsItsOwnWindowAndTheOldSeriesGo) {
  PrometheusMetrics metrics;
  for (double v : kTen) metrics.RunStored(WarmRunAt(v));
  // The same label set, now declaring another main figure: 3 runs of it, below five.
  for (int i = 0; i < 3; ++i) {
    v1::RunRecord r = WarmRunAt(7);
    r.mutable_metrics(0)->set_label("generation tokens/s");
    metrics.RunStored(r);
  }
  const auto [runs, labels] = OneSample(metrics, "benchfleet_run_main_figure_window_runs");
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(labels.at("figure"), "generation tokens/s");
  for (const char* name : {"benchfleet_run_main_figure_median", "benchfleet_run_main_figure_median_ci_low",
                           "benchfleet_run_main_figure_median_ci_high", "benchfleet_run_main_figure_cv_ratio"}) {
    EXPECT_FALSE(HasFamily(metrics, name)) << name;
  }
}

}  // namespace
}  // namespace benchfleet::coordinator
