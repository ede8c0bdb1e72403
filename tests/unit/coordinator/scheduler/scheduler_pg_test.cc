// The Scheduler on PgFleetStore against a real PostgreSQL (a fresh database per test), driven by a
// SimulatedClock and explicit Tick() calls (no sleeps) and a fake TaskSink per agent: only what
// needs the database itself. Two coordinators claiming at once (row locks), an invalidation shown
// by ListRuns' SQL, a scheduled series' regressions end to end on stored rows, an unreachable
// database, and NOTIFY between coordinators. The scheduler's logic runs on the in-memory store in
// scheduler_test.cc; the store's semantics on both in ../fleet_store_contract_test.cc.
#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/conditions_fingerprint.h"
#include "common/hashing.h"
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
#include "tests/unit/coordinator/scheduler/fake_task_sink.h"
#include "tests/unit/coordinator/scheduler/scheduler_calls.h"
#include "tests/unit/coordinator/scheduler/recording_metrics.h"
#include "tests/unit/coordinator/test_records.h"

namespace benchfleet::coordinator {
namespace {

using ::testing::ElementsAre;

std::string Spec(const std::string& fleet_keys) { return testing::SchedulerTestSpec(fleet_keys); }

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
    PreparedRuns prepared;
    for (const auto& r : records) ASSERT_TRUE(runs_->PrepareRun(r, &prepared).ok());
    std::vector<const PreparedRuns*> groups = {&prepared};
    ASSERT_TRUE(runs_->StoreRuns(groups).ok());
  }

  testing::PgTestDb db_;
  SimulatedClock clock_;  // 2026-01-01T00:00:00Z
  testing::RecordingMetrics metrics_;
  std::unique_ptr<RunStore> runs_;
  std::unique_ptr<FleetStore> store_;
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(SchedulerPgTest, TwoCoordinatorsTickingTogetherTakeEachTaskOnce) {
  std::unique_ptr<Scheduler> other = NewScheduler("c2");
  std::vector<std::shared_ptr<testing::FakeTaskSink>> here, there;
  for (int i = 0; i < 20; ++i) {
    const std::string id = absl::StrCat("agent-", i);
    AddMachine(id, {});
  }
  Submit(Spec("targets: all\n"));  // nobody connected yet: 20 PENDING tasks
  for (int i = 0; i < 20; ++i) {
    // As if each agent's stream were open to both (a reconnect racing the old stream's end).
    here.push_back(std::make_shared<testing::FakeTaskSink>());
    there.push_back(std::make_shared<testing::FakeTaskSink>());
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
    for (testing::FakeTaskSink* sink : {here[i].get(), there[i].get()}) {
      for (const auto& a : sink->assignments()) {
        ids.insert(a.task_id());
        EXPECT_EQ(a.attempt(), 1u) << i;
      }
    }
    EXPECT_EQ(ids.size(), 1u) << i;
  }
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM tasks WHERE state = 'RUNNING'"), "20");
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

TEST(SchedulerMetricsTest, ATickThatCannotReachTheDatabaseCountsOneError) {
  // Nothing listens on port 1: every statement fails at once.
  std::unique_ptr<FleetStore> store = NewPgFleetStore({"postgresql://postgres@127.0.0.1:1/none?connect_timeout=2"});
  testing::RecordingMetrics metrics;
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

}  // namespace
}  // namespace benchfleet::coordinator
