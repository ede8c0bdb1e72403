// Every panel of every Grafana dashboard shows data for runs of all four backends. One real
// benchfleet-coordinator (on a fresh test database) is filled through its real ingest, the
// agents' gRPC stream: a scripted agent per backend (llama-server, comfyui, openai, workflow)
// takes a task of a series submitted for it and sends records carrying that backend's own figures,
// stamped with its declaration (agent/backends/<backend>/figures.h, plus the device sampler's
// energy figures) as the series runner stamps them; an idle `benchfleet-agent serve` gives the
// agent gauges. Then, with the dashboards and rules read from deploy/ at run time:
//   PostgreSQL: every SQL query of every dashboard (panels, variables, annotations), expanded as
//     Grafana does and run as the read-only role benchfleet_grafana, returns rows; the per-call
//     panels name each backend's main figure with its unit;
//   Prometheus: Debian's real prometheus scrapes the coordinator and the agent with the
//     repository's prometheus.yml and rules.yml; every rule evaluates and every PromQL query of
//     every dashboard returns series; each backend's headline figures are gauges.
// tests/prometheus/prometheus_live_test covers two replicas and the alerts;
// tests/deploy/grafana_sql_test the exact rows of each SQL panel.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <memory>
#include <pqxx/pqxx>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "agent/backends/comfyui/figures.h"
#include "agent/backends/llama_server/figures.h"
#include "agent/backends/openai/figures.h"
#include "agent/backends/workflow/figures.h"
#include "agent/probes/device_sampler.h"
#include "benchfleet/v1/fleet.grpc.pb.h"
#include "common/figures.h"
#include "common/hashing.h"
#include "gtest/gtest.h"
#include "tests/deploy/deploy_files.h"
#include "tests/deploy/grafana_sql_macros.h"
#include "tests/integration/fleet.h"
#include "tests/prometheus/deploy_sources.h"
#include "tests/prometheus/prometheus_server.h"
#include "tests/prometheus/scripted_agent.h"
#include "tests/support/pg_test_db.h"
#include "tests/support/subprocess.h"

