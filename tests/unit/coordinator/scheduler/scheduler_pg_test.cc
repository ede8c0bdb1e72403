// The Scheduler on PgFleetStore against a real PostgreSQL (a fresh database per test), driven by a
// SimulatedClock and explicit Tick() calls (no sleeps) and a fake TaskSink per agent: fan-out by
// labels, offline agents, leases (LOST, retry), deadlines, cancel, refused, finished, schedules
// with two coordinators (one series per slot; missed slots fire once), invalidation shown as a
// flag, regressions, malformed specs stored nowhere, and what the scheduler tells the metrics
// (tasks known, verdicts, failed ticks) with the fleet snapshot they read.
#include <algorithm>
#include <condition_variable>
#include <fstream>
#include <map>
#include <sstream>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/conditions_fingerprint.h"
#include "common/hashing.h"
#include "common/spec/spec_limits.h"
#include "common/string_views.h"
#include "coordinator/scheduler/regression.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/store/fleet_store.h"
#include "coordinator/store/migrator.h"
#include "coordinator/store/pg_fleet_store.h"
#include "coordinator/store/pg_notify_listener.h"
#include "coordinator/store/pg_run_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/pg_test_db.h"
#include "tests/unit/coordinator/test_records.h"

namespace benchfleet::coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FakeSink : public TaskSink {
 public:
  bool SendAssignment(const v1::TaskAssignment& assignment) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!alive_) return false;
    assignments_.push_back(assignment);
    return true;
  }
  bool SendCancel(const v1::TaskCancel& cancel) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!alive_) return false;
    cancels_.push_back(cancel);
    return true;
  }
  std::vector<v1::TaskAssignment> assignments() {
    std::lock_guard<std::mutex> lock(mu_);
    return assignments_;
  }
  std::vector<v1::TaskCancel> cancels() {
    std::lock_guard<std::mutex> lock(mu_);
    return cancels_;
  }

 private:
  std::mutex mu_;
  bool alive_ = true;
  std::vector<v1::TaskAssignment> assignments_;
  std::vector<v1::TaskCancel> cancels_;
};

// Records the calls the scheduler makes on its metrics, as text.
class RecordingMetrics : public NullMetrics {
 public:
  void TaskKnown(std::string_view agent_id, std::string_view task) override {
    Add(absl::StrCat("TaskKnown ", ToAbsl(agent_id), " ", ToAbsl(task)));
  }
  void RegressionChecked(std::string_view agent_id, std::string_view task, std::string_view verdict) override {
    Add(absl::StrCat("RegressionChecked ", ToAbsl(agent_id), " ", ToAbsl(task), " ", ToAbsl(verdict)));
  }
  void DatabaseError(std::string_view operation) override {
    Add(absl::StrCat("DatabaseError ", ToAbsl(operation)));
  }
  void StaleTaskUpdate() override { Add("StaleTaskUpdate"); }

  std::vector<std::string> calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  void Add(std::string call) {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(std::move(call));
  }
  std::mutex mu_;
  std::vector<std::string> calls_;
};

std::string Spec(const std::string& fleet_keys) {
  return absl::StrCat("series: nightly\ntask: chat-7b\nbackend: llama-server\nruns:\n  cold: 1\n  warm: 2\n",
                      fleet_keys);
}

class SchedulerPgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!db_.available()) GTEST_SKIP() << "BENCHFLEET_TEST_DATABASE_URL is not set";
    ASSERT_TRUE(Migrate(db_.url()).ok());
    runs_ = NewPgRunStore({db_.url()});
    store_ = NewPgFleetStore({db_.url()});
    scheduler_ = NewScheduler("c1");
  }

  std::unique_ptr<Scheduler> NewScheduler(const std::string& name) {
    SchedulerOptions options;
    options.clock = &clock_;
    options.coordinator_id = name;
    options.metrics = &metrics_;
    return std::make_unique<Scheduler>(FleetStores::Of(store_.get()), options);
  }

  void AddMachine(const std::string& agent_id, const std::map<std::string, std::string>& labels) {
    MachineUpdate update;
    update.agent_id = agent_id;
    update.agent_version = "0.1.0";
    update.conditions = testing::MakeConditions(agent_id + ".local", labels);
    update.conditions.set_fingerprint(ConditionsFingerprint(update.conditions));
    update.seen = clock_.Now();
    ASSERT_TRUE(runs_->UpsertMachine(update).ok());
  }

  std::shared_ptr<FakeSink> Connect(const std::string& agent_id) {
    auto sink = std::make_shared<FakeSink>();
    scheduler_->AgentConnected(agent_id, sink);
    return sink;
  }

  std::string Submit(const std::string& spec) {
    v1::SubmitSeriesRequest request;
    request.set_spec_yaml(spec);
    request.set_source_name("s.yaml");
    absl::StatusOr<v1::SubmitSeriesResponse> response = scheduler_->Submit(request);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? response->series_id() : "";
  }

  v1::SeriesStatus Series(const std::string& id) {
    absl::StatusOr<v1::SeriesStatus> s = scheduler_->GetSeries(id);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : v1::SeriesStatus();
  }

  void Update(const std::string& agent, const std::string& task_id,
              const std::function<void(v1::TaskUpdate*)>& fill) {
    v1::TaskUpdate u;
    u.set_task_id(task_id);
    fill(&u);
    scheduler_->TaskUpdated(agent, u);
  }

  void StoreRecords(const std::vector<v1::RunRecord>& records) {
    PreparedRuns prepared;
    for (const auto& r : records) ASSERT_TRUE(runs_->PrepareRun(r, &prepared).ok());
    std::vector<const PreparedRuns*> groups = {&prepared};
    ASSERT_TRUE(runs_->StoreRuns(groups).ok());
  }

  testing::PgTestDb db_;
  SimulatedClock clock_;  // 2026-01-01T00:00:00Z
  RecordingMetrics metrics_;
  std::unique_ptr<RunStore> runs_;
  std::unique_ptr<FleetStore> store_;
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(SchedulerPgTest, FansOutToTheFiftyAgentsWhoseLabelsMatchOnly) {
  std::map<std::string, std::shared_ptr<FakeSink>> sinks;
  std::vector<std::string> expected;
  for (int i = 0; i < 50; ++i) {
    const std::string id = absl::StrCat("agent-", i < 10 ? "0" : "", i);
    const std::string klass = i % 5 == 0 ? "a100" : (i % 5 == 1 ? "m1pro" : "c5");
    const std::string accelerator = i % 2 == 0 ? "nvidia" : "amd";
    AddMachine(id, {{"class", klass}, {"accelerator", accelerator}});
    if (klass != "m1pro" && klass != "c5") expected.push_back(id);
    sinks[id] = Connect(id);
  }
  // a100 machines are i % 5 == 0: with accelerator nvidia or amd both allowed, 10 machines.
  v1::SubmitSeriesRequest request;
  request.set_spec_yaml(
      Spec("targets:\n  labels: [\"accelerator in (nvidia, amd)\", \"class!=m1pro\", \"class=a100\"]\n"));
  request.set_source_name("s.yaml");
  absl::StatusOr<v1::SubmitSeriesResponse> response = scheduler_->Submit(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(std::vector<std::string>(response->agent_ids().begin(), response->agent_ids().end()), expected);
  ASSERT_EQ(expected.size(), 10u);
  for (const auto& [id, sink] : sinks) {
    const bool matches = std::find(expected.begin(), expected.end(), id) != expected.end();
    const auto sent = sink->assignments();
    ASSERT_EQ(sent.size(), matches ? 1u : 0u) << id;
    if (matches) {
      EXPECT_EQ(sent[0].series_id(), response->series_id());
      EXPECT_EQ(sent[0].attempt(), 1u);
      EXPECT_EQ(sent[0].spec_yaml(), request.spec_yaml());
    }
  }
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM tasks WHERE state = 'RUNNING' AND coordinator_id = 'c1'"), "10");
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM tasks"), "10");
  const v1::SeriesStatus s = Series(response->series_id());
  EXPECT_EQ(s.state(), v1::SeriesStatus::STATE_ACTIVE);
  EXPECT_EQ(s.name(), "nightly");
  ASSERT_EQ(s.tasks_size(), 10);
  EXPECT_EQ(s.tasks(0).agent_id(), "agent-00");

  // A dry run only says which agents would get it.
  request.set_dry_run(true);
  response = scheduler_->Submit(request);
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->series_id(), "");
  EXPECT_EQ(response->agent_ids_size(), 10);
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM series"), "1");
}

