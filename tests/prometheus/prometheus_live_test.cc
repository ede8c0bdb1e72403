// The live metrics test: Debian's real prometheus scrapes two benchfleet-coordinator processes
// on one database and the agents that feed them (real `benchfleet-agent serve` against the
// llama-server simulator, scripted gRPC agents where a real one cannot make the case), with the
// repository's deploy/prometheus/prometheus.yml and rules.yml (targets rewritten to this test's
// loopback ports, 1 s intervals, `for:` shortened to 2 s). Every PromQL expression found in
// deploy/ at run time is evaluated through Prometheus' HTTP API:
//   healthy: each parses; each dashboard query returns data; the stored-record counters add up
//            across both coordinators; no alert is pending or firing;
//   faults:  each alert of rules.yml fires in the scenario made for it (all run at once), and an
//            alert with no scenario here fails the test.
#include <dirent.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "benchfleet/v1/admin.grpc.pb.h"
#include "agent/backends/llama_server/figures.h"
#include "benchfleet/v1/fleet.grpc.pb.h"
#include "common/figures.h"
#include "common/hashing.h"
#include "common/tls/certificates.h"
#include "gtest/gtest.h"
#include "tests/integration/fleet.h"
#include "tests/prometheus/deploy_sources.h"
#include "tests/prometheus/prometheus_server.h"
#include "tests/prometheus/scripted_agent.h"
#include "tests/support/pg_test_db.h"
#include "tests/support/subprocess.h"