namespace benchfleet::testing {
namespace {

// The Grafana role script runs under this advisory lock in every test process (roles are
// cluster-wide; tests/deploy/grafana_sql_test takes the same one).
constexpr int64_t kRoleScriptLock = 7007001;
constexpr char kRole[] = "benchfleet_grafana";

// The checkout's deploy/ (where LoadDashboards reads the dashboards too).
std::string DeployDir() { return SourceDir() + "/deploy"; }

bool WriteFile(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << text;
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

// One backend's scripted agent, its series and the records it sends.
struct BackendCase {
  std::string agent;    // agent id (and, in its Hello, hostname)
  std::string backend;
  std::string task;
  std::string mode;
  std::string section;  // the spec's settings under the backend's key
  std::vector<FigureDeclaration> figures;  // what the runner stamps
  std::string main_label;                  // what its main figure is called, for people
  std::string main_unit;
};

std::vector<BackendCase> Backends() {
  return {
      {"gpu-llama", "llama-server", "llama-qwen-3b", "gpu", "  url: http://127.0.0.1:9\n",
       JoinFigures(agent::llama_server::kFigures, agent::kDeviceFigures), "generation tokens/s", "tokens/s"},
      {"gpu-comfy", "comfyui", "sd15-txt2img-512", "gpu", "  url: http://127.0.0.1:9\n  workflow: w.json\n",
       JoinFigures(agent::comfyui::kFigures, agent::kDeviceFigures), "images/s", "images/s"},
      {"cpu-openai", "openai", "llama-2-7b-openai", "cpu", "  url: http://127.0.0.1:9/v1\n  model: m\n",
       JoinFigures(agent::openai::kFigures, agent::kDeviceFigures), "output tokens/s", "tokens/s"},
      {"box-workflow", "workflow", "llama-2-7b-workflow-v6", "nvidia", "  command: workflow-v6\n",
       JoinFigures(agent::workflow::kFigures, agent::kDeviceFigures), "tokens/s", "tokens/s"},
  };
}

void AddMetric(v1::RunRecord* r, const std::string& name, double value, const std::string& unit) {
  v1::Metric* m = r->add_metrics();
  m->set_name(name);
  m->set_value(value);
  m->set_unit(unit);
}

void AddMemory(v1::RunRecord* r, v1::MemoryKind kind, const std::string& scope, uint64_t mib,
               const std::string& source) {
  v1::MemoryFigure* m = r->add_memory();
  m->set_kind(kind);
  m->set_scope(scope);
  m->set_bytes(mib << 20);
  m->set_source(source);
}

// The records a backend's series makes, with the figures that backend records: llama-server a
// cold call and three warm ones (the third flagged THROUGHPUT_DROP, energy measured), ComfyUI the
// same (its third warm call a cache hit), openai a warm-up and one run over every prompt,
// workflow three COLD repetitions (a fresh container each) with the container's peak.
std::vector<v1::RunRecord> RecordsOf(const BackendCase& b, const v1::TaskAssignment& task, absl::Time start) {
  std::vector<v1::RunRecord> out;
  auto run = [&](v1::Phase phase, uint32_t call, uint32_t repetition) -> v1::RunRecord& {
    v1::RunRecord& r = out.emplace_back();
    r.set_run_id(NewUuid());
    r.set_series_id(task.series_id());
    r.set_task_id(task.task_id());
    r.set_agent_id(b.agent);
    r.set_conditions_fingerprint("fp-" + b.agent);
    r.set_backend(b.backend);
    r.set_task(b.task);
    r.set_mode(b.mode);
    r.set_phase(phase);
    r.set_call_index(call);
    r.set_repetition(repetition);
    const absl::Time t = start + absl::Seconds(5 * static_cast<int64_t>(out.size()));
    r.mutable_start_time()->set_seconds(absl::ToUnixSeconds(t));
    r.mutable_end_time()->set_seconds(absl::ToUnixSeconds(t) + 2);
    r.mutable_wall_duration()->set_seconds(2);
    r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
    r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
    r.set_agent_version("scripted");
    return r;
  };
  if (b.backend == "llama-server") {
    for (uint32_t i = 0; i < 4; ++i) {
      v1::RunRecord& r = run(i == 0 ? v1::PHASE_COLD : v1::PHASE_WARM, i == 0 ? 1 : i, 1);
      AddMetric(&r, "predicted_per_second", i == 3 ? 30 : 50 + i, "tokens/s");
      AddMetric(&r, "time_to_first_token_seconds", i == 0 ? 1.5 : 0.2, "s");
      AddMetric(&r, "prompt_per_second", 400, "tokens/s");
      AddMetric(&r, "tokens_predicted", 64, "tokens");
      AddMetric(&r, agent::kEnergyPerTokenMetric, 0.5, "J/token");
      AddMetric(&r, agent::kEnergyMetric, 32, "J");
      AddMemory(&r, v1::MEMORY_KIND_PROCESS_PEAK_RSS, "llama-server", 2048, "rusage");
      AddMemory(&r, v1::MEMORY_KIND_DEVICE_USED, "CUDA0", 9216, "nvidia-smi");
      AddMemory(&r, v1::MEMORY_KIND_DEVICE_BUFFER, "CUDA0", 4096, "llama-server log");
      if (i == 3) {
        v1::Flag* f = r.add_flags();
        f->set_code("THROUGHPUT_DROP");
        f->set_reason("generation tokens/s 30.0 is 59% of the series' median 51.0");
      }
    }
  } else if (b.backend == "comfyui") {
    for (uint32_t i = 0; i < 4; ++i) {
      v1::RunRecord& r = run(i == 0 ? v1::PHASE_COLD : v1::PHASE_WARM, i == 0 ? 1 : i, 1);
      (*r.mutable_matrix())["steps"] = "20";
      AddMetric(&r, "images_per_second", i == 3 ? 40 : 0.8, "images/s");
      AddMetric(&r, "server_execution_seconds", i == 3 ? 0.02 : 1.2, "s");
      AddMetric(&r, "images", 1, "images");
      AddMemory(&r, v1::MEMORY_KIND_PROCESS_PEAK_RSS, "comfyui", 3072, "rusage");
      AddMemory(&r, v1::MEMORY_KIND_DEVICE_USED, "CUDA0", 6144, "nvidia-smi");
      if (i == 3) {
        v1::Flag* f = r.add_flags();
        f->set_code("CACHE_HIT");
        f->set_reason("0.02 s: served from ComfyUI's cache");
      }
    }
  } else if (b.backend == "openai") {
    for (uint32_t i = 0; i < 2; ++i) {
      v1::RunRecord& r = run(i == 0 ? v1::PHASE_COLD : v1::PHASE_WARM, 1, 1);
      (*r.mutable_matrix())["concurrency"] = "4";
      AddMetric(&r, "output_tokens_per_second", i == 0 ? 60 : 310, "tokens/s");
      AddMetric(&r, "ttft_p99_seconds", 0.41, "s");
      AddMetric(&r, "latency_mean_seconds", 1.6, "s");
      AddMetric(&r, "goodput_requests_per_second", 2.5, "requests/s");
      AddMetric(&r, "tpot_p99_seconds", 0.021, "s");
      AddMetric(&r, "latency_p50_seconds", 1.5, "s");
      AddMetric(&r, "requests", i == 0 ? 1 : 100, "requests");
      AddMetric(&r, "output_tokens", i == 0 ? 64 : 6400, "tokens");
    }
  } else {
    for (uint32_t i = 1; i <= 3; ++i) {
      v1::RunRecord& r = run(v1::PHASE_COLD, 1, i);
      (*r.mutable_matrix())["batch_size"] = "8";
      AddMetric(&r, "output_tokens_per_second", 120 + i, "tokens/s");
      AddMetric(&r, "latency_mean_seconds", 0.9, "s");
      AddMetric(&r, "latency_p99_seconds", 1.4, "s");
      AddMetric(&r, "latency_p50_seconds", 0.85, "s");
      AddMetric(&r, "requests", 100, "requests");
      // The container's name is the figure's source, not its scope: one column across repetitions.
      AddMemory(&r, v1::MEMORY_KIND_CONTAINER_PEAK, "container", 14336, "docker stats workflow-v6-" + std::to_string(i));
    }
  }
  for (v1::RunRecord& r : out) StampFigures(b.figures, &r);
  return out;
}

// A benchfleet-coordinator process with its gRPC and /metrics ports.
struct Coordinator {
  Coordinator(const std::string& database_url, const std::string& work)
      : log_path(work + "/coordinator.log"), port(FreePort()), metrics_port(FreePort()) {
    process = std::make_unique<Subprocess>(
        std::vector<std::string>{BinaryPath("benchfleet-coordinator"), "--plaintext", "--listen", address(),
                                 "--metrics-listen", metrics_address()},
        std::map<std::string, std::string>{{"BENCHFLEET_DATABASE_URL", database_url}}, log_path);
  }
  bool WaitListening() {
    return PollUntil([&] { return ReadAll(log_path).find("listening on") != std::string::npos || !process->running(); },
                     absl::Seconds(60)) &&
           process->running();
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port); }
  std::string metrics_address() const { return "127.0.0.1:" + std::to_string(metrics_port); }

  std::string log_path;
  int port;
  int metrics_port;
  std::unique_ptr<Subprocess> process;
};

using Rows = std::vector<std::vector<std::string>>;

class DashboardsLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BENCHFLEET_REQUIRE_PG(db_);
    work_ = MakeTempDir("dashboards-live");
  }