TEST_F(SchedulerPgTest, EveryExampleSpecIsAcceptedOnADryRun) {
  AddMachine("gpu-a100", {{"class", "a100"}, {"accelerator", "nvidia"}});
  AddMachine("cpu-c5", {{"class", "c5"}, {"accelerator", "none"}});
  const std::map<std::string, std::vector<std::string>> examples = {
      {"llama-server-gpu-vs-cpu.yaml", {"gpu-a100"}},
      {"comfyui-sd15-txt2img.yaml", {"gpu-a100"}},
      {"llama-server-url.yaml", {"cpu-c5", "gpu-a100"}},
      {"llama-server-until-stable.yaml", {"gpu-a100"}},  // runs.warm.until
      {"openai-concurrency-sweep.yaml", {"gpu-a100"}},
      {"workflow-v6.yaml", {"cpu-c5", "gpu-a100"}},
  };
  for (const auto& [name, agents] : examples) {
    std::ifstream in(std::string(BENCHFLEET_SOURCE_DIR) + "/examples/series/" + name);
    std::stringstream text;
    text << in.rdbuf();
    v1::SubmitSeriesRequest request;
    request.set_spec_yaml(text.str());
    request.set_source_name(name);
    request.set_dry_run(true);
    absl::StatusOr<v1::SubmitSeriesResponse> response = scheduler_->Submit(request);
    ASSERT_TRUE(response.ok()) << name << ": " << response.status();
    EXPECT_EQ(std::vector<std::string>(response->agent_ids().begin(), response->agent_ids().end()), agents) << name;
  }
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM series"), "0");
}

TEST_F(SchedulerPgTest, AnOfflineAgentGetsItsTaskWhenItConnects) {
  AddMachine("a", {{"class", "a100"}});
  const std::string id = Submit(Spec("targets: all\n"));
  EXPECT_EQ(Series(id).tasks(0).state(), v1::TaskStatus::STATE_PENDING);
  scheduler_->Tick();
  EXPECT_EQ(Series(id).tasks(0).state(), v1::TaskStatus::STATE_PENDING);
  auto sink = Connect("a");
  ASSERT_EQ(sink->assignments().size(), 1u);
  EXPECT_EQ(sink->assignments()[0].task_id(), Series(id).tasks(0).task_id());
  EXPECT_EQ(Series(id).tasks(0).state(), v1::TaskStatus::STATE_RUNNING);
  // Sent once: a later Tick does not send it again (a reconnect does: see below).
  scheduler_->Tick();
  EXPECT_EQ(sink->assignments().size(), 1u);
}

TEST_F(SchedulerPgTest, AReconnectingAgentGetsItsRunningTaskAgainOnItsNewStream) {
  AddMachine("a", {});
  auto old_stream = Connect("a");
  const std::string id = Submit(Spec("targets: all\n"));
  ASSERT_EQ(old_stream->assignments().size(), 1u);  // sent on a stream that may already be dead
  auto new_stream = Connect("a");
  ASSERT_EQ(new_stream->assignments().size(), 1u);
  EXPECT_EQ(new_stream->assignments()[0].task_id(), Series(id).tasks(0).task_id());
  EXPECT_EQ(new_stream->assignments()[0].attempt(), 1u);
  EXPECT_EQ(Series(id).tasks(0).state(), v1::TaskStatus::STATE_RUNNING);
}

TEST_F(SchedulerPgTest, AnExpiredLeaseEndsTheTaskLost) {
  AddMachine("a", {});
  auto sink = Connect("a");
  const std::string id = Submit(Spec("targets: all\n"));
  const std::string task = Series(id).tasks(0).task_id();
  Update("a", task, [](v1::TaskUpdate* u) { u->mutable_accepted()->set_runs_total(3); });
  clock_.Advance(absl::Seconds(29));
  scheduler_->Heartbeat("a");  // lease now ends at 00:00:59
  clock_.Advance(absl::Seconds(29));
  scheduler_->Tick();
  EXPECT_EQ(Series(id).tasks(0).state(), v1::TaskStatus::STATE_RUNNING);
  clock_.Advance(absl::Seconds(2));
  scheduler_->Tick();
  const v1::SeriesStatus s = Series(id);
  EXPECT_EQ(s.tasks(0).state(), v1::TaskStatus::STATE_LOST);
  EXPECT_EQ(s.tasks(0).message(), "lease expired at 2026-01-01T00:00:59Z: the agent stopped sending heartbeats");
  EXPECT_EQ(s.state(), v1::SeriesStatus::STATE_DONE);
  EXPECT_FALSE(s.all_succeeded());
}

TEST_F(SchedulerPgTest, AnExpiredLeaseWithARetryLeftIsSentAgainAsAttemptTwo) {
  AddMachine("a", {});
  auto sink = Connect("a");
  const std::string id = Submit(Spec("targets: all\nretry: {max_attempts: 2}\n"));
  clock_.Advance(absl::Seconds(30));
  scheduler_->Tick();
  // Back to PENDING with attempt 2, and re-sent at once since the agent's stream is open here.
  ASSERT_EQ(sink->assignments().size(), 2u);
  EXPECT_EQ(sink->assignments()[1].attempt(), 2u);
  EXPECT_EQ(sink->assignments()[1].task_id(), sink->assignments()[0].task_id());
  v1::SeriesStatus s = Series(id);
  EXPECT_EQ(s.tasks(0).state(), v1::TaskStatus::STATE_RUNNING);
  EXPECT_EQ(s.tasks(0).attempt(), 2u);
  clock_.Advance(absl::Seconds(30));
  scheduler_->Tick();
  s = Series(id);
  EXPECT_EQ(s.tasks(0).state(), v1::TaskStatus::STATE_LOST);
  EXPECT_EQ(s.tasks(0).attempt(), 2u);
  EXPECT_EQ(sink->assignments().size(), 2u);
}