namespace benchfleet::testing {
namespace {

// The alerts the rules must define; each has a scenario below.
const std::vector<std::string> kRequiredAlerts = {
    "BenchfleetAgentDown",          "BenchfleetScrapeTargetDown", "BenchfleetRegressionDetected",
    "BenchfleetThroughputDrop",     "BenchfleetCacheHit",         "BenchfleetRunsFailed",
    "BenchfleetIngestErrors",       "BenchfleetOutboxBackingUp",  "BenchfleetAgentCertificateExpiring",
};
constexpr char kShortFor[] = "2s";
constexpr char kLlamaTask[] = "llama-qwen2.5-3b-q4km";
constexpr char kScriptedTask[] = "scripted-task";

std::string SourceDir() {
  const char* dir = std::getenv("BENCHFLEET_SOURCE_DIR");
  return dir != nullptr ? dir : BENCHFLEET_SOURCE_DIR;
}

// The deploy/ folder under test: $BENCHFLEET_DEPLOY_DIR, else the checkout's.
std::string DeployDir() {
  const char* dir = std::getenv("BENCHFLEET_DEPLOY_DIR");
  return dir != nullptr ? dir : SourceDir() + "/deploy";
}

bool WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << text;
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

std::vector<std::string> JsonFilesIn(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > 5 && name.substr(name.size() - 5) == ".json") out.push_back(name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// A benchfleet-coordinator process with its gRPC and /metrics ports.
struct Coordinator {
  Coordinator(const std::string& name, const std::string& database_url, const std::string& work)
      : log_path(work + "/" + name + ".log"), port(FreePort()), metrics_port(FreePort()) {
    process = std::make_unique<Subprocess>(
        std::vector<std::string>{BinaryPath("benchfleet-coordinator"), "--plaintext", "--listen", address(), "--metrics-listen",
                                 metrics_address(), "--lease-seconds", "30"},
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

// A real `benchfleet-agent serve` with its own state folder and /metrics.
struct RealAgent {
  std::string name;
  std::string dir;
  std::string config;
  int metrics_port = 0;
  std::string agent_id;
  std::unique_ptr<Subprocess> process;

  std::string metrics_address() const { return "127.0.0.1:" + std::to_string(metrics_port); }
  std::string log() const { return ReadAll(dir + "/serve.log"); }
};

class PrometheusLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BENCHFLEET_REQUIRE_PG(db_);
    work_ = MakeTempDir("prometheus-live");
    ::mkdir((work_ + "/models").c_str(), 0755);
    ::mkdir((work_ + "/sd").c_str(), 0755);
    model_ = work_ + "/models/qwen2.5-3b-instruct-q4_k_m.gguf";
    std::ofstream(model_) << "GGUF simulated model file";
  }

  void TearDown() override {
    for (auto& t : scenario_threads_) {
      if (t.joinable()) t.join();
    }
    scripted_.clear();
    for (RealAgent* a : {&r1_, &r2_, &r3_, &r4_}) {
      if (a->process == nullptr) continue;
      a->process->Signal(SIGTERM);
      if (!PollUntil([&] { return !a->process->running(); }, absl::Seconds(10))) a->process->Signal(SIGKILL);
      a->process->Wait();
    }
    for (auto& c : coordinators_) {
      c->process->Signal(SIGTERM);
      if (!PollUntil([&] { return !c->process->running(); }, absl::Seconds(10))) c->process->Signal(SIGKILL);
      c->process->Wait();
    }
    prometheus_.reset();
    if (HasFailure() && !work_.empty()) {
      std::fprintf(stderr, "logs of the failed run are in %s\n", work_.c_str());
    }
  }

  std::string ReadDeploy(const std::string& relative) {
    const std::string text = ReadAll(DeployDir() + "/" + relative);
    EXPECT_FALSE(text.empty()) << DeployDir() << "/" << relative << " is missing or empty";
    return text;
  }

  // Writes an agent.yaml allowing the simulator and the models folder.
  RealAgent MakeAgent(const std::string& name) {
    RealAgent a;
    a.name = name;
    a.dir = work_ + "/" + name;
    ::mkdir(a.dir.c_str(), 0755);
    a.config = a.dir + "/agent.yaml";
    std::ofstream(a.config) << "state_dir: " << a.dir << "/state\n"
                            << "labels:\n  class: sim-gpu\n  name: " << name << "\n"
                            << "allow:\n  backends: [llama-server]\n"
                            << "  executables: [" << BinaryPath("llama-server-sim") << "]\n"
                            << "  model_dirs: [" << work_ << "/models]\n";
    a.metrics_port = FreePort();
    return a;
  }

  // Starts `serve` and waits until its id exists and its /metrics port answers... or it exits.
  bool StartServe(RealAgent* a, const std::string& coordinator) {
    a->process = StartAgent(a->dir, "serve",
                            {"serve", "--config", a->config, "--coordinator", coordinator, "--metrics-listen",
                             a->metrics_address()});
    const std::string id_file = a->dir + "/state/agent_id";
    const bool ok = PollUntil([&] { return !ReadAll(id_file).empty() || !a->process->running(); },
                              absl::Seconds(20));
    a->agent_id = std::string(absl::StripAsciiWhitespace(ReadAll(id_file)));
    return ok && a->process->running() && !a->agent_id.empty();
  }

  // True while `coordinator` holds a stream of the agent (Admin.ListMachines).
  static bool Connected(const Coordinator& coordinator, const std::string& agent_id) {
    auto admin = v1::Admin::NewStub(grpc::CreateChannel(coordinator.address(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::ListMachinesResponse response;
    if (!admin->ListMachines(&context, v1::ListMachinesRequest(), &response).ok()) return false;
    for (const v1::Machine& m : response.machines()) {
      if (m.agent_id() == agent_id) return m.connected();
    }
    return false;
  }

  static std::unique_ptr<v1::Fleet::Stub> FleetOf(const Coordinator& c) {
    return v1::Fleet::NewStub(grpc::CreateChannel(c.address(), grpc::InsecureChannelCredentials()));
  }

  // Submits a series; returns its id ("" with a test failure when refused).
  static std::string Submit(const Coordinator& c, const std::string& spec) {
    grpc::ClientContext context;
    v1::SubmitSeriesRequest request;
    request.set_spec_yaml(spec);
    request.set_source_name("prometheus_live_test.yaml");
    v1::SubmitSeriesResponse response;
    grpc::Status s = FleetOf(c)->SubmitSeries(&context, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message() << "\n" << spec;
    return response.series_id();
  }

  static v1::SeriesStatus GetSeries(const Coordinator& c, const std::string& series_id) {
    grpc::ClientContext context;
    v1::GetSeriesRequest request;
    request.set_series_id(series_id);
    v1::SeriesStatus status;
    FleetOf(c)->GetSeries(&context, request, &status);
    return status;
  }

  std::string LlamaSpec(const std::string& series, const std::vector<std::string>& agents, int warm,
                        const std::string& gpu_args) {
    return absl::StrCat("series: ", series,
                        "\n"
                        "task: ", kLlamaTask,
                        "\n"
                        "backend: llama-server\n"
                        "llama-server:\n"
                        "  binary: ", BinaryPath("llama-server-sim"),
                        "\n"
                        "  model: ", model_,
                        "\n"
                        "  args: [-c, '256', --sim-load-ms, '100']\n"
                        "  modes:\n"
                        "    gpu: ", gpu_args,
                        "\n"
                        "  prompt: Explain in one sentence what a GPU is.\n"
                        "  n_predict: 8\n"
                        "  seed: 42\n"
                        "  health_timeout: 10s\n"
                        "  request_timeout: 5s\n"
                        "  stop_grace: 2s\n"
                        "runs:\n  cold: 1\n  warm: ", warm,
                        "\n"
                        "targets: {agents: [", absl::StrJoin(agents, ", "), "]}\n");
  }

  static std::string ScriptedSpec(const std::string& series, const std::string& agent) {
    return absl::StrCat("series: ", series, "\ntask: ", kScriptedTask,
                        "\nbackend: llama-server\nllama-server:\n  url: http://127.0.0.1:9\n"
                        "targets: {agents: [", agent, "]}\nruns:\n  cold: 1\n  warm: 5\n");
  }

  // A record of a scripted agent: warm, gpu, OK, one figure: llama-server's main figure, stamped
  // with its declaration as the runner stamps it (the regression check and the gauges read that).
  static v1::RunRecord ScriptedRecord(const std::string& agent, const v1::TaskAssignment* task, uint32_t call,
                                      double tokens_per_second, absl::Time start) {
    v1::RunRecord r;
    r.set_run_id(NewUuid());
    r.set_agent_id(agent);
    if (task != nullptr) {
      r.set_task_id(task->task_id());
      r.set_series_id(task->series_id());
    }
    r.set_conditions_fingerprint("scripted-conditions");
    r.set_backend("llama-server");
    r.set_task(kScriptedTask);
    r.set_mode("gpu");
    r.set_phase(v1::PHASE_WARM);
    r.set_call_index(call);
    r.set_repetition(1);
    r.mutable_start_time()->set_seconds(absl::ToUnixSeconds(start));
    r.mutable_end_time()->set_seconds(absl::ToUnixSeconds(start) + 1);
    r.mutable_wall_duration()->set_seconds(1);
    auto* m = r.add_metrics();
    m->set_name("predicted_per_second");
    m->set_value(tokens_per_second);
    m->set_unit("tokens/s");
    StampFigures(agent::llama_server::kFigures, &r);
    r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
    r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
    r.set_simulated(true);
    r.set_agent_version("scripted");
    return r;
  }

  // Records with every figure the catalogue has (memory of every kind, headline figures in
  // seconds and not, cold and warm, a matrix), so that dashboard panels on any of them have data.
  static std::vector<v1::RunRecord> RichRecords(const std::string& agent) {
    std::vector<v1::RunRecord> out;
    const absl::Time now = absl::Now();
    for (v1::Phase phase : {v1::PHASE_COLD, v1::PHASE_WARM}) {
      for (uint32_t call = 1; call <= 2; ++call) {
        v1::RunRecord r = ScriptedRecord(agent, nullptr, call, 40 + call, now - absl::Seconds(30 - call));
        r.set_phase(phase);
        (*r.mutable_matrix())["batch_size"] = "8";
        auto* ttft = r.add_metrics();
        ttft->set_name("time_to_first_token_seconds");
        ttft->set_value(0.05 * call);
        ttft->set_unit("s");
        auto* prompt = r.add_metrics();
        prompt->set_name("prompt_per_second");
        prompt->set_value(400);
        prompt->set_unit("tokens/s");
        StampFigures(agent::llama_server::kFigures, &r);
        int i = 0;
        for (v1::MemoryKind kind :
             {v1::MEMORY_KIND_PROCESS_PEAK_RSS, v1::MEMORY_KIND_PROCESS_FOOTPRINT, v1::MEMORY_KIND_DEVICE_USED,
              v1::MEMORY_KIND_DEVICE_BUFFER, v1::MEMORY_KIND_CONTAINER_PEAK, v1::MEMORY_KIND_HOST_BUFFER}) {
          auto* mem = r.add_memory();
          mem->set_kind(kind);
          mem->set_scope(kind == v1::MEMORY_KIND_DEVICE_USED || kind == v1::MEMORY_KIND_DEVICE_BUFFER ? "CUDA0"
                                                                                                     : "rich");
          mem->set_bytes((uint64_t{256} << 20) * (++i));
        }
        out.push_back(std::move(r));
      }
    }
    return out;
  }

  // Waits until Prometheus has the flag counter of (agent, flag) from every coordinator: counters
  // exist at zero from the moment the pair is known (each replica reads the tasks from the
  // database), so that `increase()` sees the first event whichever replica stores it.
  void WaitForZeroCounter(const std::string& agent, const std::string& flag) {
    const std::string expr =
        absl::StrCat("count(benchfleet_runs_flagged_total{agent=\"", agent, "\",flag=\"", flag, "\"} == 0)");
    const bool seen = PollUntil(
        [&] { return prometheus_->Query(expr).first_value().value_or(0) == coordinators_.size(); }, absl::Seconds(15));
    EXPECT_TRUE(seen) << expr << " is not " << coordinators_.size()
                      << " within 15 s of the task reaching the agent: the counter should exist at 0 on every "
                         "replica once (agent, task) is known, before the first flagged run; got "
                      << prometheus_->Query(expr).result.dump();
  }

  PgTestDb db_;
  std::string work_;
  std::string model_;
  std::vector<std::unique_ptr<Coordinator>> coordinators_;
  RealAgent r1_, r2_, r3_, r4_;
  std::vector<std::unique_ptr<ScriptedAgent>> scripted_;
  std::unique_ptr<PrometheusServer> prometheus_;
  std::vector<std::thread> scenario_threads_;
};

// Describes alerts for failure messages.
std::string Describe(const std::vector<ActiveAlert>& alerts) {
  std::vector<std::string> lines;
  for (const ActiveAlert& a : alerts) {
    std::vector<std::string> labels;
    for (const auto& [k, v] : a.labels) labels.push_back(absl::StrCat(k, "=\"", v, "\""));
    lines.push_back(absl::StrCat("  ", a.state, " {", absl::StrJoin(labels, ","), "} value ", a.value));
  }
  return lines.empty() ? "  (none)" : absl::StrJoin(lines, "\n");
}

// A label of the alert, or "" when it has none.
std::string Label(const ActiveAlert& a, const std::string& name) {
  const auto it = a.labels.find(name);
  return it == a.labels.end() ? "" : it->second;
}

// The alert of a scenario: which one, made how, and which firing instance of it is the
// scenario's (an alert that names an agent or a target must name the one of the scenario).
struct Scenario {
  std::string description;
  std::function<bool(const ActiveAlert&)> matches;
};

TEST_F(PrometheusLiveTest, EveryExpressionOfDeployParsesReturnsDataAndEveryAlertFiresInItsScenario) {
  const absl::Time test_start = absl::Now();
  const std::string prometheus_binary = PrometheusServer::BinaryPath();
  struct stat st;
  ASSERT_EQ(::stat(prometheus_binary.c_str(), &st), 0)
      << prometheus_binary << " is missing: apt-get install prometheus (Debian's, 2.42)";

  // --- deploy/: what to evaluate, read now so that new panels and rules are checked too.
  std::string error;
  const std::string rules_text = ReadDeploy("prometheus/rules.yml");
  const std::vector<PromExpression> rules = RuleExpressions(rules_text, &error);
  ASSERT_TRUE(error.empty()) << "deploy/prometheus/rules.yml: " << error;
  std::vector<PromExpression> dashboards;
  const std::string dashboard_dir = DeployDir() + "/grafana/dashboards";
  const std::vector<std::string> dashboard_files = JsonFilesIn(dashboard_dir);
  EXPECT_FALSE(dashboard_files.empty()) << "no dashboards (*.json) in " << dashboard_dir;
  for (const std::string& file : dashboard_files) {
    std::string file_error;
    std::vector<PromExpression> found =
        DashboardExpressions(ReadAll(dashboard_dir + "/" + file), "grafana/dashboards/" + file, &file_error);
    EXPECT_TRUE(file_error.empty()) << file << ": " << file_error;
    EXPECT_FALSE(found.empty()) << file << " has no Prometheus query";
    dashboards.insert(dashboards.end(), found.begin(), found.end());
  }
  std::set<std::string> alerts_in_rules;
  for (const PromExpression& e : rules) {
    if (e.is_alert) alerts_in_rules.insert(e.alert);
  }
  for (const std::string& name : kRequiredAlerts) {
    EXPECT_EQ(alerts_in_rules.count(name), 1u) << "rules.yml defines no alert " << name;
  }

  // --- Two coordinators on one database; real agents split between them.
  coordinators_.push_back(std::make_unique<Coordinator>("coordinator-a", db_.url(), work_));
  ASSERT_TRUE(coordinators_[0]->WaitListening()) << ReadAll(coordinators_[0]->log_path);
  coordinators_.push_back(std::make_unique<Coordinator>("coordinator-b", db_.url(), work_));
  ASSERT_TRUE(coordinators_[1]->WaitListening()) << ReadAll(coordinators_[1]->log_path);
  const Coordinator& a = *coordinators_[0];
  const Coordinator& b = *coordinators_[1];

  r1_ = MakeAgent("agent-r1");
  r2_ = MakeAgent("agent-r2");
  r3_ = MakeAgent("agent-r3");  // the outbox scenario's, started later
  r4_ = MakeAgent("agent-r4");  // the certificate scenario's, started later
  ASSERT_TRUE(StartServe(&r1_, a.address())) << r1_.log();
  ASSERT_TRUE(StartServe(&r2_, b.address())) << r2_.log();
  ASSERT_TRUE(PollUntil([&] { return Connected(a, r1_.agent_id) && Connected(b, r2_.agent_id); }, absl::Seconds(20)))
      << r1_.log() << r2_.log();

  // --- Prometheus with the repository's configuration, rewritten.
  const std::string rules_copy = work_ + "/rules.yml";
  const std::string short_rules = RewriteRules(rules_text, kShortFor, &error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_TRUE(WriteFileAtomically(rules_copy, short_rules));
  const TestConfig config = RewritePrometheusConfig(ReadDeploy("prometheus/prometheus.yml"), rules_copy, work_ + "/sd", &error);
  ASSERT_TRUE(error.empty()) << "deploy/prometheus/prometheus.yml: " << error;
  std::map<JobRole, std::vector<std::string>> jobs_by_role;
  for (const auto& [job, role] : config.jobs) {
    EXPECT_NE(role, JobRole::kUnknown) << "prometheus.yml job \"" << job
                                       << "\": the test cannot tell whether it scrapes coordinators or agents "
                                          "(its name says neither)";
    jobs_by_role[role].push_back(job);
  }
  ASSERT_FALSE(jobs_by_role[JobRole::kCoordinator].empty()) << "prometheus.yml has no job scraping coordinators";
  EXPECT_FALSE(jobs_by_role[JobRole::kAgent].empty()) << "prometheus.yml has no job scraping agents";
  prometheus_ = std::make_unique<PrometheusServer>();
  std::vector<std::string> agent_targets = {r1_.metrics_address(), r2_.metrics_address()};
  auto write_targets = [&](int prometheus_port) {
    for (const auto& [job, role] : config.jobs) {
      std::vector<std::string> targets;
      if (role == JobRole::kCoordinator) targets = {a.metrics_address(), b.metrics_address()};
      if (role == JobRole::kAgent) targets = agent_targets;
      if (role == JobRole::kPrometheus) targets = {"127.0.0.1:" + std::to_string(prometheus_port)};
      ASSERT_TRUE(WriteFileAtomically(config.target_files.at(job), FileSdTargets(targets, config.target_labels.at(job))));
    }
  };
  // Prometheus' own port is known only once it runs: its job's file is written again then.
  write_targets(0);
  ASSERT_TRUE(WriteFileAtomically(work_ + "/prometheus.yml", config.prometheus_yml));
  ASSERT_TRUE(prometheus_->Start(work_ + "/prometheus.yml", work_, &error)) << error << "\n" << config.prometheus_yml;
  write_targets(prometheus_->port());

  // ===== Healthy phase: a series with no flags through both coordinators.
  scripted_.push_back(std::make_unique<ScriptedAgent>(b.address(), "rich-1", std::map<std::string, std::string>{{"class", "scripted"}}));
  ScriptedAgent& rich = *scripted_.back();
  ASSERT_TRUE(rich.Connect());
  const std::vector<v1::RunRecord> rich_records = RichRecords("rich-1");
  rich.Send(rich_records);
  const std::string healthy =
      Submit(a, LlamaSpec("healthy", {r1_.agent_id, r2_.agent_id}, 2, "[-ngl, '99']"));
  ASSERT_FALSE(healthy.empty());
  ASSERT_TRUE(rich.WaitForAcked(rich_records.size(), 0, absl::Seconds(10)));
  ASSERT_TRUE(PollUntil([&] { return GetSeries(a, healthy).state() == v1::SeriesStatus::STATE_DONE; }, absl::Seconds(60)))
      << GetSeries(a, healthy).DebugString() << r1_.log() << r2_.log();
  const int sent = 2 * 3 + static_cast<int>(rich_records.size());
  ASSERT_TRUE(PollUntil([&] { return db_.QueryValue("SELECT count(*) FROM runs") == std::to_string(sent); },
                        absl::Seconds(20)))
      << db_.QueryValue("SELECT count(*) FROM runs") << " runs stored, " << sent << " sent";
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM runs WHERE cardinality(flags) > 0"), "0")
      << "the healthy series was flagged: " << db_.QueryValue("SELECT string_agg(DISTINCT array_to_string(flags, ','), ';') FROM runs");

  // The stored-record counters add up across both coordinators, each having stored its share.
  const std::string stored_sum = "sum(benchfleet_coordinator_records_total{result=\"stored\"})";
  const bool counted = PollUntil(
      [&] {
        auto v = prometheus_->Query(stored_sum).first_value();
        return v.has_value() && *v == sent;
      },
      absl::Seconds(20));
  EXPECT_TRUE(counted) << stored_sum << ": expected " << sent << ", got "
                       << prometheus_->Query(stored_sum).result.dump() << "\n" << prometheus_->Query("up").result.dump();
  const std::string per_instance = "count(benchfleet_coordinator_records_total{result=\"stored\"} > 0)";
  EXPECT_EQ(prometheus_->Query(per_instance).first_value().value_or(-1), 2)
      << per_instance << ": both coordinators stored records: " << prometheus_->Query(per_instance).result.dump();
  // Every target of the healthy fleet answers its scrapes.
  std::map<std::string, std::string> health;
  PollUntil(
      [&] {
        health = prometheus_->TargetHealth();
        return std::all_of(health.begin(), health.end(), [](const auto& t) { return t.second == "up"; });
      },
      absl::Seconds(15));
  EXPECT_FALSE(health.empty());
  for (const auto& [target, state] : health) {
    EXPECT_EQ(state, "up") << "target " << target << " of the healthy fleet";
  }

  // Every expression parses; every dashboard expression returns data for the records sent.
  auto label_value = [&](const std::string& label) -> std::string {
    // A real value of the label: the healthy agents first, for a panel of one agent.
    if (label == "agent") return r1_.agent_id;
    if (label == "task") return kLlamaTask;
    const std::vector<std::string> values = prometheus_->LabelValues(label);
    return values.empty() ? "" : values[0];
  };
  for (const PromExpression& e : rules) {
    const QueryResult r = prometheus_->Query(e.expr);
    EXPECT_TRUE(r.ok) << e.origin << " does not evaluate: " << r.error << "\n  expr: " << e.expr;
  }
  std::vector<std::pair<const PromExpression*, std::string>> expanded;
  for (const PromExpression& e : dashboards) {
    expanded.emplace_back(&e, ExpandGrafanaVariables(e.expr, e.variables, label_value));
  }
  std::map<std::string, QueryResult> last;
  PollUntil(
      [&] {
        bool all = true;
        for (const auto& [e, expr] : expanded) {
          if (last[e->origin].size() > 0) continue;
          last[e->origin] = prometheus_->Query(expr);
          if (last[e->origin].size() == 0) all = false;
        }
        return all;
      },
      absl::Seconds(20));
  for (const auto& [e, expr] : expanded) {
    const QueryResult& r = last[e->origin];
    EXPECT_TRUE(r.ok) << e->origin << " does not evaluate: " << r.error << "\n  expr:     " << e->expr
                      << "\n  expanded: " << expr;
    EXPECT_TRUE(!r.ok || r.size() > 0) << e->origin << " returns no data for the records sent (" << sent
                                       << " runs through 2 coordinators)\n  expr:     " << e->expr
                                       << "\n  expanded: " << expr;
  }

  // No alert in a healthy fleet, after the rules saw the data for longer than any `for:`.
  const absl::Time data_seen = absl::Now();
  ASSERT_TRUE(PollUntil(
      [&] {
        auto t = prometheus_->OldestRuleEvaluation();
        return t.has_value() && *t > data_seen + absl::Seconds(4);
      },
      absl::Seconds(20)))
      << "the rule groups were not evaluated every second";
  const std::optional<std::vector<ActiveAlert>> healthy_alerts = prometheus_->Alerts();
  ASSERT_TRUE(healthy_alerts.has_value());
  EXPECT_TRUE(healthy_alerts->empty()) << "alerts active in a healthy fleet:\n" << Describe(*healthy_alerts);
  const absl::Duration healthy_took = absl::Now() - test_start;

  // ===== Fault scenarios, all at once: each touches its own agent.
  std::map<std::string, Scenario> scenarios;
  const std::string r1_id = r1_.agent_id, r2_id = r2_.agent_id;
  const std::string r2_metrics = r2_.metrics_address(), r3_metrics = r3_.metrics_address();
  auto agent_is = [](const std::string& id) {
    return [id](const ActiveAlert& a) { return Label(a, "agent").empty() || Label(a, "agent") == id; };
  };

  // An agent killed: its coordinator loses the stream and its /metrics target goes down.
  scenarios["BenchfleetAgentDown"] = {
      "agent r2 (serve, on coordinator b) SIGKILLed",
      [=](const ActiveAlert& a) {
        return Label(a, "agent") == r2_id || (Label(a, "agent").empty() && Label(a, "instance") == r2_metrics);
      }};
  scenarios["BenchfleetScrapeTargetDown"] = {
      "agent r2 SIGKILLed: its /metrics target " + r2_metrics + " is down",
      [=](const ActiveAlert& a) { return Label(a, "instance") == r2_metrics; }};
  r2_.process->Signal(SIGKILL);

  // A throughput collapse: the simulator halves the rate of the third and fourth warm calls.
  scenarios["BenchfleetThroughputDrop"] = {"agent r1 runs a llama series whose warm calls 3 and 4 run at 0.5x",
                                           agent_is(r1_id)};
  const std::string throttled =
      Submit(a, LlamaSpec("throttled", {r1_id}, 4, "[-ngl, '99', --sim-throttle, '4:0.5,5:0.5']"));

  // Flagged runs of a fleet task, sent once Prometheus has the counter at 0.
  auto flagged_series = [&](const Coordinator& via, const std::string& agent_id, const std::string& flag,
                            std::function<std::vector<v1::RunRecord>(const v1::TaskAssignment&)> records,
                            bool finish_ok) {
    scripted_.push_back(std::make_unique<ScriptedAgent>(via.address(), agent_id,
                                                        std::map<std::string, std::string>{{"class", "scripted"}}));
    ScriptedAgent* agent = scripted_.back().get();
    EXPECT_TRUE(agent->Connect()) << agent_id;
    const std::string series = Submit(a, ScriptedSpec(agent_id, agent_id));
    scenario_threads_.emplace_back([=, this] {
      std::optional<v1::TaskAssignment> task = agent->WaitForAssignment(absl::Seconds(15));
      if (!task.has_value()) {
        ADD_FAILURE() << agent_id << " got no task of series " << series;
        return;
      }
      const std::vector<v1::RunRecord> runs = records(*task);
      agent->Accept(task->task_id(), runs.size());
      WaitForZeroCounter(agent_id, flag);
      agent->Send(runs);
      uint32_t failed = 0;
      for (const auto& r : runs) failed += r.status().code() == v1::RunStatus::CODE_FAILED;
      EXPECT_TRUE(agent->WaitForAcked(runs.size(), 0, absl::Seconds(10))) << agent_id;
      agent->Finish(task->task_id(), finish_ok, runs.size(), failed,
                    absl::StrCat(runs.size(), " of ", runs.size(), " runs made, ", failed, " FAILED"));
    });
  };

  scenarios["BenchfleetCacheHit"] = {"scripted agent cache-1 sends 2 runs flagged CACHE_HIT", agent_is("cache-1")};
  flagged_series(a, "cache-1", "cache_hit",
                 [](const v1::TaskAssignment& t) {
                   std::vector<v1::RunRecord> out;
                   for (uint32_t i = 1; i <= 2; ++i) {
                     out.push_back(ScriptedRecord("cache-1", &t, i, 300, absl::Now() - absl::Seconds(10 - i)));
                     out.back().add_flags()->set_code("CACHE_HIT");
                     out.back().mutable_flags(0)->set_reason("served from the cache");
                   }
                   return out;
                 },
                 true);

  scenarios["BenchfleetRunsFailed"] = {"scripted agent failing-1 sends 2 FAILED runs of 3, task not ok",
                                       agent_is("failing-1")};
  flagged_series(b, "failing-1", "failed",
                 [](const v1::TaskAssignment& t) {
                   std::vector<v1::RunRecord> out;
                   for (uint32_t i = 1; i <= 3; ++i) {
                     out.push_back(ScriptedRecord("failing-1", &t, i, 50, absl::Now() - absl::Seconds(10 - i)));
                     if (i > 1) {
                       out.back().clear_metrics();
                       out.back().mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
                       out.back().mutable_status()->set_message("llama-server answered 500 Compute error.");
                     }
                   }
                   return out;
                 },
                 false);

  // A regression: a scheduled series whose warm runs are 80% slower than the agent's five earlier
  // runs of the task (its baseline: runs of other tasks), so that the Mann-Whitney test finds
  // the difference significant from the third (p = 2/56). The schedule is made two minutes old,
  // so that its latest slot is due now instead of at the next whole minute.
  scenarios["BenchfleetRegressionDetected"] = {
      "scheduled series of scripted agent regress-1: 6 warm runs at 20 tokens/s after 5 earlier runs at 100",
      agent_is("regress-1")};
  {
    scripted_.push_back(std::make_unique<ScriptedAgent>(b.address(), "regress-1",
                                                        std::map<std::string, std::string>{{"class", "scripted"}}));
    ScriptedAgent* agent = scripted_.back().get();
    EXPECT_TRUE(agent->Connect());
    grpc::ClientContext context;
    v1::AddScheduleRequest request;
    request.set_cron("* * * * *");
    request.set_spec_yaml(ScriptedSpec("regress-1", "regress-1"));
    request.set_source_name("prometheus_live_test.yaml");
    v1::Schedule schedule;
    grpc::Status s = FleetOf(a)->AddSchedule(&context, request, &schedule);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(db_.QueryValue(absl::StrCat("UPDATE schedules SET created = now() - interval '2 minutes' WHERE id = '",
                                          schedule.schedule_id(), "' RETURNING 1")),
              "1");
    const std::string schedule_id = schedule.schedule_id();
    scenario_threads_.emplace_back([agent, schedule_id, this] {
      std::optional<v1::TaskAssignment> task = agent->WaitForAssignment(absl::Seconds(20));
      if (!task.has_value()) {
        ADD_FAILURE() << "regress-1 got no task from its schedule";
        return;
      }
      // One slot is enough: no second series at the next whole minute.
      grpc::ClientContext remove_context;
      v1::RemoveScheduleRequest remove;
      remove.set_schedule_id(schedule_id);
      v1::RemoveScheduleResponse removed;
      EXPECT_TRUE(FleetOf(*coordinators_[0])->RemoveSchedule(&remove_context, remove, &removed).ok());
      const absl::Time start = absl::Now() - absl::Seconds(60);
      std::vector<v1::RunRecord> baseline;  // outside any task: the baseline of the series' runs
      for (uint32_t i = 1; i <= 5; ++i) {
        baseline.push_back(ScriptedRecord("regress-1", nullptr, i, 100 + i % 2, start - absl::Seconds(40 - 5 * i)));
      }
      agent->Send(baseline);
      EXPECT_TRUE(agent->WaitForAcked(baseline.size(), 0, absl::Seconds(10)));
      std::vector<v1::RunRecord> runs;
      for (uint32_t i = 1; i <= 6; ++i) {
        runs.push_back(ScriptedRecord("regress-1", &*task, i, 20 + i % 2, start + absl::Seconds(5 * i)));
      }
      agent->Accept(task->task_id(), runs.size());
      WaitForZeroCounter("regress-1", "regression");
      agent->Send(runs);
      EXPECT_TRUE(agent->WaitForAcked(baseline.size() + runs.size(), 0, absl::Seconds(10)));
      agent->Finish(task->task_id(), true, runs.size(), 0, "6 of 6 runs made, 0 FAILED");
    });
  }

  // Ingest errors: records with no run_id, refused by coordinator a.
  const std::string a_metrics = a.metrics_address();
  scenarios["BenchfleetIngestErrors"] = {
      "scripted agent malformed-1 sends 20 records without run_id to coordinator a",
      [=](const ActiveAlert& alert) { return Label(alert, "instance").empty() || Label(alert, "instance") == a_metrics; }};
  {
    scripted_.push_back(std::make_unique<ScriptedAgent>(a.address(), "malformed-1",
                                                        std::map<std::string, std::string>{{"class", "scripted"}}));
    ScriptedAgent* agent = scripted_.back().get();
    EXPECT_TRUE(agent->Connect());
    std::vector<std::string> bad;
    for (uint32_t i = 1; i <= 20; ++i) {
      v1::RunRecord r = ScriptedRecord("malformed-1", nullptr, i, 50, absl::Now());
      r.clear_run_id();
      bad.push_back(r.SerializeAsString());
    }
    agent->SendBatch(bad);
    EXPECT_TRUE(agent->WaitForAcked(0, bad.size(), absl::Seconds(10))) << "the malformed records were not refused";
  }

  // The outbox backing up: an agent holding 3,000 records whose coordinator is gone.
  scenarios["BenchfleetOutboxBackingUp"] = {
      "agent r3 serves with 3000 records in its outbox and no coordinator listening",
      [=](const ActiveAlert& alert) { return Label(alert, "instance").empty() || Label(alert, "instance") == r3_metrics; }};
  {
    const int simulate = StartAgent(r3_.dir, "simulate",
                                    {"simulate", "--config", r3_.config, "--runs", "3000", "--out", r3_.dir + "/series"})
                             ->Wait();
    EXPECT_EQ(simulate, 0) << ReadAll(r3_.dir + "/simulate.log");
    const std::string gone = "127.0.0.1:" + std::to_string(FreePort());
    r3_.process = StartAgent(r3_.dir, "serve",
                             {"serve", "--config", r3_.config, "--coordinator", gone, "--metrics-listen",
                              r3_.metrics_address()});
    agent_targets.push_back(r3_.metrics_address());
    write_targets(prometheus_->port());
  }

  // A certificate whose renewal fails: agent r4 holds a fleet certificate that ends in 2 days
  // (renewal is due 30 days before the end) and its coordinator is gone, so it cannot renew it.
  const std::string r4_metrics = r4_.metrics_address();
  scenarios["BenchfleetAgentCertificateExpiring"] = {
      "agent r4 serves with a certificate ending in 2 days that it cannot renew (no coordinator listening)",
      [=](const ActiveAlert& alert) { return Label(alert, "instance") == r4_metrics; }};
  {
    const absl::Time now = absl::Now();
    const std::string ca_key = *tls::NewPrivateKeyPem();
    tls::CertificateSpec ca;
    ca.common_name = "benchfleet fleet CA";
    ca.not_before = now - absl::Hours(1);
    ca.not_after = now + absl::Hours(24 * 365);
    ca.is_ca = true;
    const std::string ca_cert = *tls::SelfSignedCertificatePem(ca_key, ca);
    const std::string agent_key = *tls::NewPrivateKeyPem();
    tls::CertificateSpec agent;
    agent.common_name = "agent-r4";
    agent.not_before = now - absl::Hours(1);
    agent.not_after = now + absl::Hours(48);
    agent.client = true;
    const std::string tls_dir = r4_.dir + "/state/tls";
    ::mkdir((r4_.dir + "/state").c_str(), 0700);
    ::mkdir(tls_dir.c_str(), 0700);
    ASSERT_TRUE(WriteFileAtomically(tls_dir + "/ca.pem", ca_cert));
    ASSERT_TRUE(WriteFileAtomically(tls_dir + "/agent.pem", *tls::IssueCertificatePem(agent_key, agent, ca_cert, ca_key)));
    ASSERT_TRUE(WriteFileAtomically(tls_dir + "/agent-key.pem", agent_key));
    ::chmod((tls_dir + "/agent-key.pem").c_str(), 0600);
    const std::string gone = "127.0.0.1:" + std::to_string(FreePort());
    r4_.process = StartAgent(r4_.dir, "serve",
                             {"serve", "--config", r4_.config, "--coordinator", gone, "--metrics-listen", r4_metrics});
    agent_targets.push_back(r4_metrics);
    write_targets(prometheus_->port());
  }

  for (const PromExpression& e : rules) {
    if (e.is_alert) {
      EXPECT_EQ(scenarios.count(e.alert), 1u) << "rules.yml alert " << e.alert
                                              << " has no scenario in prometheus_live_test: add one";
    }
  }

  // Every scenario's alert fires (bounded wait), for the scenario's agent or target.
  std::map<std::string, bool> fired;
  std::vector<ActiveAlert> seen;
  PollUntil(
      [&] {
        std::optional<std::vector<ActiveAlert>> alerts = prometheus_->Alerts();
        if (!alerts.has_value()) return false;
        seen = *alerts;
        bool all = true;
        for (const auto& [name, scenario] : scenarios) {
          if (alerts_in_rules.count(name) == 0) continue;
          for (const ActiveAlert& alert : *alerts) {
            if (alert.name == name && alert.state == "firing" && scenario.matches(alert)) fired[name] = true;
          }
          all = all && fired[name];
        }
        return all;
      },
      absl::Seconds(60));
  for (const auto& [name, scenario] : scenarios) {
    if (alerts_in_rules.count(name) == 0) continue;
    std::vector<ActiveAlert> of_name;
    for (const ActiveAlert& alert : seen) {
      if (alert.name == name) of_name.push_back(alert);
    }
    EXPECT_TRUE(fired[name]) << name << " did not fire for its scenario (" << scenario.description
                             << ") within 60 s; its active instances:\n" << Describe(of_name);
  }
  for (auto& t : scenario_threads_) t.join();
  scenario_threads_.clear();
  EXPECT_TRUE(PollUntil([&] { return GetSeries(a, throttled).state() == v1::SeriesStatus::STATE_DONE; }, absl::Seconds(60)))
      << GetSeries(a, throttled).DebugString();
  // How many calls the agent flags is llama_series_test's business; here the scenario must have
  // happened: flagged runs of r1 (and of no other agent).
  EXPECT_EQ(db_.QueryValue("SELECT string_agg(DISTINCT agent_id, ',') FROM runs WHERE 'THROUGHPUT_DROP' = ANY(flags)"),
            r1_id);
  // What was checked, for the log: a passing run says how much it covered.
  std::vector<std::string> fired_lines;
  for (const ActiveAlert& alert : seen) {
    if (alert.state != "firing" || scenarios.count(alert.name) == 0 || !scenarios.at(alert.name).matches(alert)) continue;
    std::vector<std::string> labels;
    for (const auto& [k, v] : alert.labels) {
      if (k != "alertname" && k != "severity") labels.push_back(absl::StrCat(k, "=", v));
    }
    fired_lines.push_back(absl::StrCat("  ", alert.name, " {", absl::StrJoin(labels, ","), "}"));
  }
  std::fprintf(stderr,
               "prometheus_live_test: %zu rule expressions and %zu dashboard queries (%zu files) evaluated; "
               "%zu alerts in rules.yml; fired in their scenarios:\n%s\nhealthy phase %s, whole test %s\n",
               rules.size(), dashboards.size(), dashboard_files.size(), alerts_in_rules.size(),
               absl::StrJoin(fired_lines, "\n").c_str(), absl::FormatDuration(healthy_took).c_str(),
               absl::FormatDuration(absl::Now() - test_start).c_str());
}

}  // namespace
}  // namespace benchfleet::testing
