// The Scheduler's logic on MemoryFleetStore (tests/support/memory_fleet_store.h): no PostgreSQL
// and no sleeping. A SimulatedClock and explicit Tick() calls drive leases, retries, deadlines and
// cron slots; a FakeTaskSink per agent stands for its Connect stream. Fan-out by labels, offline
// and reconnecting agents, leases (LOST, retries), deadlines, cancel (here and on another
// coordinator), refused and finished tasks, schedules on two coordinators, malformed and
// oversized specs stored nowhere, regression verdicts, stale attempts, and what the scheduler
// tells the metrics. The store's SQL has its own tests (fleet_store_contract_test.cc runs the same
// semantics against PostgreSQL; scheduler_pg_test.cc keeps the cases that need the database).
#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "common/conditions_fingerprint.h"
#include "common/hashing.h"
#include "common/spec/spec_limits.h"
#include "coordinator/scheduler/regression.h"
#include "coordinator/scheduler/scheduler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/memory_fleet_store.h"
#include "tests/unit/coordinator/scheduler/fake_task_sink.h"
#include "tests/unit/coordinator/scheduler/scheduler_calls.h"
#include "tests/unit/coordinator/scheduler/recording_metrics.h"
#include "tests/unit/coordinator/test_records.h"

namespace benchfleet::coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const absl::Time kT0 = absl::FromUnixSeconds(1767225600);  // 2026-01-01T00:00:00Z, the clock's start

// Returns the value of `s`, or T() after failing the test when it is an error (no crash).
template <typename T>
T Value(absl::StatusOr<T> s) {
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : T();
}

std::string Spec(const std::string& fleet_keys) { return testing::SchedulerTestSpec(fleet_keys); }

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override { scheduler_ = NewScheduler("c1"); }

  std::unique_ptr<Scheduler> NewScheduler(const std::string& name) {
    SchedulerOptions options;
    options.clock = &clock_;
    options.coordinator_id = name;
    options.metrics = &metrics_;
    return std::make_unique<Scheduler>(FleetStores::Of(&store_), options);
  }

  void AddMachine(const std::string& agent_id, const std::map<std::string, std::string>& labels) {
    MachineUpdate update;
    update.agent_id = agent_id;
    update.agent_version = "0.1.0";
    update.conditions = testing::MakeConditions(agent_id + ".local", labels);
    update.conditions.set_fingerprint(ConditionsFingerprint(update.conditions));
    update.seen = clock_.Now();
    store_.UpsertMachine(update);
  }

  std::shared_ptr<testing::FakeTaskSink> Connect(const std::string& agent_id) {
    return testing::ConnectAgent(*scheduler_, agent_id);
  }
  std::string Submit(const std::string& spec) { return testing::SubmitSpec(*scheduler_, spec); }
  v1::SeriesStatus Series(const std::string& id) { return testing::SeriesOf(*scheduler_, id); }
  void Update(const std::string& agent, const std::string& task_id,
              const std::function<void(v1::TaskUpdate*)>& fill) {
    testing::SendTaskUpdate(*scheduler_, agent, task_id, fill);
  }

  void StoreRecords(const std::vector<v1::RunRecord>& records) {
    for (const auto& r : records) ASSERT_TRUE(store_.AddRun(r).ok());
  }

  // Every series stored, newest first.
  std::vector<SeriesRow> AllSeries() { return Value(store_.ListSeries(/*active_only=*/false)); }
  // Every task of every series.
  std::vector<TaskRow> AllTasks() {
    std::vector<TaskRow> out;
    for (const SeriesRow& s : AllSeries()) {
      const std::vector<TaskRow> tasks = Value(store_.ListTasks(s.id));
      out.insert(out.end(), tasks.begin(), tasks.end());
    }
    return out;
  }
  // The kinds of every verdict stored for the task, by their runs' start: "REGRESSION,...".
  std::string Kinds(const std::string& task_id) {
    std::vector<std::string> kinds;
    for (const v1::RegressionVerdict& v : store_.VerdictsOfTask(task_id)) kinds.push_back(KindName(v.kind()));
    return absl::StrJoin(kinds, ",");
  }

  SimulatedClock clock_;  // 2026-01-01T00:00:00Z
  testing::RecordingMetrics metrics_;
  testing::MemoryFleetStore store_;
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(SchedulerTest, FansOutToTheFiftyAgentsWhoseLabelsMatchOnly) {
  std::map<std::string, std::shared_ptr<testing::FakeTaskSink>> sinks;
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
  const std::vector<TaskRow> tasks = AllTasks();
  EXPECT_EQ(tasks.size(), 10u);
  EXPECT_EQ(std::count_if(tasks.begin(), tasks.end(),
                          [](const TaskRow& t) {
                            return t.status.state() == v1::TaskStatus::STATE_RUNNING && t.coordinator_id == "c1";
                          }),
            10);
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
  EXPECT_EQ(AllSeries().size(), 1u);
}