TEST_F(SchedulerPgTest, APendingTaskPastTheDeadlineExpires) {
  AddMachine("a", {});
  const std::string id = Submit(Spec("targets: all\ndeadline: 1h\n"));
  EXPECT_EQ(Series(id).deadline().seconds(), 1767225600 + 3600);
  clock_.Advance(absl::Minutes(59));
  scheduler_->Tick();
  EXPECT_EQ(Series(id).tasks(0).state(), v1::TaskStatus::STATE_PENDING);
  clock_.Advance(absl::Minutes(1));
  scheduler_->Tick();
  const v1::SeriesStatus s = Series(id);
  EXPECT_EQ(s.tasks(0).state(), v1::TaskStatus::STATE_EXPIRED);
  EXPECT_EQ(s.tasks(0).message(),
            "the series' deadline 2026-01-01T01:00:00Z passed before the agent got the task");
  EXPECT_EQ(s.state(), v1::SeriesStatus::STATE_DONE);
  auto sink = Connect("a");
  EXPECT_EQ(sink->assignments().size(), 0u);

  // An RFC 3339 deadline is taken as it is, and travels with the assignment.
  const std::string at = Submit(Spec("targets: all\ndeadline: 2026-01-01T02:00:00Z\n"));
  EXPECT_EQ(Series(at).deadline().seconds(), 1767225600 + 7200);
  ASSERT_EQ(sink->assignments().size(), 1u);
  EXPECT_EQ(sink->assignments()[0].deadline().seconds(), 1767225600 + 7200);
}

