// Fleet scheduling end to end: in-process coordinators (CoordinatorServer on port 0, real
// PostgreSQL) and fake agents that are plain gRPC clients of AgentGateway; the `benchfleet`
// command for what operators see (series show, watch, submit errors, agents, runs invalidate).
// One test runs a real `benchfleet-agent serve` on the llama-server simulator instead.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "benchfleet/v1/admin.grpc.pb.h"
#include "benchfleet/v1/fleet.grpc.pb.h"
#include "common/clock.h"
#include "common/spec/spec_limits.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/server.h"
#include "gtest/gtest.h"
#include "tests/integration/fleet.h"
#include "tests/integration/fleet_fake_agent.h"
#include "tests/support/pg_test_db.h"
#include "tests/support/subprocess.h"

namespace benchfleet::testing {
namespace {

using coordinator::CoordinatorServer;
using coordinator::CoordinatorServerOptions;
using OnTask = FakeAgentOptions::OnTask;

// A spec the coordinator accepts; `targets` is spliced in as YAML.
std::string Spec(const std::string& name, const std::string& targets) {
  return absl::StrCat("series: ", name,
                      "\n"
                      "task: fleet-task\n"
                      "backend: llama-server\n"
                      "llama-server:\n"
                      "  url: http://127.0.0.1:8080\n"
                      "targets: ",
                      targets,
                      "\n"
                      "runs:\n"
                      "  cold: 1\n"
                      "  warm: 2\n");
}

class FleetSchedulingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BENCHFLEET_REQUIRE_PG(db_);
    work_ = MakeTempDir("fleet");
    coordinator_ = StartCoordinator();
    ASSERT_NE(coordinator_, nullptr);
    fleet_ = Stub(*coordinator_);
  }

  // tick_interval zero: no scheduler thread; the test calls scheduler()->Tick() on `clock`.
  std::unique_ptr<CoordinatorServer> StartCoordinator(
      absl::Duration tick_interval = absl::Milliseconds(200), Clock* clock = &SystemClock()) {
    CoordinatorServerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.database_url = db_.url();
    options.tick_interval = tick_interval;
    options.clock = clock;
    auto server = std::make_unique<CoordinatorServer>(options);
    absl::Status started = server->Start();
    EXPECT_TRUE(started.ok()) << started;
    return started.ok() ? std::move(server) : nullptr;
  }