TEST_F(SchedulerTest, EveryExampleSpecIsAcceptedOnADryRun) {
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
  EXPECT_EQ(AllSeries().size(), 0u);
}

TEST_F(SchedulerTest, AnOfflineAgentGetsItsTaskWhenItConnects) {
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

TEST_F(SchedulerTest, AReconnectingAgentGetsItsRunningTaskAgainOnItsNewStream) {
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

TEST_F(SchedulerTest, AnExpiredLeaseEndsTheTaskLost) {
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

TEST_F(SchedulerTest, AnExpiredLeaseWithARetryLeftIsSentAgainAsAttemptTwo) {
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

TEST_F(SchedulerTest, APendingTaskPastTheDeadlineExpires) {
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

TEST_F(SchedulerTest, CancelEndsEveryOpenTaskAndTellsConnectedAgents) {
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

TEST_F(SchedulerTest, ACancelReachesAnAgentConnectedToTheOtherCoordinator) {
  AddMachine("a", {});
  std::unique_ptr<Scheduler> other = NewScheduler("c2");
  auto sink = std::make_shared<testing::FakeTaskSink>();
  other->AgentConnected("a", sink);
  const std::string id = Submit(Spec("targets: all\n"));  // on c1, which does not hold a's stream
  EXPECT_EQ(sink->assignments().size(), 0u);
  other->Tick();
  ASSERT_EQ(sink->assignments().size(), 1u);
  EXPECT_EQ(AllTasks()[0].coordinator_id, "c2");
  ASSERT_TRUE(scheduler_->Cancel(id).ok());
  EXPECT_EQ(sink->cancels().size(), 0u);
  other->Tick();
  ASSERT_EQ(sink->cancels().size(), 1u);
  EXPECT_EQ(sink->cancels()[0].task_id(), sink->assignments()[0].task_id());
  other->Tick();
  EXPECT_EQ(sink->cancels().size(), 1u);
}

TEST_F(SchedulerTest, ARefusalIsRecordedWithTheAgentsReason) {
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

TEST_F(SchedulerTest, ProgressThenFinishedSucceedsAndOtherAgentsUpdatesAreIgnored) {
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

TEST_F(SchedulerTest, WaitForChangeReturnsAtOnceAfterAChange) {
  AddMachine("a", {});
  const uint64_t v0 = scheduler_->WaitForChange(0, absl::ZeroDuration());
  Submit(Spec("targets: all\n"));
  EXPECT_GT(scheduler_->WaitForChange(v0, absl::Seconds(5)), v0);
}

TEST_F(SchedulerTest, TwoCoordinatorsFireEachSlotOnceAndMissedSlotsOnce) {
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
  EXPECT_EQ(AllSeries().size(), 0u);

  clock_.Advance(absl::Hours(3));
  scheduler_->Tick();
  other->Tick();
  scheduler_->Tick();
  EXPECT_EQ(AllSeries().size(), 1u);
  EXPECT_EQ(AllSeries()[0].schedule_id, schedule->schedule_id());
  EXPECT_EQ(AllSeries()[0].slot_time, kT0 + absl::Hours(3));

  // Every coordinator was down over three slots: only the latest fires, once.
  clock_.Advance(absl::Hours(24 * 3) + absl::Minutes(30));
  other->Tick();
  scheduler_->Tick();
  other->Tick();
  EXPECT_EQ(AllSeries().size(), 2u);
  EXPECT_EQ(AllSeries()[0].slot_time, kT0 + absl::Hours(3 * 24 + 3));  // newest first
  absl::StatusOr<std::vector<v1::Schedule>> listed = other->ListSchedules();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].last_fire_time().seconds(), 1767225600 + 3 * 86400 + 3 * 3600);
  EXPECT_EQ((*listed)[0].next_fire_time().seconds(), 1767225600 + 4 * 86400 + 3 * 3600);
  EXPECT_EQ((*listed)[0].last_series_id(),
            AllSeries()[0].id);

  ASSERT_TRUE(other->RemoveSchedule(schedule->schedule_id()).ok());
  EXPECT_EQ(scheduler_->RemoveSchedule(schedule->schedule_id()).code(), absl::StatusCode::kNotFound);
  clock_.Advance(absl::Hours(24));
  scheduler_->Tick();
  EXPECT_EQ(AllSeries().size(), 2u);

  add.set_cron("0 3 * * *");
  add.set_spec_yaml(Spec("targets: everything\n"));
  EXPECT_EQ(scheduler_->AddSchedule(add).status(),
            absl::InvalidArgumentError(
                "s.yaml:7: field targets: must be `all` or a map with agents and/or labels (got 'everything')"));
  add.set_cron("0 3 * *");
  EXPECT_EQ(scheduler_->AddSchedule(add).status().message(),
            "cron '0 3 * *': expected 5 fields (minute hour day-of-month month day-of-week, UTC), got 4");
}

TEST_F(SchedulerTest, AMalformedSpecIsRejectedNamingFieldAndLineAndNothingIsStored) {
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
  EXPECT_EQ(AllSeries().size(), 0u);
  EXPECT_EQ(AllTasks().size(), 0u);
}

TEST_F(SchedulerTest, TheRunsOfASeriesNoScheduleFiredAreCheckedAgainstTheirBaseline) {
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
  EXPECT_EQ(Kinds(task_id), "SAMPLE_TOO_SMALL,SAMPLE_TOO_SMALL,REGRESSION");
  // The regression annotates its sample's three runs.
  EXPECT_EQ(s.tasks(0).flag_counts().at("CACHE_HIT"), 3u);
  EXPECT_EQ(s.tasks(0).flag_counts().at("REGRESSION"), 3u);
  for (const std::string& id : ids) EXPECT_EQ(store_.AnnotationsOf(id).count("REGRESSION"), 1u);
  EXPECT_EQ(store_.AnnotationsOf(ids[2]).at("REGRESSION"),
            "REGRESSION: p = 0.0357 < 0.05 (Mann-Whitney U, two-sided, exact), 3 warm calls of this series vs 5 "
            "earlier runs: output tokens/s median 40 vs 51 tokens/s (21.6% worse, threshold 10%)");
  EXPECT_THAT(metrics_.calls(),
              ElementsAre("TaskKnown agent-1 chat-7b", "RegressionChecked agent-1 chat-7b sample_too_small",
                          "RegressionChecked agent-1 chat-7b sample_too_small",
                          "RegressionChecked agent-1 chat-7b regression"));
}

TEST_F(SchedulerTest, ABaselineOfTwoRunsIsTooSmallForAVerdictAndSaysSo) {
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
  const std::vector<v1::RegressionVerdict> verdicts = store_.VerdictsOfTask(task_id);
  EXPECT_EQ(verdicts.size(), 4u);
  for (const v1::RegressionVerdict& stored : verdicts) EXPECT_FALSE(stored.regression());
  for (const v1::RunRecord& run : runs) EXPECT_TRUE(store_.AnnotationsOf(run.run_id()).empty());
}

TEST_F(SchedulerTest, ABadRegressionKeyIsRefusedAtSubmitNamingItsLine) {
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

TEST_F(SchedulerTest, TasksBecomeKnownToTheMetricsAndTheFleetSnapshotReadsThem) {
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

  absl::StatusOr<FleetSnapshot> snapshot = store_.ReadFleetSnapshot(clock_.Now() - absl::Hours(24));
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

// ---- Attempts are leases (issue 19, case 1) ----

// The case without a network: attempt 1's lease expires while its agent is cut off, the
// task is retried as attempt 2, then attempt 1's late words arrive. None of them counts; the
// agent that still runs attempt 1 is given attempt 2 again; attempt 2's own finish ends the task.
TEST_F(SchedulerTest, ALateFinishOfAnAttemptWhoseLeaseExpiredIsIgnoredAndCounted) {
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

TEST_F(SchedulerTest, AnUpdateWithoutAnAttemptCountsAsTheCurrentAttempts) {
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
TEST_F(SchedulerTest, TheAgentOfALostTaskIsToldToStopWhenItIsHeardFrom) {
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

TEST_F(SchedulerTest, ASpecOverTheLimitIsRefusedAtSubmitWithItsSizeAndNothingIsStored) {
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
  EXPECT_EQ(AllSeries().size(), 0u);
  EXPECT_EQ(AllTasks().size(), 0u);
  EXPECT_EQ(Value(store_.ListSchedules()).size(), 0u);
  // At the limit it is taken.
  spec.erase(spec.size() - 2, 1);
  ASSERT_EQ(spec.size(), kMaxSpecBytes);
  request.set_spec_yaml(spec);
  request.set_dry_run(false);
  EXPECT_TRUE(scheduler_->Submit(request).ok());
}

// A task stored by a coordinator before the limit: sent, it would cut its agent off
// (RESOURCE_EXHAUSTED on every reconnect). It ends FAILED with the reason and is never sent.
TEST_F(SchedulerTest, AStoredTaskWhoseSpecIsOverTheLimitEndsFailedAndIsNotSent) {
  AddMachine("a", {});
  const std::string id = Submit(Spec("targets: all\n"));  // the agent is not connected yet
  ASSERT_TRUE(store_.SetSeriesSpec(id, Spec("targets: all\n") + std::string(kMaxSpecBytes, '#')).ok());
  auto sink = Connect("a");
  EXPECT_TRUE(sink->assignments().empty());
  const v1::SeriesStatus s = Series(id);
  EXPECT_EQ(s.tasks(0).state(), v1::TaskStatus::STATE_FAILED);
  EXPECT_THAT(s.tasks(0).message(),
              ::testing::StartsWith(absl::StrCat("not sent to the agent: series ", id, ": the spec is ")));
  EXPECT_THAT(s.tasks(0).message(), HasSubstr(" bytes, over the limit of 1048576 bytes (1 MiB)"));
  EXPECT_EQ(s.state(), v1::SeriesStatus::STATE_DONE);
}

// ---- Added with the in-memory store ----

// retry.max_attempts is the number of sends: every expired lease but the last sends the task again
// as the next attempt; the last ends it LOST. Heartbeats keep a lease alive in between.
TEST_F(SchedulerTest, ALeaseThatKeepsExpiringIsRetriedUpToMaxAttemptsThenLost) {
  AddMachine("a", {});
  auto sink = Connect("a");
  const std::string id = Submit(Spec("targets: all\nretry: {max_attempts: 3}\n"));
  for (uint32_t attempt = 1; attempt <= 3; ++attempt) {
    ASSERT_EQ(sink->assignments().size(), attempt);
    EXPECT_EQ(sink->assignments().back().attempt(), attempt);
    EXPECT_EQ(Series(id).tasks(0).state(), v1::TaskStatus::STATE_RUNNING);
    clock_.Advance(absl::Seconds(20));
    scheduler_->Heartbeat("a");  // lease: 30 s from now
    clock_.Advance(absl::Seconds(29));
    scheduler_->Tick();
    EXPECT_EQ(Series(id).tasks(0).attempt(), attempt) << "the heartbeat kept attempt " << attempt;
    clock_.Advance(absl::Seconds(1));
    scheduler_->Tick();
  }
  const v1::SeriesStatus s = Series(id);
  EXPECT_EQ(s.tasks(0).state(), v1::TaskStatus::STATE_LOST);
  EXPECT_EQ(s.tasks(0).attempt(), 3u);
  EXPECT_EQ(s.tasks(0).message(), "lease expired at 2026-01-01T00:02:30Z: the agent stopped sending heartbeats");
  EXPECT_EQ(s.state(), v1::SeriesStatus::STATE_DONE);
  EXPECT_EQ(sink->assignments().size(), 3u);
}

// The stream went away between the claim and the send: the task is PENDING again and goes to the
// agent's next stream, as attempt 1 still.
TEST_F(SchedulerTest, ATaskWhoseSendFailsWaitsPendingForTheAgentsNextStream) {
  AddMachine("a", {});
  auto dead = std::make_shared<testing::FakeTaskSink>();
  dead->Close();
  scheduler_->AgentConnected("a", dead);
  const std::string id = Submit(Spec("targets: all\n"));
  v1::SeriesStatus s = Series(id);
  EXPECT_EQ(s.tasks(0).state(), v1::TaskStatus::STATE_PENDING);
  EXPECT_EQ(s.tasks(0).attempt(), 1u);
  scheduler_->AgentDisconnected("a", dead.get());
  auto sink = Connect("a");
  ASSERT_EQ(sink->assignments().size(), 1u);
  EXPECT_EQ(sink->assignments()[0].attempt(), 1u);
  EXPECT_EQ(Series(id).tasks(0).state(), v1::TaskStatus::STATE_RUNNING);
}

// Every step of a Tick fails when the store cannot be reached; the tick counts one error, and the
// next one, the store back, does the work.
TEST_F(SchedulerTest, ATickThatCannotReachTheStoreCountsOneErrorAndTheNextCatchesUp) {
  AddMachine("a", {});
  auto sink = Connect("a");
  const std::string id = Submit(Spec("targets: all\n"));
  clock_.Advance(absl::Seconds(31));
  store_.SetDown(true);
  scheduler_->Tick();
  const std::vector<std::string> calls = metrics_.calls();
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "DatabaseError scheduler_tick"), 1);
  store_.SetDown(false);
  EXPECT_EQ(Series(id).tasks(0).state(), v1::TaskStatus::STATE_RUNNING);
  scheduler_->Tick();
  EXPECT_EQ(Series(id).tasks(0).state(), v1::TaskStatus::STATE_LOST);
  const std::vector<std::string> after = metrics_.calls();
  EXPECT_EQ(std::count(after.begin(), after.end(), "DatabaseError scheduler_tick"), 1);
}

}  // namespace
}  // namespace benchfleet::coordinator