TEST_F(SchedulerPgTest, CancelEndsEveryOpenTaskAndTellsConnectedAgents) {
  AddMachine("a", {});
  AddMachine("b", {});
  auto sink = Connect("a");
  const std::string id = Submit(Spec("targets: all\n"));
  absl::StatusOr<v1::SeriesStatus> s = scheduler_->Cancel(id);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->state(), v1::SeriesStatus::STATE_CANCELLED);
  ASSERT_EQ(s->tasks_size(), 2);
  EXPECT_EQ(s->tasks(0).state(), v1::TaskStatus::STATE_CANCELLED);
  EXPECT_EQ(s->tasks(1).state(), v1::TaskStatus::STATE_CANCELLED);
  EXPECT_EQ(s->tasks(1).message(), "cancelled by an operator");
  ASSERT_EQ(sink->cancels().size(), 1u);
  EXPECT_EQ(sink->cancels()[0].task_id(), s->tasks(0).task_id());
  // The agent's answer changes nothing; b connecting later gets nothing.
  Update("a", s->tasks(0).task_id(), [](v1::TaskUpdate* u) { u->mutable_finished()->set_cancelled(true); });
  EXPECT_EQ(Series(id).tasks(0).state(), v1::TaskStatus::STATE_CANCELLED);
  EXPECT_EQ(Connect("b")->assignments().size(), 0u);
  EXPECT_EQ(scheduler_->Cancel(NewUuid()).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(scheduler_->Cancel("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(SchedulerPgTest, ACancelReachesAnAgentConnectedToTheOtherCoordinator) {
  AddMachine("a", {});
  std::unique_ptr<Scheduler> other = NewScheduler("c2");
  auto sink = std::make_shared<FakeSink>();
  other->AgentConnected("a", sink);
  const std::string id = Submit(Spec("targets: all\n"));  // on c1, which does not hold a's stream
  EXPECT_EQ(sink->assignments().size(), 0u);
  other->Tick();
  ASSERT_EQ(sink->assignments().size(), 1u);
  EXPECT_EQ(db_.QueryValue("SELECT coordinator_id FROM tasks"), "c2");
  ASSERT_TRUE(scheduler_->Cancel(id).ok());
  EXPECT_EQ(sink->cancels().size(), 0u);
  other->Tick();
  ASSERT_EQ(sink->cancels().size(), 1u);
  EXPECT_EQ(sink->cancels()[0].task_id(), sink->assignments()[0].task_id());
  other->Tick();
  EXPECT_EQ(sink->cancels().size(), 1u);
}

TEST_F(SchedulerPgTest, TwoCoordinatorsTickingTogetherTakeEachTaskOnce) {
  std::unique_ptr<Scheduler> other = NewScheduler("c2");
  std::vector<std::shared_ptr<FakeSink>> here, there;
  for (int i = 0; i < 20; ++i) {
    const std::string id = absl::StrCat("agent-", i);
    AddMachine(id, {});
  }
  Submit(Spec("targets: all\n"));  // nobody connected yet: 20 PENDING tasks
  for (int i = 0; i < 20; ++i) {
    // As if each agent's stream were open to both (a reconnect racing the old stream's end).
    here.push_back(std::make_shared<FakeSink>());
    there.push_back(std::make_shared<FakeSink>());
  }
  std::thread a([&] {
    for (int i = 0; i < 20; ++i) scheduler_->AgentConnected(absl::StrCat("agent-", i), here[i]);
  });
  std::thread b([&] {
    for (int i = 19; i >= 0; --i) other->AgentConnected(absl::StrCat("agent-", i), there[i]);
  });
  a.join();
  b.join();
  scheduler_->Tick();
  other->Tick();
  // Each task is taken once (attempt 1, RUNNING once). A connect that comes after the other
  // coordinator took it sends the same task again, as on any reconnect: the agent runs a task id
  // once and answers a repeat with its latest update.
  for (int i = 0; i < 20; ++i) {
    std::set<std::string> ids;
    for (FakeSink* sink : {here[i].get(), there[i].get()}) {
      for (const auto& a : sink->assignments()) {
        ids.insert(a.task_id());
        EXPECT_EQ(a.attempt(), 1u) << i;
      }
    }
    EXPECT_EQ(ids.size(), 1u) << i;
  }
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM tasks WHERE state = 'RUNNING'"), "20");
}

TEST_F(SchedulerPgTest, ARefusalIsRecordedWithTheAgentsReason) {
  AddMachine("a", {});
  Connect("a");
  const std::string id = Submit(Spec("targets: all\n"));
  Update("a", Series(id).tasks(0).task_id(), [](v1::TaskUpdate* u) {
    u->mutable_refused()->set_reason("backend llama-server is not in the allow-list of agent.yaml");
  });
  const v1::SeriesStatus s = Series(id);
  EXPECT_EQ(s.tasks(0).state(), v1::TaskStatus::STATE_REFUSED);
  EXPECT_EQ(s.tasks(0).message(), "backend llama-server is not in the allow-list of agent.yaml");
  EXPECT_EQ(s.state(), v1::SeriesStatus::STATE_DONE);
}

TEST_F(SchedulerPgTest, ProgressThenFinishedSucceedsAndOtherAgentsUpdatesAreIgnored) {
  AddMachine("a", {});
  AddMachine("b", {});
  Connect("a");
  Connect("b");
  const std::string id = Submit(Spec("targets: all\n"));
  const std::string task_a = Series(id).tasks(0).task_id();
  const std::string task_b = Series(id).tasks(1).task_id();
  Update("a", task_a, [](v1::TaskUpdate* u) { u->mutable_accepted()->set_runs_total(3); });
  Update("a", task_a, [](v1::TaskUpdate* u) {
    auto* p = u->mutable_progress();
    p->set_runs_done(2);
    p->set_runs_total(3);
    p->set_phase("WARM");
    p->set_call_index(1);
    p->set_last_figure("generation tokens/s 52.9 tokens/s");
  });
  Update("b", task_a, [](v1::TaskUpdate* u) { u->mutable_refused()->set_reason("not mine"); });
  v1::SeriesStatus s = Series(id);
  EXPECT_EQ(s.tasks(0).state(), v1::TaskStatus::STATE_RUNNING);
  EXPECT_EQ(s.tasks(0).runs_done(), 2u);
  EXPECT_EQ(s.tasks(0).runs_total(), 3u);
  EXPECT_EQ(s.tasks(0).phase(), "WARM");
  EXPECT_EQ(s.tasks(0).last_figure(), "generation tokens/s 52.9 tokens/s");
  Update("a", task_a, [](v1::TaskUpdate* u) {
    u->mutable_finished()->set_ok(true);
    u->mutable_finished()->set_runs_done(3);
    u->mutable_finished()->set_runs_failed(1);
  });
  Update("b", task_b, [](v1::TaskUpdate* u) {
    u->mutable_finished()->set_ok(false);
    u->mutable_finished()->set_message("llama-server exited with code 1");
  });
  s = Series(id);
  EXPECT_EQ(s.tasks(0).state(), v1::TaskStatus::STATE_SUCCEEDED);
  EXPECT_EQ(s.tasks(0).runs_failed(), 1u);
  EXPECT_EQ(s.tasks(1).state(), v1::TaskStatus::STATE_FAILED);
  EXPECT_EQ(s.tasks(1).message(), "llama-server exited with code 1");
  EXPECT_EQ(s.state(), v1::SeriesStatus::STATE_DONE);
  EXPECT_FALSE(s.all_succeeded());
}

TEST_F(SchedulerPgTest, WaitForChangeReturnsAtOnceAfterAChange) {
  AddMachine("a", {});
  const uint64_t v0 = scheduler_->WaitForChange(0, absl::ZeroDuration());
  Submit(Spec("targets: all\n"));
  EXPECT_GT(scheduler_->WaitForChange(v0, absl::Seconds(5)), v0);
}

TEST_F(SchedulerPgTest, TwoCoordinatorsFireEachSlotOnceAndMissedSlotsOnce) {
  AddMachine("a", {});
  std::unique_ptr<Scheduler> other = NewScheduler("c2");
  v1::AddScheduleRequest add;
  add.set_cron("0 3 * * *");
  add.set_spec_yaml(Spec("targets: all\n"));
  add.set_source_name("s.yaml");
  absl::StatusOr<v1::Schedule> schedule = scheduler_->AddSchedule(add);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  EXPECT_EQ(schedule->next_fire_time().seconds(), 1767225600 + 3 * 3600);
  scheduler_->Tick();
  other->Tick();
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM series"), "0");

  clock_.Advance(absl::Hours(3));
  scheduler_->Tick();
  other->Tick();
  scheduler_->Tick();
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM series"), "1");
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM series WHERE schedule_id IS NOT NULL AND "
                           "slot_time = '2026-01-01 03:00:00+00'"),
            "1");

  // Every coordinator was down over three slots: only the latest fires, once.
  clock_.Advance(absl::Hours(24 * 3) + absl::Minutes(30));
  other->Tick();
  scheduler_->Tick();
  other->Tick();
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM series"), "2");
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM series WHERE slot_time = '2026-01-04 03:00:00+00'"), "1");
  absl::StatusOr<std::vector<v1::Schedule>> listed = other->ListSchedules();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].last_fire_time().seconds(), 1767225600 + 3 * 86400 + 3 * 3600);
  EXPECT_EQ((*listed)[0].next_fire_time().seconds(), 1767225600 + 4 * 86400 + 3 * 3600);
  EXPECT_EQ((*listed)[0].last_series_id(),
            db_.QueryValue("SELECT id FROM series WHERE slot_time = '2026-01-04 03:00:00+00'"));

  ASSERT_TRUE(other->RemoveSchedule(schedule->schedule_id()).ok());
  EXPECT_EQ(scheduler_->RemoveSchedule(schedule->schedule_id()).code(), absl::StatusCode::kNotFound);
  clock_.Advance(absl::Hours(24));
  scheduler_->Tick();
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM series"), "2");

  add.set_cron("0 3 * * *");
  add.set_spec_yaml(Spec("targets: everything\n"));
  EXPECT_EQ(scheduler_->AddSchedule(add).status(),
            absl::InvalidArgumentError(
                "s.yaml:7: field targets: must be `all` or a map with agents and/or labels (got 'everything')"));
  add.set_cron("0 3 * *");
  EXPECT_EQ(scheduler_->AddSchedule(add).status().message(),
            "cron '0 3 * *': expected 5 fields (minute hour day-of-month month day-of-week, UTC), got 4");
}