  static std::unique_ptr<v1::Fleet::Stub> Stub(const CoordinatorServer& server) {
    return v1::Fleet::NewStub(
        grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials()));
  }

  std::unique_ptr<FakeAgent> Agent(const std::string& id, std::map<std::string, std::string> labels,
                                   OnTask on_task = OnTask::kRun,
                                   const CoordinatorServer* server = nullptr) {
    FakeAgentOptions options;
    options.address = (server != nullptr ? server : coordinator_.get())->address();
    options.agent_id = id;
    options.labels = std::move(labels);
    options.on_task = on_task;
    return std::make_unique<FakeAgent>(options);
  }

  v1::SubmitSeriesResponse Submit(const std::string& spec, v1::Fleet::Stub* stub = nullptr) {
    grpc::ClientContext context;
    v1::SubmitSeriesRequest request;
    request.set_spec_yaml(spec);
    request.set_source_name("test.yaml");
    v1::SubmitSeriesResponse response;
    grpc::Status s =
        (stub != nullptr ? stub : fleet_.get())->SubmitSeries(&context, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response;
  }

  v1::SeriesStatus Get(const std::string& series_id) {
    grpc::ClientContext context;
    v1::GetSeriesRequest request;
    request.set_series_id(series_id);
    v1::SeriesStatus status;
    grpc::Status s = fleet_->GetSeries(&context, request, &status);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return status;
  }

  // Polls until the series' task of `agent` is in `state`.
  bool WaitForTask(const std::string& series_id, const std::string& agent,
                   v1::TaskStatus::State state, absl::Duration timeout = absl::Seconds(10)) {
    return PollUntil(
        [&] {
          const v1::SeriesStatus status = Get(series_id);
          for (const auto& t : status.tasks()) {
            if (t.agent_id() == agent && t.state() == state) return true;
          }
          return false;
        },
        timeout);
  }

  // Returns whether the fixture's coordinator has a stream of the agent open (Admin).
  bool Connected(const std::string& agent_id) {
    auto admin = v1::Admin::NewStub(
        grpc::CreateChannel(coordinator_->address(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    v1::ListMachinesResponse response;
    EXPECT_TRUE(admin->ListMachines(&context, v1::ListMachinesRequest(), &response).ok());
    for (const v1::Machine& m : response.machines()) {
      if (m.agent_id() == agent_id) return m.connected();
    }
    return false;
  }

  // Runs `benchfleet ARGS... --coordinator ADDR`; returns its exit code, stdout+stderr in *out.
  int Cli(std::vector<std::string> args, std::string* out) {
    const std::string log = absl::StrCat(work_, "/cli-", ++calls_, ".log");
    args.insert(args.begin(), BinaryPath("benchfleet"));
    args.push_back("--coordinator");
    args.push_back(coordinator_->address());
    Subprocess p(args, {}, log);
    const int rc = p.Wait();
    *out = ReadAll(log);
    return rc;
  }

  std::string WriteFile(const std::string& name, const std::string& text) {
    const std::string path = work_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  PgTestDb db_;
  std::string work_;
  std::unique_ptr<CoordinatorServer> coordinator_;
  std::unique_ptr<v1::Fleet::Stub> fleet_;
  int calls_ = 0;
};

TEST_F(FleetSchedulingTest, FanOutToFiftyAgentsReachesOnlyTheMatchingOnes) {
  const std::vector<std::string> classes = {"a100", "m1pro", "c5", "h100", "l4"};
  std::vector<std::unique_ptr<FakeAgent>> agents;
  std::set<std::string> matching;
  for (int i = 0; i < 50; ++i) {
    const std::string cls = classes[i % classes.size()];
    const std::string id = absl::StrCat("agent-", i < 10 ? "0" : "", i);
    agents.push_back(
        Agent(id, {{"class", cls}, {"accelerator", i % 2 == 0 ? "nvidia" : "amd"}}, OnTask::kHold));
    ASSERT_TRUE(agents.back()->Connect()) << id;
    if ((cls == "a100" || cls == "h100") && i % 2 == 0) matching.insert(id);
  }
  const v1::SubmitSeriesResponse submitted =
      Submit(Spec("fan-out", "{labels: [\"class in (a100, h100)\", accelerator=nvidia]}"));
  ASSERT_FALSE(submitted.series_id().empty());
  EXPECT_EQ(std::set<std::string>(submitted.agent_ids().begin(), submitted.agent_ids().end()),
            matching);
  ASSERT_EQ(matching.size(), 10u);
  for (auto& agent : agents) {
    if (matching.count(agent->agent_id()) == 0) continue;
    ASSERT_TRUE(agent->WaitForAssignments(1, absl::Seconds(5))) << agent->agent_id();
    EXPECT_EQ(agent->assignments()[0].series_id(), submitted.series_id());
    EXPECT_EQ(agent->assignments()[0].attempt(), 1u);
  }
  absl::SleepFor(absl::Milliseconds(500));  // room for a wrong assignment to show up
  for (auto& agent : agents) {
    EXPECT_EQ(agent->assignments().size(), matching.count(agent->agent_id())) << agent->agent_id();
  }
  EXPECT_EQ(Get(submitted.series_id()).tasks_size(), 10);
}

TEST_F(FleetSchedulingTest, OfflineAgentGetsItsTaskWhenItConnectsAndRunsItToTheEnd) {
  auto agent = Agent("late", {{"class", "c5"}});
  ASSERT_TRUE(agent->Connect());  // the coordinator now knows the machine
  agent->Disconnect();
  // Submitted while the coordinator still holds the dead stream, the task would be sent down it
  // and wait for its lease to expire (see the note in the report): wait until it saw it go.
  ASSERT_TRUE(PollUntil([&] { return !Connected("late"); }, absl::Seconds(5)));
  const v1::SubmitSeriesResponse submitted = Submit(Spec("offline", "{agents: [late]}"));
  ASSERT_EQ(submitted.agent_ids_size(), 1);
  EXPECT_EQ(Get(submitted.series_id()).tasks(0).state(), v1::TaskStatus::STATE_PENDING);

  ASSERT_TRUE(agent->Connect());
  ASSERT_TRUE(agent->WaitForAssignments(1, absl::Seconds(5)))
      << Get(submitted.series_id()).DebugString();
  EXPECT_EQ(agent->assignments()[0].spec_yaml(), Spec("offline", "{agents: [late]}"));
  ASSERT_TRUE(WaitForTask(submitted.series_id(), "late", v1::TaskStatus::STATE_SUCCEEDED));
  ASSERT_TRUE(
      PollUntil([&] { return Get(submitted.series_id()).state() == v1::SeriesStatus::STATE_DONE; },
                absl::Seconds(10)));
  EXPECT_TRUE(Get(submitted.series_id()).all_succeeded());
}

TEST_F(FleetSchedulingTest, CancelReachesTheRunningAgentAndAgentsShowItsTask) {
  auto agent = Agent("busy", {{"class", "a100"}}, OnTask::kHold);
  ASSERT_TRUE(agent->Connect());
  const v1::SubmitSeriesResponse submitted = Submit(Spec("to-cancel", "all"));
  ASSERT_TRUE(agent->WaitForAssignments(1, absl::Seconds(5)));
  ASSERT_TRUE(WaitForTask(submitted.series_id(), "busy", v1::TaskStatus::STATE_RUNNING));

  std::string out;
  ASSERT_EQ(Cli({"agents", "--format", "csv"}, &out), 0) << out;
  EXPECT_NE(out.find(",yes,"), std::string::npos) << out;
  EXPECT_NE(out.find(",to-cancel RUNNING\n"), std::string::npos) << out;

  ASSERT_EQ(Cli({"series", "cancel", submitted.series_id()}, &out), 0) << out;
  ASSERT_TRUE(agent->WaitForCancels(1, absl::Seconds(5)));
  EXPECT_EQ(agent->cancels()[0].task_id(), agent->assignments()[0].task_id());
  const v1::SeriesStatus status = Get(submitted.series_id());
  EXPECT_EQ(status.state(), v1::SeriesStatus::STATE_CANCELLED);
  EXPECT_EQ(status.tasks(0).state(), v1::TaskStatus::STATE_CANCELLED);
}

TEST_F(FleetSchedulingTest, HeartbeatsKeepTheLeaseAndAVanishedAgentsTaskEndsLost) {
  // A coordinator of its own on a simulated clock, ticked by the test: no real waiting. The
  // fixture's one goes, or its ticks on the real clock would find every simulated lease expired.
  coordinator_->Shutdown();
  SimulatedClock clock;
  std::unique_ptr<CoordinatorServer> server = StartCoordinator(absl::ZeroDuration(), &clock);
  ASSERT_NE(server, nullptr);
  fleet_ = Stub(*server);
  auto alive = Agent("alive", {}, OnTask::kHold, server.get());
  auto gone = Agent("gone", {}, OnTask::kHold, server.get());
  ASSERT_TRUE(alive->Connect());
  ASSERT_TRUE(gone->Connect());
  const v1::SubmitSeriesResponse submitted = Submit(Spec("leases", "all"));
  ASSERT_TRUE(alive->WaitForAssignments(1, absl::Seconds(5)));
  ASSERT_TRUE(gone->WaitForAssignments(1, absl::Seconds(5)));
  // A held task's agent sends Accepted, one run and its progress; each renews the lease from the
  // clock's now. Wait until the progress is stored, or one processed after the clock moves
  // would renew the lease of "gone" past the reaping Tick.
  ASSERT_TRUE(PollUntil(
      [&] {
        int progressed = 0;
        const v1::SeriesStatus status = Get(submitted.series_id());
        for (const auto& t : status.tasks()) {
          if (t.state() == v1::TaskStatus::STATE_RUNNING && t.runs_done() == 1) ++progressed;
        }
        return progressed == 2;
      },
      absl::Seconds(10)));
  gone->Disconnect();

  clock.Advance(absl::Seconds(20));
  alive->SendHeartbeat();
  ASSERT_TRUE(alive->WaitForHeartbeatAcks(1, absl::Seconds(5)));
  clock.Advance(absl::Seconds(20));  // 40 s after the last word of "gone"; 20 s for "alive"
  server->scheduler()->Tick();

  const v1::SeriesStatus status = Get(submitted.series_id());
  ASSERT_EQ(status.tasks_size(), 2);
  EXPECT_EQ(status.tasks(0).agent_id(), "alive");
  EXPECT_EQ(status.tasks(0).state(), v1::TaskStatus::STATE_RUNNING);
  EXPECT_EQ(status.tasks(1).agent_id(), "gone");
  EXPECT_EQ(status.tasks(1).state(), v1::TaskStatus::STATE_LOST);
  alive.reset();
  server->Shutdown();
}

TEST_F(FleetSchedulingTest, RefusedTaskShowsRefusedWithTheReason) {
  FakeAgentOptions options;
  options.address = coordinator_->address();
  options.agent_id = "strict";
  options.on_task = OnTask::kRefuse;
  options.refuse_reason = "backend llama-server is not in agent.yaml allow.backends";
  FakeAgent agent(options);
  ASSERT_TRUE(agent.Connect());
  const v1::SubmitSeriesResponse submitted = Submit(Spec("refused", "all"));
  ASSERT_TRUE(WaitForTask(submitted.series_id(), "strict", v1::TaskStatus::STATE_REFUSED));

  std::string out;
  ASSERT_EQ(Cli({"series", "show", submitted.series_id()}, &out), 0) << out;
  EXPECT_NE(out.find("strict  REFUSED  1        0/0   0              backend llama-server is not "
                     "in agent.yaml allow.backends\n"),
            std::string::npos)
      << out;
}

TEST_F(FleetSchedulingTest, WatchEndsWithASummaryAndSaysWhetherEveryAgentSucceeded) {
  FakeAgentOptions options;
  options.address = coordinator_->address();
  options.agent_id = "0c0ffee1-0000-4000-8000-000000000001";
  options.hostname = "a100-01";
  options.labels = {{"class", "a100"}};
  options.flag = "CACHE_HIT";
  FakeAgent good(options);
  ASSERT_TRUE(good.Connect());
  const v1::SubmitSeriesResponse one = Submit(Spec("watch-ok", "{agents: [\"0c0ffee1-0000-4000-8000-000000000001\"]}"));
  std::string out;
  ASSERT_EQ(Cli({"series", "watch", one.series_id()}, &out), 0) << out;
  // The agent by hostname, class and short id; its last run's mode, phase and call (the stored
  // record's), and its main figure from the record's declaration, with the run's flag.
  EXPECT_NE(out.find("a100-01 (a100, 0c0ffee1)  3/3  gpu WARM call 3  43.0 tokens/s CACHE_HIT  SUCCEEDED\n"),
            std::string::npos)
      << out;
  // The status itself carries them, for any client of the Fleet service.
  const v1::SeriesStatus watched = Get(one.series_id());
  ASSERT_EQ(watched.tasks_size(), 1);
  EXPECT_EQ(watched.tasks(0).hostname(), "a100-01");
  EXPECT_EQ(watched.tasks(0).agent_class(), "a100");
  EXPECT_EQ(watched.tasks(0).last_run().mode(), "gpu");
  EXPECT_EQ(watched.tasks(0).last_run().call_index(), 3u);
  ASSERT_EQ(watched.tasks(0).last_run().metrics_size(), 1);
  EXPECT_EQ(watched.tasks(0).last_run().metrics(0).headline(), 1u);
  EXPECT_NE(out.find(absl::StrCat("series ", one.series_id(), " DONE: 1 agent, 1 SUCCEEDED\n")),
            std::string::npos)
      << out;
  // The records reached the scheduler after COMMIT (Scheduler::RunsStored): flags per task.
  ASSERT_TRUE(good.WaitForStoredRuns(3, absl::Seconds(5)));
  ASSERT_TRUE(PollUntil(
      [&] {
        const v1::SeriesStatus status = Get(one.series_id());
        const auto& flags = status.tasks(0).flag_counts();
        return flags.count("CACHE_HIT") == 1 && flags.at("CACHE_HIT") == 3;
      },
      absl::Seconds(5)));

  auto bad = Agent("no-1", {}, OnTask::kRefuse);
  ASSERT_TRUE(bad->Connect());
  const v1::SubmitSeriesResponse two = Submit(Spec("watch-mixed", "all"));
  ASSERT_EQ(two.agent_ids_size(), 2);
  EXPECT_EQ(Cli({"series", "watch", two.series_id()}, &out), 1) << out;
  EXPECT_NE(out.find(absl::StrCat("series ", two.series_id(),
                                  " DONE: 2 agents, 1 REFUSED, 1 SUCCEEDED\n"
                                  "  no-1 REFUSED: backend not allowed\n")),
            std::string::npos)
      << out;
}

TEST_F(FleetSchedulingTest, InvalidatedRunsShowTheirReason) {
  auto agent = Agent("inv", {});
  ASSERT_TRUE(agent->Connect());
  const v1::SubmitSeriesResponse submitted = Submit(Spec("to-invalidate", "all"));
  ASSERT_TRUE(agent->WaitForStoredRuns(3, absl::Seconds(10)));
  std::string out;
  EXPECT_EQ(Cli({"runs", "invalidate", "--series", submitted.series_id()}, &out), 2) << out;
  ASSERT_EQ(
      Cli({"runs", "invalidate", "--series", submitted.series_id(), "--reason", "noisy neighbour"},
          &out),
      0)
      << out;
  EXPECT_EQ(out.substr(0, out.find('\n')), "3 runs invalidated: noisy neighbour") << out;
  ASSERT_EQ(Cli({"runs", "--series", submitted.series_id()}, &out), 0) << out;
  size_t shown = 0;
  for (size_t at = 0; (at = out.find("INVALIDATED (noisy neighbour)", at)) != std::string::npos;
       ++at) {
    ++shown;
  }
  EXPECT_EQ(shown, 3u) << out;
}

TEST_F(FleetSchedulingTest, MalformedSpecNamesTheFieldAndLineAndStoresNothing) {
  auto agent = Agent("any", {});
  ASSERT_TRUE(agent->Connect());
  const std::string bad = WriteFile("bad.yaml", absl::StrCat("series: bad\n"
                                                             "task: t\n"
                                                             "backend: llama-server\n"
                                                             "targets:\n"
                                                             "  labelz: [class=a100]\n"));
  std::string out;
  EXPECT_EQ(Cli({"series", "submit", bad}, &out), 2) << out;
  EXPECT_NE(out.find(absl::StrCat("benchfleet: ", bad, ":5: field targets.labelz: unknown key")),
            std::string::npos)
      << out;
  // Over the one spec limit (what an agent's stream receives, less headroom): refused with its
  // size, exit 2, nothing stored.
  const std::string big_text = Spec("big", "all") + "# " + std::string(kMaxSpecBytes, 'x') + "\n";
  const std::string big = WriteFile("big.yaml", big_text);
  EXPECT_EQ(Cli({"series", "submit", big}, &out), 2) << out.substr(0, 2000);
  EXPECT_NE(out.find(absl::StrCat("benchfleet: ", big, ": the spec is ", big_text.size(),
                                  " bytes, over the limit of 1048576 bytes (1 MiB) a task carries to its agents; "
                                  "put large inputs such as prompt lists in a file")),
            std::string::npos)
      << out.substr(0, 2000);
  ASSERT_EQ(Cli({"series", "list"}, &out), 0) << out;
  EXPECT_NE(out.find("\n0 series\n"), std::string::npos) << out;

  const std::string good = WriteFile("good.yaml", Spec("dry", "all"));
  ASSERT_EQ(Cli({"series", "submit", good, "--dry-run"}, &out), 0) << out;
  EXPECT_EQ(out, "dry run: the series would go to 1 agent:\n  any\n");
  ASSERT_EQ(Cli({"series", "list"}, &out), 0) << out;
  EXPECT_NE(out.find("\n0 series\n"), std::string::npos) << out;
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_EQ(agent->assignments().size(), 0u);

  ASSERT_EQ(Cli({"series", "submit", good}, &out), 0) << out;
  EXPECT_NE(out.find(" submitted to 1 agent:\n  any\n"), std::string::npos) << out;
}

// Issue 19, case 9: a binary or non-UTF-8 spec once got a libprotobuf ERROR and an empty message
// (exit 1). The CLI answers FILE:LINE:COLUMN and exit 2 without sending; the coordinator answers
// INVALID_ARGUMENT the same way to a client that sends one anyway; nothing is stored.
TEST_F(FleetSchedulingTest, BinaryOrNonUtf8SpecIsAnsweredWithLineAndColumn) {
  auto agent = Agent("any", {});
  ASSERT_TRUE(agent->Connect());
  const std::string latin1 = WriteFile("latin1.yaml", "series: caf\xE9\ntask: t\nbackend: llama-server\n");
  std::string out;
  EXPECT_EQ(Cli({"series", "submit", latin1}, &out), 2) << out;
  EXPECT_EQ(out, absl::StrCat("benchfleet: ", latin1,
                              ":1:12: not UTF-8 text (byte 0xE9); a series spec is YAML text: is this the right file?\n"));
  const std::string binary = WriteFile("a.out", std::string("\x7F" "ELF\x02\x01\x01\x00\x00\xFF", 10));
  EXPECT_EQ(Cli({"schedule", "add", "--cron", "0 3 * * *", binary}, &out), 2) << out;
  EXPECT_EQ(out, absl::StrCat("benchfleet: ", binary,
                              ":1:1: control character 0x7F is not allowed in YAML text; a series spec is YAML text: "
                              "is this the right file?\n"));

  grpc::ClientContext context;
  v1::SubmitSeriesRequest request;
  request.set_spec_yaml("series: s\ntask: caf\xE9\nbackend: llama-server\n");
  request.set_source_name("test.yaml");
  v1::SubmitSeriesResponse response;
  const grpc::Status s = fleet_->SubmitSeries(&context, request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(),
            "test.yaml:2:10: not UTF-8 text (byte 0xE9); a series spec is YAML text: is this the right file?");
  ASSERT_EQ(Cli({"series", "list"}, &out), 0) << out;
  EXPECT_NE(out.find("\n0 series\n"), std::string::npos) << out;
  EXPECT_EQ(agent->assignments().size(), 0u);
}

TEST_F(FleetSchedulingTest, SeriesSubmittedToOneCoordinatorReachesAgentsOfTheOtherWithinASecond) {
  // The second one polls only once a minute: within a second, only its NOTIFY can wake it.
  std::unique_ptr<CoordinatorServer> other = StartCoordinator(absl::Seconds(60));
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(PollUntil([&] { return other->listening_for_notify(); }, absl::Seconds(10)));
  std::vector<std::unique_ptr<FakeAgent>> here, there;
  for (int i = 0; i < 3; ++i) {
    here.push_back(Agent(absl::StrCat("here-", i), {{"site", "here"}}, OnTask::kHold));
    ASSERT_TRUE(here.back()->Connect());
    there.push_back(
        Agent(absl::StrCat("there-", i), {{"site", "there"}}, OnTask::kHold, other.get()));
    ASSERT_TRUE(there.back()->Connect());
  }
  absl::SleepFor(absl::Milliseconds(200));  // the other's start-up tick is over
  const absl::Time submitted_at = absl::Now();
  const v1::SubmitSeriesResponse submitted = Submit(Spec("two-coordinators", "all"));
  ASSERT_EQ(submitted.agent_ids_size(), 6);
  for (auto& agent : there) {
    ASSERT_TRUE(agent->WaitForAssignments(1, absl::Seconds(1) - (absl::Now() - submitted_at)))
        << agent->agent_id() << " got nothing within 1 s of the submission";
  }
  for (auto& agent : here) ASSERT_TRUE(agent->WaitForAssignments(1, absl::Seconds(1)));
  // Progress through either coordinator lands in the one series.
  ASSERT_TRUE(WaitForTask(submitted.series_id(), "there-0", v1::TaskStatus::STATE_RUNNING));
  ASSERT_TRUE(WaitForTask(submitted.series_id(), "here-0", v1::TaskStatus::STATE_RUNNING));
  here.clear();
  there.clear();
  other->Shutdown();
}

// The case: a served series' records carry the fingerprint of its finished conditions
// (the simulator's devices and version added), which the agent's Hello did not have. The agent
// announces them on its stream, so every run resolves to a stored conditions row, the guide
// names the machine, and the agent keeps its labels (for `agents` and for targeting).
TEST_F(FleetSchedulingTest, AServedSeriesRunsAllResolveToStoredConditions) {
  const std::string models = work_ + "/models";
  ::mkdir(models.c_str(), 0755);
  const std::string model = models + "/qwen2.5-3b-instruct-q4_k_m.gguf";
  std::ofstream(model) << "GGUF simulated model file";
  const std::string sim = BinaryPath("llama-server-sim");
  const std::string config = WriteFile(
      "agent.yaml", absl::StrCat("state_dir: ", work_, "/state\nlabels:\n  class: sim-fleet\n",
                                 "allow:\n  backends: [llama-server]\n  executables: [", sim, "]\n",
                                 "  model_dirs: [", models, "]\n"));
  auto agent = StartAgent(work_, "serve", {"serve", "--config", config, "--coordinator", coordinator_->address()});
  const std::string log = work_ + "/serve.log";
  ASSERT_TRUE(PollUntil([&] { return db_.QueryValue("SELECT count(*) FROM machines") == "1"; }, absl::Seconds(30)))
      << ReadAll(log);
  const std::string agent_id = db_.QueryValue("SELECT agent_id FROM machines");
  ASSERT_TRUE(PollUntil([&] { return Connected(agent_id); }, absl::Seconds(10))) << ReadAll(log);
  const std::string hello_fingerprint = db_.QueryValue("SELECT conditions_fingerprint FROM machines");

  const std::string spec = absl::StrCat("series: served-llama\n"
                                        "task: llama-qwen2.5-3b-q4km\n"
                                        "backend: llama-server\n"
                                        "llama-server:\n"
                                        "  binary: ", sim, "\n"
                                        "  model: ", model, "\n"
                                        "  args: [-c, '256', --sim-load-ms, '100']\n"
                                        "  modes: {gpu: [-ngl, '99']}\n"
                                        "  prompt: Explain in one sentence what a GPU is.\n"
                                        "  n_predict: 8\n"
                                        "  seed: 42\n"
                                        "  health_timeout: 10s\n"
                                        "  request_timeout: 5s\n"
                                        "  stop_grace: 2s\n"
                                        "targets: {labels: [class=sim-fleet]}\n"
                                        "runs:\n  cold: 1\n  warm: 2\n");
  const v1::SubmitSeriesResponse submitted = Submit(spec);
  ASSERT_EQ(submitted.agent_ids_size(), 1);
  EXPECT_EQ(submitted.agent_ids(0), agent_id);
  ASSERT_TRUE(WaitForTask(submitted.series_id(), agent_id, v1::TaskStatus::STATE_SUCCEEDED, absl::Seconds(120)))
      << Get(submitted.series_id()).DebugString() << ReadAll(log);
  ASSERT_TRUE(PollUntil([&] { return db_.QueryValue("SELECT count(*) FROM runs") == "3"; }, absl::Seconds(30)))
      << ReadAll(log);

  // Every run's fingerprint is in conditions, and it is not the Hello's: two rows.
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM runs r WHERE NOT EXISTS "
                           "(SELECT 1 FROM conditions c WHERE c.fingerprint = r.conditions_fingerprint)"),
            "0");
  EXPECT_EQ(db_.QueryValue("SELECT count(DISTINCT conditions_fingerprint) FROM runs"), "1");
  const std::string run_fingerprint = db_.QueryValue("SELECT DISTINCT conditions_fingerprint FROM runs");
  EXPECT_NE(run_fingerprint, hello_fingerprint);
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM conditions"), "2");
  EXPECT_EQ(db_.QueryValue(absl::StrCat("SELECT conditions->'backend_attributes'->>'llama-server.devices' "
                                        "FROM conditions WHERE fingerprint = '", run_fingerprint, "'")),
            "CUDA0 (NVIDIA GeForce RTX 4090)");
  EXPECT_EQ(db_.QueryValue(absl::StrCat("SELECT agent_ids::text FROM conditions WHERE fingerprint = '",
                                        run_fingerprint, "'")),
            absl::StrCat("{", agent_id, "}"));
  // The machine's latest conditions are the announced ones, its labels unchanged.
  EXPECT_EQ(db_.QueryValue("SELECT conditions_fingerprint FROM machines"), run_fingerprint);
  EXPECT_EQ(db_.QueryValue("SELECT labels::text FROM machines"), "{\"class\": \"sim-fleet\"}");
  std::string out;
  ASSERT_EQ(Cli({"agents", "--format", "csv"}, &out), 0) << out;
  EXPECT_NE(out.find(",class=sim-fleet,3,yes,"), std::string::npos) << out;

  // The guide from the coordinator knows the machine.
  ASSERT_EQ(Cli({"guide", "--out", work_ + "/guide", "--lang", "en"}, &out), 0) << out;
  const std::string md = ReadAll(work_ + "/guide/guide.en.md");
  EXPECT_EQ(md.find("Machine conditions unknown"), std::string::npos) << md;

  // Targeting by labels still finds the agent.
  const v1::SubmitSeriesResponse again = Submit(spec);
  ASSERT_EQ(again.agent_ids_size(), 1);
  EXPECT_EQ(again.agent_ids(0), agent_id);
  ASSERT_EQ(Cli({"series", "cancel", again.series_id()}, &out), 0) << out;

  agent->Signal(SIGTERM);
  EXPECT_EQ(agent->Wait(), 0) << ReadAll(log);
}

// Issue 19 case 6: `series cancel` showed CANCELLED while the agent waited out the task's pause
// with its llama-server running, the next task queued behind it. Now the cancel, through this real
// coordinator, ends the agent's task at once: its simulator is stopped and the next task runs.
TEST_F(FleetSchedulingTest, ACancelDuringAServedTasksPauseStopsItsServerAndTheNextTaskRuns) {
  const std::string models = work_ + "/models";
  ::mkdir(models.c_str(), 0755);
  const std::string model = models + "/qwen2.5-3b-instruct-q4_k_m.gguf";
  std::ofstream(model) << "GGUF simulated model file";
  const std::string sim = BinaryPath("llama-server-sim");
  const std::string config = WriteFile(
      "agent.yaml", absl::StrCat("state_dir: ", work_, "/state\nlabels:\n  class: sim-cancel\n",
                                 "allow:\n  backends: [llama-server]\n  executables: [", sim, "]\n",
                                 "  model_dirs: [", models, "]\n"));
  auto agent = StartAgent(work_, "serve", {"serve", "--config", config, "--coordinator", coordinator_->address()});
  const std::string log = work_ + "/serve.log";
  ASSERT_TRUE(PollUntil([&] { return db_.QueryValue("SELECT count(*) FROM machines") == "1"; }, absl::Seconds(30)))
      << ReadAll(log);
  const std::string agent_id = db_.QueryValue("SELECT agent_id FROM machines");
  ASSERT_TRUE(PollUntil([&] { return Connected(agent_id); }, absl::Seconds(10))) << ReadAll(log);
  // The series to cancel: its simulator is the one named "cancel-me" (its --alias).
  auto spec = [&](const std::string& name, const std::string& alias, const std::string& runs) {
    return absl::StrCat("series: ", name, "\ntask: llama-qwen2.5-3b-q4km\nbackend: llama-server\nllama-server:\n"
                        "  binary: ", sim, "\n  model: ", model, "\n"
                        "  args: [-c, '256', --sim-load-ms, '100', -a, ", alias, "]\n"
                        "  modes: {gpu: [-ngl, '99']}\n  prompt: Explain in one sentence what a GPU is.\n"
                        "  n_predict: 8\n  health_timeout: 10s\n  request_timeout: 5s\n  stop_grace: 2s\n"
                        "targets: {labels: [class=sim-cancel]}\nruns:\n", runs);
  };
  const v1::SubmitSeriesResponse paused =
      Submit(spec("paused-llama", "cancel-me", "  cold: 1\n  warm: 2\n  pause_between_runs: 24h\n"));
  ASSERT_EQ(paused.agent_ids_size(), 1);
  ASSERT_TRUE(PollUntil([&] { return db_.QueryValue("SELECT count(*) FROM runs") == "1"; }, absl::Seconds(60)))
      << ReadAll(log);
  ASSERT_EQ(ProcessesNaming("cancel-me").size(), 1u) << ReadAll(log);  // waiting out the pause
  const v1::SubmitSeriesResponse next = Submit(spec("next-llama", "next-one", "  cold: 1\n"));
  ASSERT_EQ(next.agent_ids_size(), 1);

  std::string out;
  const absl::Time cancelled = absl::Now();
  ASSERT_EQ(Cli({"series", "cancel", paused.series_id()}, &out), 0) << out;
  ASSERT_TRUE(PollUntil([&] { return ProcessesNaming("cancel-me").empty(); }, absl::Seconds(10))) << ReadAll(log);
  EXPECT_LT(absl::Now() - cancelled, absl::Seconds(5)) << ReadAll(log);
  ASSERT_TRUE(PollUntil([&] { return ReadAll(log).find(" finished: cancelled") != std::string::npos; },
                        absl::Seconds(10)))
      << ReadAll(log);
  EXPECT_NE(ReadAll(log).find(": gpu: stopped during the pause before warm 1\n"), std::string::npos) << ReadAll(log);
  EXPECT_EQ(Get(paused.series_id()).tasks(0).state(), v1::TaskStatus::STATE_CANCELLED);
  // The task queued behind it runs to its end.
  ASSERT_TRUE(WaitForTask(next.series_id(), agent_id, v1::TaskStatus::STATE_SUCCEEDED, absl::Seconds(60)))
      << Get(next.series_id()).DebugString() << ReadAll(log);
  ASSERT_TRUE(PollUntil([&] { return db_.QueryValue("SELECT count(*) FROM runs") == "2"; }, absl::Seconds(30)))
      << ReadAll(log);

  agent->Signal(SIGTERM);
  EXPECT_EQ(agent->Wait(), 0) << ReadAll(log);
}

}  // namespace
}  // namespace benchfleet::testing