  void TearDown() override {
    scripted_.clear();
    for (Subprocess* p : {agent_.get(), coordinator_ ? coordinator_->process.get() : nullptr}) {
      if (p == nullptr) continue;
      p->Signal(SIGTERM);
      if (!PollUntil([&] { return !p->running(); }, absl::Seconds(10))) p->Signal(SIGKILL);
      p->Wait();
    }
    prometheus_.reset();
    if (HasFailure() && !work_.empty()) std::fprintf(stderr, "logs of the failed run are in %s\n", work_.c_str());
  }

  std::unique_ptr<v1::Fleet::Stub> Fleet() {
    return v1::Fleet::NewStub(grpc::CreateChannel(coordinator_->address(), grpc::InsecureChannelCredentials()));
  }

  // Fills the coordinator: a series per backend, taken by its scripted agent, which sends its
  // records through the stream; one run invalidated (a run annotation). Returns the runs sent.
  size_t FillThroughIngest() {
    size_t sent = 0;
    const absl::Time start = absl::Now() - absl::Minutes(5);
    for (const BackendCase& b : Backends()) {
      SCOPED_TRACE(b.backend);
      scripted_.push_back(std::make_unique<ScriptedAgent>(coordinator_->address(), b.agent,
                                                          std::map<std::string, std::string>{{"class", b.mode}}));
      ScriptedAgent& agent = *scripted_.back();
      EXPECT_TRUE(agent.Connect());
      grpc::ClientContext context;
      v1::SubmitSeriesRequest request;
      request.set_spec_yaml(absl::StrCat("series: ", b.task, "-series\ntask: ", b.task, "\nbackend: ", b.backend, "\n",
                                         b.backend, ":\n", b.section, "runs:\n  cold: 1\n  warm: 3\n",
                                         "targets: {agents: [", b.agent, "]}\n"));
      request.set_source_name(b.backend + ".yaml");
      v1::SubmitSeriesResponse response;
      const grpc::Status s = Fleet()->SubmitSeries(&context, request, &response);
      EXPECT_TRUE(s.ok()) << s.error_message() << "\n" << request.spec_yaml();
      const std::optional<v1::TaskAssignment> task = agent.WaitForAssignment(absl::Seconds(15));
      if (!task.has_value()) {
        ADD_FAILURE() << b.agent << " got no task";
        continue;
      }
      const std::vector<v1::RunRecord> records = RecordsOf(b, *task, start);
      agent.Accept(task->task_id(), records.size());
      agent.Send(records);
      EXPECT_TRUE(agent.WaitForAcked(records.size(), 0, absl::Seconds(15))) << b.agent;
      agent.Finish(task->task_id(), true, records.size(), 0, absl::StrCat(records.size(), " runs made"));
      sent += records.size();
      if (b.backend == "openai") invalidated_ = records.front().run_id();
    }
    grpc::ClientContext context;
    v1::InvalidateRunsRequest invalidate;
    invalidate.add_run_ids(invalidated_);
    invalidate.set_reason("the endpoint was shared with another test");
    v1::InvalidateRunsResponse invalidated;
    const grpc::Status s = Fleet()->InvalidateRuns(&context, invalidate, &invalidated);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return sent;
  }