TEST_F(SchedulerPgTest, AnInvalidatedRunShowsAsAFlagInListRuns) {
  v1::RunRecord run = testing::MakeRecord(1);
  StoreRecords({run});
  v1::InvalidateRunsRequest request;
  request.add_run_ids(run.run_id());
  request.set_reason("noisy neighbour on the host");
  absl::StatusOr<std::vector<std::string>> ids = scheduler_->InvalidateRuns(request);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_THAT(*ids, ElementsAre(run.run_id()));
  absl::StatusOr<RunPage> page = runs_->ListRuns(RunQuery{});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->runs.size(), 1u);
  ASSERT_EQ(page->runs[0].flags_size(), 1);
  EXPECT_EQ(page->runs[0].flags(0).code(), "INVALIDATED");
  EXPECT_EQ(page->runs[0].flags(0).reason(), "noisy neighbour on the host");

  const std::string unknown = NewUuid();
  request.add_run_ids(unknown);
  EXPECT_EQ(scheduler_->InvalidateRuns(request).status(), absl::NotFoundError("no run " + unknown));
  request.clear_reason();
  EXPECT_EQ(scheduler_->InvalidateRuns(request).status().code(), absl::StatusCode::kInvalidArgument);
  v1::InvalidateRunsRequest by_series;
  by_series.set_series_id("series-1");
  by_series.set_reason("bad cable");
  ids = scheduler_->InvalidateRuns(by_series);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_THAT(*ids, ElementsAre(run.run_id()));
  by_series.set_series_id(NewUuid());
  EXPECT_EQ(scheduler_->InvalidateRuns(by_series).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(SchedulerPgTest, AMalformedSpecIsRejectedNamingFieldAndLineAndNothingIsStored) {
  AddMachine("a", {});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Spec("targets:\n  labels: [\"class in a100\"]\n"),
       "s.yaml:8: field targets.labels[0]: cannot read 'class in a100': the values of in / notin go in "
       "parentheses (write key=value, key!=value, key in (a, b), key notin (a, b), key or !key)"},
      {Spec("targets: all\nretry: {max_attempts: 0}\n"),
       "s.yaml:8: field retry.max_attempts: must be a whole number from 1 to 100 (1: no retry)"},
      {Spec("targets: all\ndeadline: soon\n"),
       "s.yaml:8: field deadline: must be a duration after submission (2h, 90m) or an RFC 3339 time "
       "(2026-01-02T03:00:00Z), got 'soon'"},
      // Issue 19 case 6: a spec's durations have upper bounds; the fleet deadline's is 30 days.
      {Spec("targets: all\ndeadline: 100000000h\n"), "s.yaml:8: field deadline: must be at most 720h, got 100000000h"},
      {Spec(""), "s.yaml:1: field targets: missing: say which agents run the series (`all`, or a map with "
                 "agents and/or labels)"},
  };
  for (const auto& [spec, message] : cases) {
    v1::SubmitSeriesRequest request;
    request.set_spec_yaml(spec);
    request.set_source_name("s.yaml");
    EXPECT_EQ(scheduler_->Submit(request).status(), absl::InvalidArgumentError(message));
  }
  v1::SubmitSeriesRequest request;
  request.set_spec_yaml(Spec("targets:\n  labels: [class=a100]\n"));
  EXPECT_EQ(scheduler_->Submit(request).status(),
            absl::FailedPreconditionError("no agent matches targets labels [class=a100] (1 agents known)"));
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM series"), "0");
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM tasks"), "0");
}

TEST_F(SchedulerPgTest, TheRunsOfASeriesNoScheduleFiredAreCheckedAgainstTheirBaseline) {
  AddMachine(testing::kAgentId, {});
  const std::string series_id = Submit(Spec("targets: all\n"));
  const std::string task_id = Series(series_id).tasks(0).task_id();

  // Earlier runs of another task (MakeRecord's "task-1"): the baseline.
  std::vector<v1::RunRecord> baseline;
  for (uint32_t i = 1; i <= 6; ++i) {
    v1::RunRecord r = testing::MakeRecord(i);
    r.mutable_metrics(0)->set_value(i == 6 ? 10 : 49.5 + i * 0.5);  // the 6th: a cache hit, never baseline
    if (i == 6) r.add_flags()->set_code("CACHE_HIT");
    baseline.push_back(r);
  }
  StoreRecords(baseline);
  // Three warm calls of this task at 40 tokens/s, each checked as it is stored; a cache hit is not.
  std::vector<std::string> ids;
  for (uint32_t call = 10; call <= 12; ++call) {
    v1::RunRecord run = testing::MakeRecord(call);
    run.set_series_id(series_id);
    run.set_task_id(task_id);
    run.mutable_metrics(0)->set_value(40);
    ids.push_back(run.run_id());
    v1::RunRecord cached = testing::MakeRecord(call + 10);
    cached.set_task_id(task_id);
    cached.add_flags()->set_code("CACHE_HIT");
    StoreRecords({run, cached});
    scheduler_->RunsStored({run, cached});
  }

  const v1::SeriesStatus s = Series(series_id);
  // The newest verdict of the task's one point (gpu warm): 3 calls against 5 earlier runs.
  ASSERT_EQ(s.tasks(0).regressions_size(), 1);
  const v1::RegressionVerdict& v = s.tasks(0).regressions(0);
  EXPECT_EQ(v.run_id(), ids[2]);
  EXPECT_EQ(v.kind(), v1::RegressionVerdict::KIND_REGRESSION);
  EXPECT_TRUE(v.regression());
  EXPECT_THAT(v.sample_run_ids(), ElementsAre(ids[0], ids[1], ids[2]));
  EXPECT_EQ(v.baseline_run_ids_size(), 5);
  EXPECT_DOUBLE_EQ(v.baseline_median(), 51);
  // Reference: enumeration in Python, 2 of C(8, 3) = 56 splits, p = 0.03571428571428571.
  EXPECT_NEAR(v.p_value(), 0.03571428571428571, 1e-15);
  EXPECT_EQ(v.metric(), "tokens_per_second");
  EXPECT_EQ(v.label(), "output tokens/s");
  // Every verdict is stored: 1 and 2 calls could never be significant against 5 distinct values.
  EXPECT_EQ(db_.QueryValue(absl::StrCat("SELECT string_agg(g.verdict ->> 'kind', ',' ORDER BY r.start_time) "
                                        "FROM regressions g JOIN runs r ON r.run_id = g.run_id WHERE g.task_id = '",
                                        task_id, "'")),
            "KIND_SAMPLE_TOO_SMALL,KIND_SAMPLE_TOO_SMALL,KIND_REGRESSION");
  // The regression annotates its sample's three runs.
  EXPECT_EQ(s.tasks(0).flag_counts().at("CACHE_HIT"), 3u);
  EXPECT_EQ(s.tasks(0).flag_counts().at("REGRESSION"), 3u);
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM run_annotations WHERE code = 'REGRESSION'"), "3");
  EXPECT_EQ(db_.QueryValue(absl::StrCat("SELECT reason FROM run_annotations WHERE run_id = '", ids[2], "'")),
            "REGRESSION: p = 0.0357 < 0.05 (Mann-Whitney U, two-sided, exact), 3 warm calls of this series vs 5 "
            "earlier runs: output tokens/s median 40 vs 51 tokens/s (21.6% worse, threshold 10%)");
  EXPECT_THAT(metrics_.calls(),
              ElementsAre("TaskKnown agent-1 chat-7b", "RegressionChecked agent-1 chat-7b sample_too_small",
                          "RegressionChecked agent-1 chat-7b sample_too_small",
                          "RegressionChecked agent-1 chat-7b regression"));
}

TEST_F(SchedulerPgTest, ABaselineOfTwoRunsIsTooSmallForAVerdictAndSaysSo) {
  AddMachine(testing::kAgentId, {});
  const std::string series_id = Submit(Spec("targets: all\n"));
  const std::string task_id = Series(series_id).tasks(0).task_id();
  StoreRecords({testing::MakeRecord(1), testing::MakeRecord(2)});
  std::vector<v1::RunRecord> runs;
  for (uint32_t call = 10; call <= 13; ++call) {
    v1::RunRecord run = testing::MakeRecord(call);
    run.set_series_id(series_id);
    run.set_task_id(task_id);
    run.mutable_metrics(0)->set_value(20);  // far below 41 and 42, but against two runs only
    runs.push_back(run);
  }
  StoreRecords(runs);
  scheduler_->RunsStored(runs);

  const v1::SeriesStatus s = Series(series_id);
  ASSERT_EQ(s.tasks(0).regressions_size(), 1);
  const v1::RegressionVerdict& v = s.tasks(0).regressions(0);
  EXPECT_EQ(v.kind(), v1::RegressionVerdict::KIND_BASELINE_TOO_SMALL);
  EXPECT_FALSE(v.regression());
  EXPECT_EQ(v.baseline_run_ids_size(), 2);
  EXPECT_EQ(v.sample_run_ids_size(), 4);
  EXPECT_EQ(v.baseline_runs_needed(), 3);
  EXPECT_EQ(v.test(), "");
  EXPECT_EQ(s.tasks(0).flag_counts().count("REGRESSION"), 0u);
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM regressions WHERE NOT regression"), "4");
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM run_annotations"), "0");
}

// The simulator of one agent's warm calls: `level` tokens/s times each call's factor (its noise).
std::vector<v1::RunRecord> SimulatedCalls(const std::string& agent_id, const std::string& series_id,
                                          const std::string& task_id, absl::Time start, double level,
                                          const std::vector<double>& noise) {
  std::vector<v1::RunRecord> out;
  for (size_t i = 0; i < noise.size(); ++i) {
    v1::RunRecord r = testing::MakeRecord(static_cast<uint32_t>(i + 1));
    r.set_agent_id(agent_id);
    r.set_series_id(series_id);
    r.set_task_id(task_id);
    r.set_simulated(true);
    r.mutable_start_time()->set_seconds(absl::ToUnixSeconds(start) + 10 * static_cast<int64_t>(i));
    r.mutable_end_time()->set_seconds(absl::ToUnixSeconds(start) + 10 * static_cast<int64_t>(i) + 9);
    r.mutable_metrics(0)->set_value(level * noise[i]);
    out.push_back(r);
  }
  return out;
}

TEST_F(SchedulerPgTest, AScheduledSeriesEightPercentSlowerIsFlaggedWithLowNoiseAndNotSignificantWithHighNoise) {
  AddMachine("quiet", {});
  AddMachine("noisy", {});
  v1::AddScheduleRequest add;
  add.set_cron("0 * * * *");
  add.set_spec_yaml(Spec("targets: all\nregression:\n  threshold: 0.05\n  baseline_runs: 5\n"));
  ASSERT_TRUE(scheduler_->AddSchedule(add).ok());
  // The quiet machine's calls vary by half a percent, the noisy one's by ten.
  const std::vector<double> quiet = {1.003, 0.998, 1.005, 0.996, 1.001};
  const std::vector<double> noisy_before = {1.10, 0.90, 1.05, 0.95, 1.00};
  const std::vector<double> noisy_after = {0.95, 1.10, 1.00, 0.90, 1.05};
  // Two slots: at 50 tokens/s, then 8% slower (46 tokens/s); each call stored and checked as it comes.
  std::map<std::string, std::string> task_of_agent;
  for (const double level : {50.0, 46.0}) {
    clock_.Advance(absl::Hours(1));
    scheduler_->Tick();
    absl::StatusOr<std::vector<v1::Schedule>> schedules = scheduler_->ListSchedules();
    ASSERT_TRUE(schedules.ok());
    const std::string series_id = (*schedules)[0].last_series_id();
    const v1::SeriesStatus series = Series(series_id);
    for (const v1::TaskStatus& t : series.tasks()) {
      task_of_agent[t.agent_id()] = t.task_id();
      const bool is_quiet = t.agent_id() == "quiet";
      const std::vector<double>& noise = is_quiet ? quiet : level == 50.0 ? noisy_before : noisy_after;
      for (const v1::RunRecord& r : SimulatedCalls(t.agent_id(), series_id, t.task_id(), clock_.Now(), level, noise)) {
        StoreRecords({r});
        scheduler_->RunsStored({r});
      }
    }
  }
  auto kinds = [&](const std::string& agent) {
    return db_.QueryValue(absl::StrCat("SELECT string_agg(g.verdict ->> 'kind', ',' ORDER BY r.start_time) "
                                       "FROM regressions g JOIN runs r ON r.run_id = g.run_id WHERE g.task_id = '",
                                       task_of_agent[agent], "'"));
  };
  // References (enumeration in Python, exact two-sided): quiet, 3, 4 and 5 calls wholly below the
  // 5 earlier ones, p = 2/56, 2/126, 2/252 = 0.007936507936507936; noisy, 5 calls against 5,
  // p = 56/252 = 0.2222222222222222. Both medians are exactly 8% down (46.046 vs 50.05; 46 vs 50).
  EXPECT_EQ(kinds("quiet"), "KIND_SAMPLE_TOO_SMALL,KIND_SAMPLE_TOO_SMALL,KIND_REGRESSION,KIND_REGRESSION,"
                            "KIND_REGRESSION");
  EXPECT_EQ(kinds("noisy"), "KIND_SAMPLE_TOO_SMALL,KIND_SAMPLE_TOO_SMALL,KIND_NOT_SIGNIFICANT,"
                            "KIND_NOT_SIGNIFICANT,KIND_NOT_SIGNIFICANT");

  absl::StatusOr<std::vector<v1::Schedule>> schedules = scheduler_->ListSchedules();
  ASSERT_TRUE(schedules.ok());
  const v1::SeriesStatus s = Series((*schedules)[0].last_series_id());
  ASSERT_EQ(s.tasks_size(), 2);
  for (const v1::TaskStatus& t : s.tasks()) {
    ASSERT_EQ(t.regressions_size(), 1) << t.agent_id();
    const v1::RegressionVerdict& v = t.regressions(0);
    EXPECT_EQ(v.sample_run_ids_size(), 5);
    EXPECT_EQ(v.baseline_run_ids_size(), 5);
    EXPECT_DOUBLE_EQ(v.threshold(), 0.05);
    EXPECT_DOUBLE_EQ(v.level(), 0.05);
    EXPECT_NEAR(v.sample_change(), -0.08, 1e-12);
    if (t.agent_id() == "quiet") {
      EXPECT_EQ(v.kind(), v1::RegressionVerdict::KIND_REGRESSION);
      EXPECT_NEAR(v.p_value(), 0.007936507936507936, 1e-15);
      EXPECT_EQ(t.flag_counts().at("REGRESSION"), 5u);
      EXPECT_EQ(RegressionReason(v),
                "REGRESSION: p = 0.00794 < 0.05 (Mann-Whitney U, two-sided, exact), 5 warm calls of this series vs 5 "
                "earlier runs: output tokens/s median 46.05 vs 50.05 tokens/s (8.0% worse, threshold 5%)");
    } else {
      EXPECT_EQ(v.kind(), v1::RegressionVerdict::KIND_NOT_SIGNIFICANT);
      EXPECT_FALSE(v.regression());
      EXPECT_NEAR(v.p_value(), 0.2222222222222222, 1e-15);
      EXPECT_EQ(t.flag_counts().count("REGRESSION"), 0u);
      EXPECT_EQ(RegressionReason(v),
                "NOT_SIGNIFICANT: p = 0.222 >= 0.05 (Mann-Whitney U, two-sided, exact), 5 warm calls of this series "
                "vs 5 earlier runs: output tokens/s median 46 vs 50 tokens/s (8.0% worse, threshold 5%)");
    }
  }
  // The first slot's series had no earlier runs at all: baseline too small, every call.
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM regressions WHERE verdict ->> 'kind' = 'KIND_BASELINE_TOO_SMALL'"),
            "10");
}