  void RunRoleScript() {
    absl::StatusOr<std::string> script = ReadTextFile(DeployDir() + "/grafana/postgres-readonly-role.sql");
    ASSERT_TRUE(script.ok()) << script.status();
    pqxx::connection admin(TestServerUrl());
    pqxx::nontransaction lock(admin);
    lock.exec("SELECT pg_advisory_lock(" + std::to_string(kRoleScriptLock) + ")");
    try {
      pqxx::connection c(db_.url());
      pqxx::nontransaction tx(c);
      tx.exec(*script);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "postgres-readonly-role.sql: " << e.what();
    }
    lock.exec("SELECT pg_advisory_unlock(" + std::to_string(kRoleScriptLock) + ")");
  }

  absl::StatusOr<Rows> QueryAsRole(const std::string& sql) {
    try {
      pqxx::connection c(absl::StrCat(db_.url(), db_.url().find('?') == std::string::npos ? "?" : "&", "user=", kRole));
      pqxx::nontransaction tx(c);
      Rows rows;
      for (const auto& row : tx.exec(sql)) {
        std::vector<std::string> cells;
        for (const auto& field : row) cells.push_back(field.is_null() ? "NULL" : field.c_str());
        rows.push_back(std::move(cells));
      }
      return rows;
    } catch (const std::exception& e) {
      return absl::InternalError(e.what());
    }
  }