TEST_F(SchedulerPgTest, ABadRegressionKeyIsRefusedAtSubmitNamingItsLine) {
  AddMachine(testing::kAgentId, {});
  v1::SubmitSeriesRequest request;
  request.set_source_name("s.yaml");
  request.set_spec_yaml(Spec("targets: all\nregression:\n  threshold: 5%\n"));
  absl::StatusOr<v1::SubmitSeriesResponse> bad = scheduler_->Submit(request);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "s.yaml:9: field regression.threshold: must be a fraction between 0 and 1 (0.05 means 5%), got '5%'");
  request.set_spec_yaml(Spec("targets: all\nregression:\n  baseline_runs: 2\n"));
  EXPECT_EQ(scheduler_->Submit(request).status().message(),
            "s.yaml:9: field regression.baseline_runs: must be a whole number from 3 to 100, got '2'");
  request.set_spec_yaml(Spec("targets: all\nregression:\n  level: 0.01\n"));
  EXPECT_EQ(scheduler_->Submit(request).status().message(),
            "s.yaml:9: field regression.level: unknown key (expected baseline_runs, threshold)");
}

TEST_F(SchedulerPgTest, TasksBecomeKnownToTheMetricsAndTheFleetSnapshotReadsThem) {
  AddMachine("a", {});
  clock_.Advance(absl::Hours(25));  // a was last seen 25 hours ago
  AddMachine("b", {});
  AddMachine("c", {});
  auto sink = Connect("b");
  Submit(Spec("targets: all\n"));
  ASSERT_EQ(sink->assignments().size(), 1u);
  // Each created task, then b's again as it is given to b's stream.
  EXPECT_THAT(metrics_.calls(), ElementsAre("TaskKnown a chat-7b", "TaskKnown b chat-7b", "TaskKnown c chat-7b",
                                            "TaskKnown b chat-7b"));

  absl::StatusOr<FleetSnapshot> snapshot = store_->ReadFleetSnapshot(clock_.Now() - absl::Hours(24));
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ(snapshot->agents_known, 3);
  EXPECT_THAT(snapshot->recent_agents, ElementsAre("b", "c"));
  EXPECT_EQ(snapshot->tasks_by_state, (std::map<std::string, int64_t>{{"pending", 2},
                                                                      {"running", 1},
                                                                      {"succeeded", 0},
                                                                      {"failed", 0},
                                                                      {"refused", 0},
                                                                      {"lost", 0},
                                                                      {"expired", 0},
                                                                      {"cancelled", 0}}));
  using Open = std::pair<std::string, std::string>;
  EXPECT_THAT(snapshot->open_tasks, ElementsAre(Open("a", "chat-7b"), Open("b", "chat-7b"), Open("c", "chat-7b")));
}

TEST(SchedulerMetricsTest, ATickThatCannotReachTheDatabaseCountsOneError) {
  // Nothing listens on port 1: every statement fails at once.
  std::unique_ptr<FleetStore> store = NewPgFleetStore({"postgresql://postgres@127.0.0.1:1/none?connect_timeout=2"});
  RecordingMetrics metrics;
  SchedulerOptions options;
  options.coordinator_id = "c1";
  options.metrics = &metrics;
  Scheduler scheduler(FleetStores::Of(store.get()), options);
  scheduler.Tick();
  EXPECT_THAT(metrics.calls(), ElementsAre("DatabaseError scheduler_tick"));
  absl::StatusOr<FleetSnapshot> snapshot = store->ReadFleetSnapshot(absl::Now());
  EXPECT_EQ(snapshot.status().code(), absl::StatusCode::kUnavailable) << snapshot.status();
}

TEST_F(SchedulerPgTest, TheNotifyListenerHearsChangesFromAnotherCoordinator) {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> payloads;
  PgNotifyListener listener(db_.url(), kFleetChannel, [&](const std::string& payload) {
    std::lock_guard<std::mutex> lock(mu);
    payloads.push_back(payload);
    cv.notify_all();
  });
  listener.Start();
  {
    // The first callback ("") says the listener is up.
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return !payloads.empty(); }));
  }
  AddMachine("a", {});
  const std::string id = Submit(Spec("targets: all\n"));
  std::unique_lock<std::mutex> lock(mu);
  EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(10),
                          [&] { return std::find(payloads.begin(), payloads.end(), id) != payloads.end(); }));
  lock.unlock();
  listener.Stop();
}

// ---- Attempts are leases (issue 19, case 1) ----

// The case without a network: attempt 1's lease expires while its agent is cut off, the
// task is retried as attempt 2, then attempt 1's late words arrive. None of them counts; the
// agent that still runs attempt 1 is given attempt 2 again; attempt 2's own finish ends the task.
TEST_F(SchedulerPgTest, ALateFinishOfAnAttemptWhoseLeaseExpiredIsIgnoredAndCounted) {
  AddMachine("a", {});
  auto sink = Connect("a");
  const std::string id = Submit(Spec("targets: all\nretry: {max_attempts: 3}\n"));
  const std::string task = Series(id).tasks(0).task_id();
  Update("a", task, [](v1::TaskUpdate* u) {
    u->set_attempt(1);
    u->mutable_accepted()->set_runs_total(3);
  });
  clock_.Advance(absl::Seconds(31));
  scheduler_->Tick();
  ASSERT_EQ(sink->assignments().size(), 2u);
  EXPECT_EQ(sink->assignments()[1].attempt(), 2u);

  // Attempt 1's finish, sent while cut off: ignored, the task stays RUNNING at attempt 2.
  Update("a", task, [](v1::TaskUpdate* u) {
    u->set_attempt(1);
    u->mutable_finished()->set_ok(true);
    u->mutable_finished()->set_runs_done(3);
  });
  v1::SeriesStatus s = Series(id);
  EXPECT_EQ(s.tasks(0).state(), v1::TaskStatus::STATE_RUNNING);
  EXPECT_EQ(s.tasks(0).attempt(), 2u);
  EXPECT_EQ(s.tasks(0).runs_done(), 0u);
  EXPECT_EQ(sink->assignments().size(), 2u);  // a finish says nothing runs: nothing to answer
  // Attempt 1's progress: the agent still runs it, so it is given attempt 2 again (to carry on).
  Update("a", task, [](v1::TaskUpdate* u) {
    u->set_attempt(1);
    u->mutable_progress()->set_runs_done(2);
  });
  ASSERT_EQ(sink->assignments().size(), 3u);
  // More of them (a burst queued while cut off) are answered once per lease.
  Update("a", task, [](v1::TaskUpdate* u) {
    u->set_attempt(1);
    u->mutable_progress()->set_runs_done(3);
  });
  EXPECT_EQ(sink->assignments().size(), 3u);
  EXPECT_EQ(sink->assignments()[2].task_id(), task);
  EXPECT_EQ(sink->assignments()[2].attempt(), 2u);
  EXPECT_EQ(sink->assignments()[2].spec_yaml(), Spec("targets: all\nretry: {max_attempts: 3}\n"));
  EXPECT_EQ(Series(id).tasks(0).runs_done(), 0u);
  EXPECT_TRUE(sink->cancels().empty());
  const std::vector<std::string> calls = metrics_.calls();
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "StaleTaskUpdate"), 3);

  // Attempt 2 (the same work carried on) ends the task, once.
  Update("a", task, [](v1::TaskUpdate* u) {
    u->set_attempt(2);
    u->mutable_finished()->set_ok(true);
    u->mutable_finished()->set_runs_done(3);
    u->mutable_finished()->set_message("3 of 3 runs made, 0 FAILED");
  });
  s = Series(id);
  EXPECT_EQ(s.tasks(0).state(), v1::TaskStatus::STATE_SUCCEEDED);
  EXPECT_EQ(s.tasks(0).attempt(), 2u);
  EXPECT_EQ(s.tasks(0).runs_done(), 3u);
  EXPECT_EQ(s.state(), v1::SeriesStatus::STATE_DONE);
  // A late word of attempt 1 after the end changes nothing either.
  Update("a", task, [](v1::TaskUpdate* u) {
    u->set_attempt(1);
    u->mutable_finished()->set_ok(false);
    u->mutable_finished()->set_message("late");
  });
  EXPECT_EQ(Series(id).tasks(0).state(), v1::TaskStatus::STATE_SUCCEEDED);
  EXPECT_EQ(Series(id).tasks(0).message(), "3 of 3 runs made, 0 FAILED");
}

TEST_F(SchedulerPgTest, AnUpdateWithoutAnAttemptCountsAsTheCurrentAttempts) {
  AddMachine("a", {});
  auto sink = Connect("a");
  const std::string id = Submit(Spec("targets: all\nretry: {max_attempts: 2}\n"));
  const std::string task = Series(id).tasks(0).task_id();
  clock_.Advance(absl::Seconds(31));
  scheduler_->Tick();
  ASSERT_EQ(Series(id).tasks(0).attempt(), 2u);
  Update("a", task, [](v1::TaskUpdate* u) { u->mutable_finished()->set_ok(true); });  // attempt 0: an older agent
  EXPECT_EQ(Series(id).tasks(0).state(), v1::TaskStatus::STATE_SUCCEEDED);
  const std::vector<std::string> calls = metrics_.calls();
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "StaleTaskUpdate"), 0);
}

// No retry left: the task ends LOST; an agent that turns out to still run it is told to stop.
TEST_F(SchedulerPgTest, TheAgentOfALostTaskIsToldToStopWhenItIsHeardFrom) {
  AddMachine("a", {});
  auto sink = Connect("a");
  const std::string id = Submit(Spec("targets: all\n"));
  const std::string task = Series(id).tasks(0).task_id();
  clock_.Advance(absl::Seconds(31));
  scheduler_->Tick();
  ASSERT_EQ(Series(id).tasks(0).state(), v1::TaskStatus::STATE_LOST);
  Update("a", task, [](v1::TaskUpdate* u) {
    u->set_attempt(1);
    u->mutable_progress()->set_runs_done(1);
  });
  ASSERT_EQ(sink->cancels().size(), 1u);
  EXPECT_EQ(sink->cancels()[0].task_id(), task);
  EXPECT_EQ(sink->cancels()[0].attempt(), 1u);
  EXPECT_EQ(sink->cancels()[0].reason(), "attempt 1 lost its lease; the task is LOST at attempt 1");
  EXPECT_EQ(Series(id).tasks(0).state(), v1::TaskStatus::STATE_LOST);
  EXPECT_EQ(Series(id).tasks(0).runs_done(), 0u);
}

// ---- The spec size limit (issue 19, case 2) ----

TEST_F(SchedulerPgTest, ASpecOverTheLimitIsRefusedAtSubmitWithItsSizeAndNothingIsStored) {
  AddMachine("a", {});
  std::string spec = Spec("targets: all\n");
  spec += "# " + std::string(kMaxSpecBytes + 1 - spec.size() - 3, 'x') + "\n";
  ASSERT_EQ(spec.size(), kMaxSpecBytes + 1);
  const std::string why =
      "big.yaml: the spec is 1048577 bytes, over the limit of 1048576 bytes (1 MiB) a task carries to its agents; "
      "put large inputs such as prompt lists in a file the agents' allow-list names (allow.workflow_dirs, e.g. the "
      "`prompts` file of the openai and workflow backends) and name that file in the spec";
  v1::SubmitSeriesRequest request;
  request.set_spec_yaml(spec);
  request.set_source_name("big.yaml");
  EXPECT_EQ(scheduler_->Submit(request).status(), absl::InvalidArgumentError(why));
  request.set_dry_run(true);
  EXPECT_EQ(scheduler_->Submit(request).status(), absl::InvalidArgumentError(why));
  v1::AddScheduleRequest schedule;
  schedule.set_cron("0 3 * * *");
  schedule.set_spec_yaml(spec);
  schedule.set_source_name("big.yaml");
  EXPECT_EQ(scheduler_->AddSchedule(schedule).status(), absl::InvalidArgumentError(why));
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM series"), "0");
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM tasks"), "0");
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM schedules"), "0");
  // At the limit it is taken.
  spec.erase(spec.size() - 2, 1);
  ASSERT_EQ(spec.size(), kMaxSpecBytes);
  request.set_spec_yaml(spec);
  request.set_dry_run(false);
  EXPECT_TRUE(scheduler_->Submit(request).ok());
}

// A task stored by a coordinator before the limit: sent, it would cut its agent off
// (RESOURCE_EXHAUSTED on every reconnect). It ends FAILED with the reason and is never sent.
TEST_F(SchedulerPgTest, AStoredTaskWhoseSpecIsOverTheLimitEndsFailedAndIsNotSent) {
  AddMachine("a", {});
  const std::string id = Submit(Spec("targets: all\n"));  // the agent is not connected yet
  db_.QueryValue(absl::StrCat("UPDATE series SET spec_yaml = spec_yaml || repeat('#', ", kMaxSpecBytes,
                              ") WHERE id = '", id, "'"));
  auto sink = Connect("a");
  EXPECT_TRUE(sink->assignments().empty());
  const v1::SeriesStatus s = Series(id);
  EXPECT_EQ(s.tasks(0).state(), v1::TaskStatus::STATE_FAILED);
  EXPECT_THAT(s.tasks(0).message(),
              ::testing::StartsWith(absl::StrCat("not sent to the agent: series ", id, ": the spec is ")));
  EXPECT_THAT(s.tasks(0).message(), HasSubstr(" bytes, over the limit of 1048576 bytes (1 MiB)"));
  EXPECT_EQ(s.state(), v1::SeriesStatus::STATE_DONE);
}

}  // namespace
}  // namespace benchfleet::coordinator