  // The dashboard's variables with "All" selected: a SQL variable takes every value its query
  // returns; a Prometheus one (label_values) the label values the records make.
  GrafanaSqlContext ContextFor(const Dashboard& d, absl::Time from, absl::Time to) {
    GrafanaSqlContext context{from, to, {}};
    for (const DashboardQuery& q : Queries(d)) {
      if (q.source != QuerySource::kVariable) continue;
      GrafanaVariable& variable = context.variables[q.name];
      if (q.datasource_type != "postgres") {
        for (const BackendCase& b : Backends()) variable.values.push_back(q.name == "task" ? b.task : b.agent);
        EXPECT_TRUE(q.name == "agent" || q.name == "task") << d.file << ": Prometheus variable " << q.name;
        continue;
      }
      absl::StatusOr<std::string> sql = ExpandGrafanaSql(q.text, context);
      EXPECT_TRUE(sql.ok()) << d.file << ": " << q.name << ": " << sql.status();
      if (!sql.ok()) continue;
      absl::StatusOr<Rows> rows = QueryAsRole(*sql);
      EXPECT_TRUE(rows.ok()) << d.file << ": variable " << q.name << ": " << rows.status();
      if (!rows.ok()) continue;
      for (const auto& row : *rows) variable.values.push_back(row[0]);
    }
    return context;
  }

  PgTestDb db_;
  std::string work_;
  std::unique_ptr<Coordinator> coordinator_;
  std::unique_ptr<Subprocess> agent_;
  int agent_metrics_port_ = 0;
  std::vector<std::unique_ptr<ScriptedAgent>> scripted_;
  std::unique_ptr<PrometheusServer> prometheus_;
  std::string invalidated_;
};

TEST_F(DashboardsLiveTest, EveryPanelOfEveryDashboardShowsTheFourBackendsRuns) {
  const std::string prometheus_binary = PrometheusServer::BinaryPath();
  struct stat st;
  ASSERT_EQ(::stat(prometheus_binary.c_str(), &st), 0)
      << prometheus_binary << " is missing: apt-get install prometheus (Debian's, 2.42)";

  coordinator_ = std::make_unique<Coordinator>(db_.url(), work_);
  ASSERT_TRUE(coordinator_->WaitListening()) << ReadAll(coordinator_->log_path);
  // An idle real agent: the agent gauges (outbox, connection, task running) of the fleet overview.
  agent_metrics_port_ = FreePort();
  ::mkdir((work_ + "/agent").c_str(), 0755);
  std::ofstream(work_ + "/agent/agent.yaml") << "state_dir: " << work_ << "/agent/state\nlabels:\n  class: idle\n";
  agent_ = StartAgent(work_ + "/agent", "serve",
                      {"serve", "--config", work_ + "/agent/agent.yaml", "--coordinator", coordinator_->address(),
                       "--metrics-listen", "127.0.0.1:" + std::to_string(agent_metrics_port_)});

  const size_t sent = FillThroughIngest();
  ASSERT_EQ(sent, 13u);
  ASSERT_TRUE(PollUntil([&] { return db_.QueryValue("SELECT count(*) FROM runs") == std::to_string(sent); },
                        absl::Seconds(20)))
      << db_.QueryValue("SELECT count(*) FROM runs") << " runs stored, " << sent << " sent";
  // The store derived each backend's main figure from its declaration.
  EXPECT_EQ(db_.QueryValue("SELECT string_agg(f, '; ' ORDER BY f) FROM (SELECT DISTINCT backend || ': ' || headline_label "
                           "|| ' (' || headline_unit || ', ' || headline_better || ')' AS f FROM runs) AS s"),
            "comfyui: images/s (images/s, higher); llama-server: generation tokens/s (tokens/s, higher); "
            "openai: output tokens/s (tokens/s, higher); workflow: tokens/s (tokens/s, higher)");

  // ===== PostgreSQL: every SQL query of every dashboard, as Grafana's read-only role.
  ASSERT_NO_FATAL_FAILURE(RunRoleScript());
  absl::StatusOr<std::vector<Dashboard>> dashboards = LoadDashboards();
  ASSERT_TRUE(dashboards.ok()) << dashboards.status();
  const absl::Time from = absl::Now() - absl::Hours(1), to = absl::Now() + absl::Hours(1);
  size_t sql_queries = 0;
  std::map<std::string, Rows> rows_of;  // "file: name" -> rows
  for (const Dashboard& d : *dashboards) {
    const GrafanaSqlContext context = ContextFor(d, from, to);
    for (const DashboardQuery& q : Queries(d)) {
      if (q.datasource_type != "postgres") continue;
      SCOPED_TRACE(absl::StrCat(d.file, ": ", q.name));
      absl::StatusOr<std::string> sql = ExpandGrafanaSql(q.text, context);
      ASSERT_TRUE(sql.ok()) << sql.status();
      absl::StatusOr<Rows> rows = QueryAsRole(*sql);
      ASSERT_TRUE(rows.ok()) << rows.status() << "\n" << *sql;
      EXPECT_FALSE(rows->empty()) << "no rows for the runs of the four backends:\n" << *sql;
      rows_of[absl::StrCat(d.file, ": ", q.name)] = *rows;
      ++sql_queries;
    }
  }
  EXPECT_GE(sql_queries, 12u);
  // The per-call panel draws each backend's main figure, named with its unit.
  std::set<std::string> lines;
  for (const auto& [key, rows] : rows_of) {
    if (!absl::StartsWith(key, "per-run.json: Main figure of each call")) continue;
    for (const auto& row : rows) lines.insert(row[1]);
  }
  for (const BackendCase& b : Backends()) {
    const std::string warm = absl::StrCat(b.agent, " ", b.task, " ", b.mode, " ", b.backend == "workflow" ? "cold" : "warm",
                                          ": ", b.main_label, " (", b.main_unit, ")");
    EXPECT_EQ(lines.count(warm), 1u) << warm << " is not a line of the per-call panel: " << absl::StrJoin(lines, " | ");
  }

  // ===== Prometheus: the repository's configuration and rules, scraping this coordinator and agent.
  std::string error;
  const std::string rules_text = ReadAll(DeployDir() + "/prometheus/rules.yml");
  const std::vector<PromExpression> rules = RuleExpressions(rules_text, &error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_TRUE(WriteFile(work_ + "/rules.yml", RewriteRules(rules_text, "2s", &error)));
  ASSERT_TRUE(error.empty()) << error;
  const TestConfig config =
      RewritePrometheusConfig(ReadAll(DeployDir() + "/prometheus/prometheus.yml"), work_ + "/rules.yml", work_ + "/sd", &error);
  ASSERT_TRUE(error.empty()) << error;
  ::mkdir((work_ + "/sd").c_str(), 0755);
  auto write_targets = [&](int prometheus_port) {
    for (const auto& [job, role] : config.jobs) {
      std::vector<std::string> targets;
      if (role == JobRole::kCoordinator) targets = {coordinator_->metrics_address()};
      if (role == JobRole::kAgent) targets = {"127.0.0.1:" + std::to_string(agent_metrics_port_)};
      if (role == JobRole::kPrometheus) targets = {"127.0.0.1:" + std::to_string(prometheus_port)};
      ASSERT_TRUE(WriteFile(config.target_files.at(job), FileSdTargets(targets, config.target_labels.at(job))));
    }
  };
  write_targets(0);
  ASSERT_TRUE(WriteFile(work_ + "/prometheus.yml", config.prometheus_yml));
  prometheus_ = std::make_unique<PrometheusServer>();
  ASSERT_TRUE(prometheus_->Start(work_ + "/prometheus.yml", work_, &error)) << error;
  write_targets(prometheus_->port());

  std::vector<PromExpression> expressions;
  for (const Dashboard& d : *dashboards) {
    std::vector<PromExpression> found = DashboardExpressions(d.json.dump(), "grafana/dashboards/" + d.file, &error);
    ASSERT_TRUE(error.empty()) << d.file << ": " << error;
    expressions.insert(expressions.end(), found.begin(), found.end());
  }
  auto label_value = [&](const std::string& label) -> std::string {
    const std::vector<std::string> values = prometheus_->LabelValues(label);
    return values.empty() ? "" : values[0];
  };
  std::map<std::string, QueryResult> last;
  PollUntil(
      [&] {
        bool all = true;
        for (const PromExpression& e : expressions) {
          if (last[e.origin].size() > 0) continue;
          last[e.origin] = prometheus_->Query(ExpandGrafanaVariables(e.expr, e.variables, label_value));
          all = all && last[e.origin].size() > 0;
        }
        return all;
      },
      absl::Seconds(30));
  for (const PromExpression& e : expressions) {
    const QueryResult& r = last[e.origin];
    EXPECT_TRUE(r.ok && r.size() > 0) << e.origin << " returns no series for the runs of the four backends ("
                                      << (r.ok ? "no data" : r.error) << ")\n  expr: " << e.expr;
  }
  for (const PromExpression& e : rules) {
    const QueryResult r = prometheus_->Query(e.expr);
    EXPECT_TRUE(r.ok) << e.origin << " does not evaluate: " << r.error;
  }

  // Each backend's main figure and its further headline figures are gauges, labelled from its
  // declaration: figure, unit, headline (1: the main one), better.
  std::map<std::string, std::set<std::string>> figures_by_backend;  // "figure (unit, headline h, better)"
  PollUntil(
      [&] {
        figures_by_backend.clear();
        const QueryResult r = prometheus_->Query("benchfleet:run_last_figure:latest");
        for (const auto& series : r.result) {
          const auto& m = series["metric"];
          figures_by_backend[m.value("backend", "")].insert(
              absl::StrCat(m.value("figure", ""), " (", m.value("unit", ""), ", headline ", m.value("headline", ""), ", ",
                           m.value("better", ""), ")"));
        }
        return figures_by_backend.size() == 4;
      },
      absl::Seconds(20));
  using Set = std::set<std::string>;
  EXPECT_EQ(figures_by_backend["llama-server"],
            (Set{"generation tokens/s (tokens/s, headline 1, higher)", "time to first token (s, headline 2, lower)",
                 "prompt tokens/s (tokens/s, headline 3, higher)", "energy per output token (J/token, headline 4, lower)"}));
  EXPECT_EQ(figures_by_backend["comfyui"],
            (Set{"images/s (images/s, headline 1, higher)", "server execution time (s, headline 2, lower)"}));
  EXPECT_EQ(figures_by_backend["openai"],
            (Set{"output tokens/s (tokens/s, headline 1, higher)", "TTFT p99 (s, headline 2, lower)",
                 "mean latency (s, headline 3, lower)", "goodput (requests/s, headline 4, higher)",
                 "TPOT p99 (s, headline 5, lower)"}));
  EXPECT_EQ(figures_by_backend["workflow"],
            (Set{"tokens/s (tokens/s, headline 1, higher)", "mean latency (s, headline 2, lower)",
                 "latency p99 (s, headline 3, lower)"}));
  // The workflow's container peak: one series across its three repetitions (their container
  // names are the figures' source, not a label).
  EXPECT_EQ(prometheus_->Query("count(benchfleet:run_last_memory_peak_bytes:latest{kind=\"container_peak\"})")
                .first_value()
                .value_or(0),
            1);
  std::fprintf(stderr, "dashboards_live_test: %zu SQL and %zu PromQL dashboard queries and %zu rules checked on %zu runs\n",
               sql_queries, expressions.size(), rules.size(), sent);
}

}  // namespace
}  // namespace benchfleet::testing
