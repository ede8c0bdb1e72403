// The FleetStore contract, run against both implementations: MemoryFleetStore (always) and
// PgFleetStore on a fresh PostgreSQL database per test (when BENCHFLEET_TEST_DATABASE_URL is set;
// skipped otherwise). Each case states one documented behaviour of the concern interfaces
// (coordinator/store/*_store.h): conditional updates, claims taken once, cancellations handed to
// TakeCancels once, series ended when their tasks have, leases and deadlines, slots claimed once,
// the baseline's and the sample's filters and order, verdicts and their annotations, the fleet
// snapshot. So the fake the scheduler's tests run on cannot drift from the SQL.
#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/conditions_fingerprint.h"
#include "common/hashing.h"
#include "common/proto_time.h"
#include "coordinator/store/fleet_store.h"
#include "coordinator/store/migrator.h"
#include "coordinator/store/pg_fleet_store.h"
#include "coordinator/store/pg_run_store.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/support/memory_fleet_store.h"
#include "tests/support/pg_test_db.h"
#include "tests/unit/coordinator/test_records.h"

namespace benchfleet::coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kT0 = absl::FromUnixSeconds(1767225600);  // 2026-01-01T00:00:00Z

// Returns the value of `s`, or T() after failing the test when it is an error (no crash).
template <typename T>
T Value(absl::StatusOr<T> s) {
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : T();
}

// ---- The two implementations, each with the runs store's side of its database ----

class MemoryBackend {
 public:
  static constexpr char kName[] = "Memory";
  bool available() const { return true; }
  FleetStore* store() { return &store_; }
  void UpsertMachine(const MachineUpdate& update) { store_.UpsertMachine(update); }
  void StoreRuns(const std::vector<v1::RunRecord>& records) {
    for (const v1::RunRecord& r : records) ASSERT_TRUE(store_.AddRun(r).ok());
  }
  // "CODE=reason,..." by code.
  std::string Annotations(const std::string& run_id) {
    std::vector<std::string> out;
    for (const auto& [code, reason] : store_.AnnotationsOf(run_id)) out.push_back(absl::StrCat(code, "=", reason));
    return absl::StrJoin(out, ",");
  }

 private:
  testing::MemoryFleetStore store_;
};

class PgBackend {
 public:
  static constexpr char kName[] = "Pg";
  PgBackend() {
    if (!db_.available()) return;
    EXPECT_TRUE(Migrate(db_.url()).ok());
    runs_ = NewPgRunStore({db_.url()});
    store_ = NewPgFleetStore({db_.url()});
  }
  bool available() const { return db_.available(); }
  FleetStore* store() { return store_.get(); }
  void UpsertMachine(const MachineUpdate& update) { ASSERT_TRUE(runs_->UpsertMachine(update).ok()); }
  void StoreRuns(const std::vector<v1::RunRecord>& records) {
    PreparedRuns prepared;
    for (const auto& r : records) ASSERT_TRUE(runs_->PrepareRun(r, &prepared).ok());
    std::vector<const PreparedRuns*> groups = {&prepared};
    ASSERT_TRUE(runs_->StoreRuns(groups).ok());
  }
  std::string Annotations(const std::string& run_id) {
    return db_.QueryValue(absl::StrCat("SELECT COALESCE(string_agg(code || '=' || reason, ',' ORDER BY code), '') "
                                       "FROM run_annotations WHERE run_id = '",
                                       run_id, "'"));
  }

 private:
  testing::PgTestDb db_;
  std::unique_ptr<RunStore> runs_;
  std::unique_ptr<FleetStore> store_;
};

template <typename Backend>
class FleetStoreContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backend_.available()) GTEST_SKIP() << "BENCHFLEET_TEST_DATABASE_URL is not set";
  }

  FleetStore& store() { return *backend_.store(); }

  void AddMachine(const std::string& agent_id, const std::map<std::string, std::string>& labels, absl::Time seen) {
    MachineUpdate update;
    update.agent_id = agent_id;
    update.agent_version = "0.1.0";
    update.conditions = testing::MakeConditions(agent_id + ".local", labels);
    update.conditions.set_fingerprint(ConditionsFingerprint(update.conditions));
    update.seen = seen;
    backend_.UpsertMachine(update);
  }

  SeriesRow Row(const std::string& name, std::optional<absl::Time> deadline = std::nullopt, int retry_max = 1) {
    SeriesRow row;
    row.name = name;
    row.task = "chat-7b";
    row.backend = "llama-server";
    row.spec_yaml = absl::StrCat("series: ", name, "\n");
    row.source_name = "s.yaml";
    row.created = kT0;
    row.deadline = deadline;
    row.retry_max = retry_max;
    return row;
  }

  // Creates a series and returns its tasks by agent.
  std::map<std::string, TaskRow> Create(const SeriesRow& row, const std::vector<std::string>& agents,
                                        std::string* series_id = nullptr) {
    absl::StatusOr<std::string> id = store().CreateSeries(row, agents);
    EXPECT_TRUE(id.ok()) << id.status();
    if (!id.ok()) return {};
    if (series_id != nullptr) *series_id = *id;
    return Tasks(*id);
  }

  std::map<std::string, TaskRow> Tasks(const std::string& series_id) {
    absl::StatusOr<std::vector<TaskRow>> tasks = store().ListTasks(series_id);
    EXPECT_TRUE(tasks.ok()) << tasks.status();
    std::map<std::string, TaskRow> out;
    if (tasks.ok()) {
      for (const TaskRow& t : *tasks) out[t.status.agent_id()] = t;
    }
    return out;
  }

  TaskRow Task(const std::string& task_id) {
    absl::StatusOr<TaskRow> t = store().GetTask(task_id);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *t : TaskRow();
  }

  int64_t Counter() {
    absl::StatusOr<int64_t> c = store().ChangeCounter();
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *c : -1;
  }

  static std::vector<std::string> Ids(const std::vector<BaselineRun>& runs) {
    std::vector<std::string> ids;
    for (const BaselineRun& r : runs) ids.push_back(r.run_id);
    return ids;
  }

  Backend backend_;
};

class BackendNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return T::kName;
  }
};

using Backends = ::testing::Types<MemoryBackend, PgBackend>;
TYPED_TEST_SUITE(FleetStoreContractTest, Backends, BackendNames);

// ---- MachineStore ----

TYPED_TEST(FleetStoreContractTest, MachinesAreListedByAgentWithTheirLatestConditions) {
  this->AddMachine("b", {{"class", "c5"}}, kT0);
  this->AddMachine("a", {{"class", "a100"}}, kT0 + absl::Minutes(1));
  this->AddMachine("b", {{"class", "a100"}}, kT0 - absl::Minutes(5));  // newer conditions, an older sighting
  v1::RunRecord run = testing::MakeRecord(1);
  run.set_agent_id("a");
  this->backend_.StoreRuns({run});

  absl::StatusOr<std::vector<v1::Machine>> machines = this->store().ListMachines();
  ASSERT_TRUE(machines.ok()) << machines.status();
  ASSERT_EQ(machines->size(), 2u);
  const v1::Machine& a = (*machines)[0];
  const v1::Machine& b = (*machines)[1];
  EXPECT_EQ(a.agent_id(), "a");
  EXPECT_EQ(a.run_count(), 1u);
  EXPECT_EQ(ToTime(a.last_seen_time()), kT0 + absl::Minutes(1));
  EXPECT_EQ(b.agent_id(), "b");
  EXPECT_EQ(b.run_count(), 0u);
  EXPECT_EQ(b.conditions().labels().at("class"), "a100");
  EXPECT_EQ(ToTime(b.first_seen_time()), kT0);
  EXPECT_EQ(ToTime(b.last_seen_time()), kT0);

  // Both of b's conditions stay known (a verdict names a change from the older); unknown ones are
  // left out; sorted by fingerprint.
  const std::string fp_a = a.conditions().fingerprint();
  const std::string fp_b = b.conditions().fingerprint();
  v1::MachineConditions old_b = testing::MakeConditions("b.local", {{"class", "c5"}});
  old_b.set_fingerprint(ConditionsFingerprint(old_b));
  absl::StatusOr<std::vector<v1::MachineConditions>> conditions =
      this->store().GetConditions({fp_b, "unknown", old_b.fingerprint(), fp_a});
  ASSERT_TRUE(conditions.ok()) << conditions.status();
  std::vector<std::string> expected = {fp_a, fp_b, old_b.fingerprint()};
  std::sort(expected.begin(), expected.end());
  std::vector<std::string> got;
  for (const auto& c : *conditions) got.push_back(c.fingerprint());
  EXPECT_EQ(got, expected);
  for (const auto& c : *conditions) {
    if (c.fingerprint() == old_b.fingerprint()) {
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(c, old_b)) << c.DebugString();
    }
  }
}

// ---- TaskStore ----

TYPED_TEST(FleetStoreContractTest, ASeriesIsStoredWithOnePendingTaskPerAgentSortedByAgent) {
  std::string id;
  std::map<std::string, TaskRow> tasks =
      this->Create(this->Row("nightly", kT0 + absl::Hours(1), 3), {"b", "a"}, &id);
  ASSERT_TRUE(IsUuid(id)) << id;
  absl::StatusOr<SeriesRow> s = this->store().GetSeries(id);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->id, id);
  EXPECT_EQ(s->name, "nightly");
  EXPECT_EQ(s->task, "chat-7b");
  EXPECT_EQ(s->backend, "llama-server");
  EXPECT_EQ(s->spec_yaml, "series: nightly\n");
  EXPECT_EQ(s->source_name, "s.yaml");
  EXPECT_EQ(s->created, kT0);
  EXPECT_EQ(s->deadline, kT0 + absl::Hours(1));
  EXPECT_EQ(s->retry_max, 3);
  EXPECT_EQ(s->state, v1::SeriesStatus::STATE_ACTIVE);
  EXPECT_EQ(s->schedule_id, "");
  EXPECT_EQ(s->slot_time, std::nullopt);

  absl::StatusOr<std::vector<TaskRow>> listed = this->store().ListTasks(id);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].status.agent_id(), "a");
  EXPECT_EQ((*listed)[1].status.agent_id(), "b");
  for (const TaskRow& t : *listed) {
    EXPECT_TRUE(IsUuid(t.status.task_id()));
    EXPECT_EQ(t.status.series_id(), id);
    EXPECT_EQ(t.status.state(), v1::TaskStatus::STATE_PENDING);
    EXPECT_EQ(t.status.attempt(), 1u);
    EXPECT_EQ(ToTime(t.status.update_time()), kT0);
    EXPECT_EQ(t.lease_expiry, std::nullopt);
    EXPECT_EQ(t.coordinator_id, "");
    EXPECT_TRUE(t.status.flag_counts().empty());
  }
  EXPECT_EQ(this->Task(tasks["a"].status.task_id()).status.agent_id(), "a");

  EXPECT_EQ(this->store().GetSeries("nope").status(), absl::NotFoundError("no series nope"));
  const std::string unknown = NewUuid();
  EXPECT_EQ(this->store().GetSeries(unknown).status(), absl::NotFoundError("no series " + unknown));
  EXPECT_EQ(this->store().GetTask("nope").status(), absl::NotFoundError("no task nope"));
  EXPECT_EQ(this->store().GetTask(unknown).status(), absl::NotFoundError("no task " + unknown));
  absl::StatusOr<std::vector<TaskRow>> none = this->store().ListTasks(unknown);
  ASSERT_TRUE(none.ok());
  EXPECT_THAT(*none, IsEmpty());
  EXPECT_THAT(Value(this->store().ListTasks("nope")), IsEmpty());
}

TYPED_TEST(FleetStoreContractTest, SeriesAreListedNewestFirstAndActiveOnlyLeavesEndedOnesOut) {
  std::string first, second, third;
  SeriesRow row = this->Row("one");
  this->Create(row, {"a"}, &first);
  row.created = kT0 + absl::Minutes(1);
  this->Create(row, {"a"}, &second);
  row.created = kT0 + absl::Minutes(2);
  this->Create(row, {"a"}, &third);
  ASSERT_TRUE(this->store().CancelSeries(second, "stop", kT0 + absl::Minutes(3)).ok());
  auto ids = [&](bool active_only) {
    std::vector<std::string> out;
    const std::vector<SeriesRow> listed = Value(this->store().ListSeries(active_only));
    for (const SeriesRow& s : listed) out.push_back(s.id);
    return out;
  };
  EXPECT_THAT(ids(false), ElementsAre(third, second, first));
  EXPECT_THAT(ids(true), ElementsAre(third, first));
}

TYPED_TEST(FleetStoreContractTest, TheChangeCounterMovesOnEveryChangeFromTheFirstAndNotOnReads) {
  const int64_t before = this->Counter();
  std::string id;
  std::map<std::string, TaskRow> tasks = this->Create(this->Row("nightly"), {"a"}, &id);
  const int64_t created = this->Counter();
  EXPECT_NE(created, before);
  ASSERT_TRUE(this->store().GetSeries(id).ok());
  ASSERT_TRUE(this->store().ListTasks(id).ok());
  ASSERT_TRUE(this->store().ListDueTasks(kT0).ok());
  EXPECT_EQ(this->Counter(), created);
  ASSERT_EQ(Value(this->store().ClaimPendingTasks({"a"}, "c1", kT0, kT0 + absl::Seconds(30))).size(), 1u);
  const int64_t claimed = this->Counter();
  EXPECT_NE(claimed, created);
  // Taking over a task and renewing a lease change no state others watch.
  ASSERT_EQ(Value(this->store().TakeOverRunningTasks("a", "c2", kT0, kT0 + absl::Seconds(30))).size(), 1u);
  ASSERT_TRUE(this->store().RenewLeases("a", kT0 + absl::Seconds(60)).ok());
  EXPECT_EQ(this->Counter(), claimed);
  TaskRow t = this->Task(tasks["a"].status.task_id());
  t.status.set_runs_done(1);
  ASSERT_TRUE(Value(this->store().UpdateTask(t, v1::TaskStatus::STATE_RUNNING, 1, kT0)));
  EXPECT_NE(this->Counter(), claimed);
}

TYPED_TEST(FleetStoreContractTest, PendingTasksAreClaimedOnceWhileTheSeriesIsActiveAndBeforeItsDeadline) {
  std::string with_deadline, without;
  std::map<std::string, TaskRow> a_b = this->Create(this->Row("d", kT0 + absl::Hours(1)), {"a", "b"}, &with_deadline);
  std::map<std::string, TaskRow> a_only = this->Create(this->Row("n"), {"a"}, &without);

  absl::StatusOr<std::vector<ClaimedTask>> claimed =
      this->store().ClaimPendingTasks({"a", "x"}, "c1", kT0 + absl::Minutes(1), kT0 + absl::Minutes(2));
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  ASSERT_EQ(claimed->size(), 2u);
  std::sort(claimed->begin(), claimed->end(),
            [](const ClaimedTask& x, const ClaimedTask& y) { return x.spec_yaml < y.spec_yaml; });
  const ClaimedTask& c = (*claimed)[0];  // "series: d"
  EXPECT_EQ(c.task_id, a_b["a"].status.task_id());
  EXPECT_EQ(c.series_id, with_deadline);
  EXPECT_EQ(c.agent_id, "a");
  EXPECT_EQ(c.task, "chat-7b");
  EXPECT_EQ(c.attempt, 1u);
  EXPECT_EQ(c.spec_yaml, "series: d\n");
  EXPECT_EQ(c.deadline, kT0 + absl::Hours(1));
  EXPECT_EQ((*claimed)[1].task_id, a_only["a"].status.task_id());
  EXPECT_EQ((*claimed)[1].deadline, std::nullopt);
  const TaskRow running = this->Task(c.task_id);
  EXPECT_EQ(running.status.state(), v1::TaskStatus::STATE_RUNNING);
  EXPECT_EQ(running.coordinator_id, "c1");
  EXPECT_EQ(running.lease_expiry, kT0 + absl::Minutes(2));
  EXPECT_EQ(ToTime(running.status.update_time()), kT0 + absl::Minutes(1));

  // Taken already: nobody gets it again.
  EXPECT_THAT(Value(this->store().ClaimPendingTasks({"a"}, "c2", kT0 + absl::Minutes(1), kT0 + absl::Hours(1))), IsEmpty());
  // At the deadline it is too late; a microsecond before, not.
  EXPECT_THAT(Value(this->store().ClaimPendingTasks({"b"}, "c1", kT0 + absl::Hours(1), kT0 + absl::Hours(2))), IsEmpty());
  EXPECT_EQ(this->store()
                .ClaimPendingTasks({"b"}, "c1", kT0 + absl::Hours(1) - absl::Microseconds(1), kT0 + absl::Hours(2))
                ->size(),
            1u);
  // No agent: nothing.
  EXPECT_THAT(Value(this->store().ClaimPendingTasks({}, "c1", kT0, kT0)), IsEmpty());
}

TYPED_TEST(FleetStoreContractTest, ManyClaimersAtOnceTakeEachTaskExactlyOnce) {
  std::vector<std::string> agents;
  for (int i = 0; i < 20; ++i) agents.push_back(absl::StrCat("agent-", i));
  this->Create(this->Row("n"), agents);
  std::mutex mu;
  std::vector<std::string> taken;
  std::vector<std::thread> claimers;
  for (int c = 0; c < 4; ++c) {
    claimers.emplace_back([&, c] {
      for (int round = 0; round < 3; ++round) {
        absl::StatusOr<std::vector<ClaimedTask>> got =
            this->store().ClaimPendingTasks(agents, absl::StrCat("c", c), kT0, kT0 + absl::Seconds(30));
        ASSERT_TRUE(got.ok()) << got.status();
        std::lock_guard<std::mutex> lock(mu);
        for (const ClaimedTask& t : *got) taken.push_back(t.task_id);
      }
    });
  }
  for (std::thread& t : claimers) t.join();
  EXPECT_EQ(taken.size(), 20u);
  EXPECT_EQ(std::set<std::string>(taken.begin(), taken.end()).size(), 20u);
}

TYPED_TEST(FleetStoreContractTest, AnUpdateIsWrittenOnlyFromTheExpectedStateAndAttempt) {
  std::map<std::string, TaskRow> tasks = this->Create(this->Row("n"), {"a"});
  const std::string id = tasks["a"].status.task_id();
  ASSERT_TRUE(this->store().AddFlagCounts({{id, {{"CACHE_HIT", 2}}}}).ok());
  ASSERT_EQ(Value(this->store().ClaimPendingTasks({"a"}, "c1", kT0, kT0 + absl::Seconds(30))).size(), 1u);

  TaskRow t = this->Task(id);
  t.status.set_state(v1::TaskStatus::STATE_SUCCEEDED);
  t.status.set_runs_done(3);
  t.status.set_runs_total(3);
  t.status.set_runs_failed(1);
  t.status.set_phase("WARM");
  t.status.set_call_index(2);
  t.status.set_last_figure("52.9 tokens/s");
  t.status.set_message("3 of 3 runs made");
  t.status.mutable_flag_counts()->clear();  // not written: flag counts only add up
  t.lease_expiry.reset();
  t.coordinator_id = "c9";
  EXPECT_FALSE(Value(this->store().UpdateTask(t, v1::TaskStatus::STATE_PENDING, 1, kT0 + absl::Seconds(5))));
  EXPECT_FALSE(Value(this->store().UpdateTask(t, v1::TaskStatus::STATE_RUNNING, 2, kT0 + absl::Seconds(5))));
  EXPECT_EQ(this->Task(id).status.state(), v1::TaskStatus::STATE_RUNNING);
  EXPECT_TRUE(Value(this->store().UpdateTask(t, v1::TaskStatus::STATE_RUNNING, 1, kT0 + absl::Seconds(5))));
  // Ended: a second writer that read RUNNING loses.
  EXPECT_FALSE(Value(this->store().UpdateTask(t, v1::TaskStatus::STATE_RUNNING, 1, kT0 + absl::Seconds(6))));

  const TaskRow written = this->Task(id);
  EXPECT_EQ(written.status.state(), v1::TaskStatus::STATE_SUCCEEDED);
  EXPECT_EQ(written.status.runs_done(), 3u);
  EXPECT_EQ(written.status.runs_total(), 3u);
  EXPECT_EQ(written.status.runs_failed(), 1u);
  EXPECT_EQ(written.status.phase(), "WARM");
  EXPECT_EQ(written.status.call_index(), 2u);
  EXPECT_EQ(written.status.last_figure(), "52.9 tokens/s");
  EXPECT_EQ(written.status.message(), "3 of 3 runs made");
  EXPECT_EQ(ToTime(written.status.update_time()), kT0 + absl::Seconds(5));
  EXPECT_EQ(written.status.flag_counts().at("CACHE_HIT"), 2u);
  EXPECT_EQ(written.lease_expiry, std::nullopt);
  EXPECT_EQ(written.coordinator_id, "c9");

  TaskRow unknown = t;
  unknown.status.set_task_id(NewUuid());
  EXPECT_FALSE(Value(this->store().UpdateTask(unknown, v1::TaskStatus::STATE_SUCCEEDED, 1, kT0)));
  unknown.status.set_task_id("nope");
  EXPECT_FALSE(Value(this->store().UpdateTask(unknown, v1::TaskStatus::STATE_SUCCEEDED, 1, kT0)));
}

TYPED_TEST(FleetStoreContractTest, LeasesMoveOnlyForwardAndTasksFallDueAtTheirLeaseOrDeadline) {
  std::string leased, deadlined;
  std::map<std::string, TaskRow> l = this->Create(this->Row("l", std::nullopt, 2), {"a", "b"}, &leased);
  std::map<std::string, TaskRow> d = this->Create(this->Row("d", kT0 + absl::Minutes(10), 3), {"c"}, &deadlined);
  ASSERT_EQ(Value(this->store().ClaimPendingTasks({"a", "b"}, "c1", kT0, kT0 + absl::Seconds(30))).size(), 2u);

  ASSERT_TRUE(this->store().RenewLeases("a", kT0 + absl::Seconds(20)).ok());  // earlier: kept
  EXPECT_EQ(this->Task(l["a"].status.task_id()).lease_expiry, kT0 + absl::Seconds(30));
  ASSERT_TRUE(this->store().RenewLeases("a", kT0 + absl::Seconds(60)).ok());
  EXPECT_EQ(this->Task(l["a"].status.task_id()).lease_expiry, kT0 + absl::Seconds(60));
  EXPECT_EQ(this->Task(l["b"].status.task_id()).lease_expiry, kT0 + absl::Seconds(30));
  ASSERT_TRUE(this->store().RenewLeases("c", kT0 + absl::Hours(1)).ok());  // PENDING: no lease
  EXPECT_EQ(this->Task(d["c"].status.task_id()).lease_expiry, std::nullopt);

  auto due = [&](absl::Time now) {
    std::vector<std::string> out;
    const std::vector<DueTask> listed = Value(this->store().ListDueTasks(now));
    for (const DueTask& t : listed) out.push_back(t.task.status.agent_id());
    return out;
  };
  EXPECT_THAT(due(kT0 + absl::Seconds(29)), IsEmpty());
  EXPECT_THAT(due(kT0 + absl::Seconds(30)), ElementsAre("b"));
  const std::vector<DueTask> at_deadline = Value(this->store().ListDueTasks(kT0 + absl::Minutes(10)));
  ASSERT_EQ(at_deadline.size(), 3u);
  // By series id, then agent.
  const bool leased_first = leased < deadlined;
  const DueTask& b = at_deadline[leased_first ? 1 : 2];
  const DueTask& c = at_deadline[leased_first ? 2 : 0];
  EXPECT_EQ(at_deadline[leased_first ? 0 : 1].task.status.agent_id(), "a");
  EXPECT_EQ(b.task.status.agent_id(), "b");
  EXPECT_EQ(b.task.status.state(), v1::TaskStatus::STATE_RUNNING);
  EXPECT_EQ(b.task.lease_expiry, kT0 + absl::Seconds(30));
  EXPECT_EQ(b.retry_max, 2);
  EXPECT_EQ(b.deadline, std::nullopt);
  EXPECT_EQ(c.task.status.agent_id(), "c");
  EXPECT_EQ(c.task.status.state(), v1::TaskStatus::STATE_PENDING);
  EXPECT_EQ(c.retry_max, 3);
  EXPECT_EQ(c.deadline, kT0 + absl::Minutes(10));
}

TYPED_TEST(FleetStoreContractTest, TakingOverMovesTheAgentsRunningTasksToTheNewCoordinatorSortedById) {
  this->Create(this->Row("one"), {"a", "b"});
  this->Create(this->Row("two"), {"a"});
  std::vector<std::string> claimed_ids;
  const std::vector<ClaimedTask> claimed = Value(this->store().ClaimPendingTasks({"a", "b"}, "c1", kT0, kT0 + absl::Seconds(30)));
  for (const ClaimedTask& t : claimed) {
    if (t.agent_id == "a") claimed_ids.push_back(t.task_id);
  }
  ASSERT_EQ(claimed_ids.size(), 2u);
  this->Create(this->Row("three"), {"a"});  // PENDING: not the agent's running work
  std::sort(claimed_ids.begin(), claimed_ids.end());
  absl::StatusOr<std::vector<ClaimedTask>> taken =
      this->store().TakeOverRunningTasks("a", "c2", kT0 + absl::Seconds(10), kT0 + absl::Seconds(40));
  ASSERT_TRUE(taken.ok()) << taken.status();
  std::vector<std::string> ids;
  for (const ClaimedTask& t : *taken) {
    ids.push_back(t.task_id);
    EXPECT_EQ(t.agent_id, "a");
    EXPECT_EQ(t.attempt, 1u);
    EXPECT_EQ(this->Task(t.task_id).coordinator_id, "c2");
    EXPECT_EQ(this->Task(t.task_id).lease_expiry, kT0 + absl::Seconds(40));
  }
  EXPECT_EQ(ids, claimed_ids);
}

TYPED_TEST(FleetStoreContractTest, CancellingEndsOpenTasksAndHandsEachRunningOneToTakeCancelsOnce) {
  std::string id;
  std::map<std::string, TaskRow> tasks = this->Create(this->Row("n"), {"a", "b", "c"}, &id);
  ASSERT_EQ(Value(this->store().ClaimPendingTasks({"a", "c"}, "c1", kT0, kT0 + absl::Seconds(30))).size(), 2u);
  TaskRow done = this->Task(tasks["c"].status.task_id());
  done.status.set_state(v1::TaskStatus::STATE_SUCCEEDED);
  done.status.set_message("ok");
  done.lease_expiry.reset();
  ASSERT_TRUE(Value(this->store().UpdateTask(done, v1::TaskStatus::STATE_RUNNING, 1, kT0)));

  absl::StatusOr<std::vector<TaskRow>> running =
      this->store().CancelSeries(id, "cancelled by an operator", kT0 + absl::Seconds(5));
  ASSERT_TRUE(running.ok()) << running.status();
  ASSERT_EQ(running->size(), 1u);
  EXPECT_EQ((*running)[0].status.task_id(), tasks["a"].status.task_id());
  EXPECT_EQ((*running)[0].status.state(), v1::TaskStatus::STATE_CANCELLED);
  const std::map<std::string, TaskRow> after = this->Tasks(id);
  for (const std::string agent : {"a", "b"}) {
    const TaskRow& t = after.at(agent);
    EXPECT_EQ(t.status.state(), v1::TaskStatus::STATE_CANCELLED) << agent;
    EXPECT_EQ(t.status.message(), "cancelled by an operator") << agent;
    EXPECT_EQ(t.lease_expiry, std::nullopt) << agent;
    EXPECT_EQ(ToTime(t.status.update_time()), kT0 + absl::Seconds(5)) << agent;
  }
  EXPECT_EQ(after.at("c").status.state(), v1::TaskStatus::STATE_SUCCEEDED);
  EXPECT_EQ(after.at("c").status.message(), "ok");
  EXPECT_EQ(Value(this->store().GetSeries(id)).state, v1::SeriesStatus::STATE_CANCELLED);

  EXPECT_THAT(Value(this->store().TakeCancels({"b", "c"})), IsEmpty());  // b was PENDING: nothing to tell
  absl::StatusOr<std::vector<TaskRow>> cancels = this->store().TakeCancels({"a", "b"});
  ASSERT_TRUE(cancels.ok());
  ASSERT_EQ(cancels->size(), 1u);
  EXPECT_EQ((*cancels)[0].status.task_id(), tasks["a"].status.task_id());
  EXPECT_THAT(Value(this->store().TakeCancels({"a"})), IsEmpty());
  EXPECT_THAT(Value(this->store().TakeCancels({})), IsEmpty());

  // Cancelling again ends nothing more and marks nothing; an unknown series is NOT_FOUND.
  EXPECT_THAT(Value(this->store().CancelSeries(id, "again", kT0)), IsEmpty());
  EXPECT_THAT(Value(this->store().TakeCancels({"a"})), IsEmpty());
  const std::string unknown = NewUuid();
  EXPECT_EQ(this->store().CancelSeries(unknown, "x", kT0).status(), absl::NotFoundError("no series " + unknown));
  EXPECT_EQ(this->store().CancelSeries("nope", "x", kT0).status(), absl::NotFoundError("no series nope"));
}

TYPED_TEST(FleetStoreContractTest, ASeriesIsDoneOnceNoneOfItsTasksIsOpen) {
  std::string ended, open, cancelled;
  std::map<std::string, TaskRow> e = this->Create(this->Row("ended"), {"a"}, &ended);
  this->Create(this->Row("open"), {"a"}, &open);
  this->Create(this->Row("cancelled"), {"a"}, &cancelled);
  ASSERT_TRUE(this->store().CancelSeries(cancelled, "stop", kT0).ok());
  TaskRow t = e["a"];
  t.status.set_state(v1::TaskStatus::STATE_EXPIRED);
  ASSERT_TRUE(Value(this->store().UpdateTask(t, v1::TaskStatus::STATE_PENDING, 1, kT0)));

  EXPECT_THAT(Value(this->store().FinishDoneSeries()), ElementsAre(ended));
  EXPECT_THAT(Value(this->store().FinishDoneSeries()), IsEmpty());
  EXPECT_EQ(Value(this->store().GetSeries(ended)).state, v1::SeriesStatus::STATE_DONE);
  EXPECT_EQ(Value(this->store().GetSeries(open)).state, v1::SeriesStatus::STATE_ACTIVE);
  EXPECT_EQ(Value(this->store().GetSeries(cancelled)).state, v1::SeriesStatus::STATE_CANCELLED);
}

TYPED_TEST(FleetStoreContractTest, FlagCountsAddUpAndUnknownTasksAreSkipped) {
  std::map<std::string, TaskRow> tasks = this->Create(this->Row("n"), {"a"});
  const std::string id = tasks["a"].status.task_id();
  ASSERT_TRUE(this->store().AddFlagCounts({{id, {{"CACHE_HIT", 2}, {"CONTENDED", 1}}}}).ok());
  ASSERT_TRUE(this->store()
                  .AddFlagCounts({{id, {{"CACHE_HIT", 3}}}, {NewUuid(), {{"CACHE_HIT", 1}}}, {"task-1", {{"X", 1}}}})
                  .ok());
  ASSERT_TRUE(this->store().AddFlagCounts({}).ok());
  const TaskRow task = this->Task(id);
  const auto& counts = task.status.flag_counts();
  EXPECT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts.at("CACHE_HIT"), 5u);
  EXPECT_EQ(counts.at("CONTENDED"), 1u);
}

// ---- ScheduleStore ----

TYPED_TEST(FleetStoreContractTest, LiveSchedulesAreListedWithTheirLatestSlotAndEachSlotIsClaimedOnce) {
  ScheduleRow row;
  row.cron = "0 3 * * *";
  row.spec_yaml = "series: nightly\n";
  row.source_name = "s.yaml";
  row.series_name = "nightly";
  row.task = "chat-7b";
  row.created = kT0 + absl::Minutes(1);
  const std::string second = Value(this->store().AddSchedule(row));
  row.created = kT0;
  const std::string first = Value(this->store().AddSchedule(row));
  ASSERT_TRUE(IsUuid(first) && IsUuid(second));

  const absl::Time slot1 = kT0 + absl::Hours(3);
  const absl::Time slot2 = kT0 + absl::Hours(27);
  EXPECT_TRUE(Value(this->store().ClaimSlot(first, slot2, "c1", slot2)));
  EXPECT_FALSE(Value(this->store().ClaimSlot(first, slot2, "c2", slot2)));
  EXPECT_TRUE(Value(this->store().ClaimSlot(first, slot1, "c2", slot2)));  // an older slot, claimed late
  SeriesRow fired = this->Row("nightly");
  fired.schedule_id = first;
  fired.slot_time = slot2;
  std::string series_id;
  this->Create(fired, {"a"}, &series_id);
  EXPECT_EQ(Value(this->store().GetSeries(series_id)).schedule_id, first);
  EXPECT_EQ(Value(this->store().GetSeries(series_id)).slot_time, slot2);

  absl::StatusOr<std::vector<ScheduleRow>> listed = this->store().ListSchedules();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].id, first);
  EXPECT_EQ((*listed)[0].cron, "0 3 * * *");
  EXPECT_EQ((*listed)[0].spec_yaml, "series: nightly\n");
  EXPECT_EQ((*listed)[0].source_name, "s.yaml");
  EXPECT_EQ((*listed)[0].series_name, "nightly");
  EXPECT_EQ((*listed)[0].task, "chat-7b");
  EXPECT_EQ((*listed)[0].created, kT0);
  EXPECT_EQ((*listed)[0].last_slot, slot2);
  EXPECT_EQ((*listed)[0].last_series_id, series_id);
  EXPECT_EQ((*listed)[1].id, second);
  EXPECT_EQ((*listed)[1].last_slot, std::nullopt);
  EXPECT_EQ((*listed)[1].last_series_id, "");

  // Many claimers of one slot: exactly one wins.
  std::atomic<int> won{0};
  std::vector<std::thread> claimers;
  for (int c = 0; c < 6; ++c) {
    claimers.emplace_back([&, c] {
      absl::StatusOr<bool> w = this->store().ClaimSlot(second, slot1, absl::StrCat("c", c), slot1);
      ASSERT_TRUE(w.ok()) << w.status();
      if (*w) ++won;
    });
  }
  for (std::thread& t : claimers) t.join();
  EXPECT_EQ(won.load(), 1);

  ASSERT_TRUE(this->store().RemoveSchedule(second, kT0).ok());
  EXPECT_EQ(this->store().RemoveSchedule(second, kT0), absl::NotFoundError("no schedule " + second));
  EXPECT_EQ(this->store().RemoveSchedule("nope", kT0), absl::NotFoundError("no schedule nope"));
  listed = this->store().ListSchedules();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, first);
}

// ---- RunAnnotationStore ----

TYPED_TEST(FleetStoreContractTest, AnnotatingNamesTheFirstRunNotStoredAndReplacesAReasonOfTheSameCode) {
  v1::RunRecord r1 = testing::MakeRecord(1);
  v1::RunRecord r2 = testing::MakeRecord(2);
  r2.set_series_id("series-2");
  this->backend_.StoreRuns({r1, r2});
  const std::string missing = NewUuid();
  EXPECT_EQ(this->store().AnnotateRuns({r1.run_id(), missing, NewUuid()}, "INVALIDATED", "why", kT0),
            absl::NotFoundError("no run " + missing));
  EXPECT_EQ(this->store().AnnotateRuns({missing, "nope"}, "INVALIDATED", "why", kT0),
            absl::NotFoundError("no run nope"));
  EXPECT_EQ(this->backend_.Annotations(r1.run_id()), "");
  ASSERT_TRUE(this->store().AnnotateRuns({r1.run_id(), r2.run_id()}, "INVALIDATED", "noisy", kT0).ok());
  ASSERT_TRUE(this->store().AnnotateRuns({r1.run_id()}, "INVALIDATED", "bad cable", kT0).ok());
  ASSERT_TRUE(this->store().AnnotateRuns({r1.run_id()}, "REGRESSION", "slower", kT0).ok());
  EXPECT_EQ(this->backend_.Annotations(r1.run_id()), "INVALIDATED=bad cable,REGRESSION=slower");
  EXPECT_EQ(this->backend_.Annotations(r2.run_id()), "INVALIDATED=noisy");

  EXPECT_THAT(Value(this->store().RunsOfSeries("series-1")), ElementsAre(r1.run_id()));
  EXPECT_THAT(Value(this->store().RunsOfSeries("series-9")), IsEmpty());
}

// The point's runs, each one way of not belonging; MakeRecord(i) starts at kT0 + i seconds.
TYPED_TEST(FleetStoreContractTest, TheBaselineIsTheLastAcceptedRunsOfOtherTasksBeforeTheRunNewestFirst) {
  std::vector<v1::RunRecord> runs;
  auto add = [&](uint32_t call, const std::function<void(v1::RunRecord*)>& change) {
    v1::RunRecord r = testing::MakeRecord(call);
    r.set_task_id("earlier-task");
    r.set_conditions_fingerprint(absl::StrCat("fp-", call));
    change(&r);
    runs.push_back(r);
    return r.run_id();
  };
  const std::string ok1 = add(1, [](v1::RunRecord*) {});
  const std::string ok2 = add(2, [](v1::RunRecord* r) { r->set_task_id("another-task"); });
  const std::string ok3 = add(3, [](v1::RunRecord* r) { r->clear_wall_duration(); });
  add(4, [](v1::RunRecord* r) { r->mutable_status()->set_code(v1::RunStatus::CODE_FAILED); });
  add(5, [](v1::RunRecord* r) { r->add_flags()->set_code("CACHE_HIT"); });
  const std::string invalidated = add(6, [](v1::RunRecord*) {});
  const std::string regressed = add(7, [](v1::RunRecord*) {});
  add(8, [](v1::RunRecord* r) { r->set_mode("cpu"); });
  add(9, [](v1::RunRecord* r) { (*r->mutable_matrix())["threads"] = "8"; });
  add(10, [](v1::RunRecord* r) { r->set_agent_id("agent-2"); });
  add(11, [](v1::RunRecord* r) { r->set_task("other"); });
  add(12, [](v1::RunRecord* r) { r->set_phase(v1::PHASE_COLD); });
  add(13, [](v1::RunRecord* r) { r->set_task_id("task-now"); });  // the run's own task
  const std::string same_start = add(20, [](v1::RunRecord*) {});  // not before the run
  add(30, [](v1::RunRecord*) {});                                 // after it
  const std::string flagged = add(14, [](v1::RunRecord* r) { r->add_flags()->set_code("NEW_CODE"); });
  this->backend_.StoreRuns(runs);
  ASSERT_TRUE(this->store().AnnotateRuns({invalidated}, "INVALIDATED", "x", kT0).ok());
  ASSERT_TRUE(this->store().AnnotateRuns({regressed}, "REGRESSION", "x", kT0).ok());

  v1::RunRecord run = testing::MakeRecord(20);
  run.set_task_id("task-now");
  absl::StatusOr<std::vector<BaselineRun>> baseline = this->store().Baseline(run, 10);
  ASSERT_TRUE(baseline.ok()) << baseline.status();
  EXPECT_THAT(this->Ids(*baseline), ElementsAre(flagged, ok3, ok2, ok1));
  const BaselineRun& b = (*baseline)[1];
  EXPECT_EQ(b.metrics, (std::map<std::string, double>{{"tokens_per_second", 43}}));
  EXPECT_EQ(b.wall_seconds, std::nullopt);
  EXPECT_EQ(b.conditions_fingerprint, "fp-3");
  EXPECT_EQ(b.start_time, kT0 + absl::Seconds(3));
  EXPECT_EQ((*baseline)[2].wall_seconds, 1.0);
  EXPECT_THAT(this->Ids(Value(this->store().Baseline(run, 2))), ElementsAre(flagged, ok3));
  (void)same_start;

  // A run without a start, or whose id is not a UUID, has no baseline.
  v1::RunRecord no_start = run;
  no_start.clear_start_time();
  EXPECT_THAT(Value(this->store().Baseline(no_start, 10)), IsEmpty());
  v1::RunRecord bad_id = run;
  bad_id.set_run_id("nope");
  EXPECT_THAT(Value(this->store().Baseline(bad_id, 10)), IsEmpty());
}

TYPED_TEST(FleetStoreContractTest, TheSampleIsTheTasksOwnAcceptedRunsUpToTheRunWithRegressionAnnotationsKept) {
  std::vector<v1::RunRecord> runs;
  auto add = [&](uint32_t call, const std::function<void(v1::RunRecord*)>& change) {
    v1::RunRecord r = testing::MakeRecord(call);
    r.set_task_id("task-now");
    change(&r);
    runs.push_back(r);
    return r.run_id();
  };
  const std::string s1 = add(1, [](v1::RunRecord*) {});
  add(2, [](v1::RunRecord* r) { r->set_task_id("earlier-task"); });
  const std::string regressed = add(3, [](v1::RunRecord*) {});
  const std::string invalidated = add(4, [](v1::RunRecord*) {});
  add(5, [](v1::RunRecord* r) { r->add_flags()->set_code("CONTENDED"); });
  add(6, [](v1::RunRecord* r) { r->set_agent_id("agent-2"); });
  add(30, [](v1::RunRecord*) {});  // after the run
  this->backend_.StoreRuns(runs);
  ASSERT_TRUE(this->store().AnnotateRuns({regressed}, "REGRESSION", "x", kT0).ok());
  ASSERT_TRUE(this->store().AnnotateRuns({invalidated}, "INVALIDATED", "x", kT0).ok());

  v1::RunRecord run = testing::MakeRecord(20);
  run.set_task_id("task-now");
  EXPECT_THAT(this->Ids(Value(this->store().Sample(run, 10))), ElementsAre(regressed, s1));
  this->backend_.StoreRuns({run});  // stored: the run is its own sample's newest
  EXPECT_THAT(this->Ids(Value(this->store().Sample(run, 10))), ElementsAre(run.run_id(), regressed, s1));
  EXPECT_THAT(this->Ids(Value(this->store().Sample(run, 1))), ElementsAre(run.run_id()));
}

TYPED_TEST(FleetStoreContractTest, AVerdictIsStoredOncePerRunAndARegressionAnnotatesItsSampleCountingOnTheTask) {
  std::string series_id;
  std::map<std::string, TaskRow> tasks = this->Create(this->Row("n"), {testing::kAgentId}, &series_id);
  const std::string task_id = tasks[testing::kAgentId].status.task_id();
  std::vector<v1::RunRecord> runs;
  for (uint32_t call = 1; call <= 3; ++call) {
    runs.push_back(testing::MakeRecord(call));
    runs.back().set_task_id(task_id);
  }
  this->backend_.StoreRuns(runs);
  ASSERT_TRUE(this->store().AnnotateRuns({runs[0].run_id()}, "REGRESSION", "an earlier verdict", kT0).ok());

  v1::RegressionVerdict verdict;
  verdict.set_run_id(runs[2].run_id());
  verdict.set_kind(v1::RegressionVerdict::KIND_REGRESSION);
  verdict.set_regression(true);
  verdict.set_mode("gpu");
  verdict.set_phase(v1::PHASE_WARM);
  for (const auto& r : runs) verdict.add_sample_run_ids(r.run_id());
  verdict.add_sample_run_ids("not-a-uuid");
  ASSERT_TRUE(this->store().StoreVerdict(task_id, verdict, "slower", kT0).ok());
  EXPECT_EQ(this->backend_.Annotations(runs[0].run_id()), "REGRESSION=an earlier verdict");
  EXPECT_EQ(this->backend_.Annotations(runs[1].run_id()), "REGRESSION=slower");
  EXPECT_EQ(this->backend_.Annotations(runs[2].run_id()), "REGRESSION=slower");
  EXPECT_EQ(this->Task(task_id).status.flag_counts().at("REGRESSION"), 2u);

  // The same run's verdict again: dropped, nothing counted twice.
  v1::RegressionVerdict again = verdict;
  again.set_p_value(0.5);
  ASSERT_TRUE(this->store().StoreVerdict(task_id, again, "other", kT0).ok());
  EXPECT_EQ(this->Task(task_id).status.flag_counts().at("REGRESSION"), 2u);
  absl::StatusOr<std::map<std::string, std::vector<v1::RegressionVerdict>>> listed =
      this->store().ListVerdicts(series_id);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->at(task_id).size(), 1u);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(listed->at(task_id)[0], verdict));

  // A verdict that is no regression annotates nothing.
  v1::RunRecord later = testing::MakeRecord(4);
  later.set_task_id(task_id);
  this->backend_.StoreRuns({later});
  v1::RegressionVerdict fine;
  fine.set_run_id(later.run_id());
  fine.set_kind(v1::RegressionVerdict::KIND_NO_CHANGE);
  fine.add_sample_run_ids(later.run_id());
  ASSERT_TRUE(this->store().StoreVerdict(task_id, fine, "fine", kT0).ok());
  EXPECT_EQ(this->backend_.Annotations(later.run_id()), "");

  EXPECT_EQ(this->store().StoreVerdict("task-1", fine, "x", kT0),
            absl::InvalidArgumentError(
                absl::StrCat("verdict of run ", later.run_id(), " of task task-1: ids must be UUIDs")));
}

TYPED_TEST(FleetStoreContractTest, VerdictsListTheNewestOfEachPointOfEachTaskByTheirRunsStart) {
  std::string series_id, other_series;
  std::map<std::string, TaskRow> tasks = this->Create(this->Row("n"), {"a", "b"}, &series_id);
  std::map<std::string, TaskRow> others = this->Create(this->Row("o"), {"a"}, &other_series);
  const std::string task_a = tasks["a"].status.task_id();
  const std::string task_b = tasks["b"].status.task_id();
  std::vector<v1::RunRecord> runs;
  for (uint32_t call = 1; call <= 6; ++call) runs.push_back(testing::MakeRecord(call));
  this->backend_.StoreRuns(runs);
  auto verdict = [&](int run, const std::string& mode, v1::RegressionVerdict::Kind kind) {
    v1::RegressionVerdict v;
    v.set_run_id(runs[run].run_id());
    v.set_kind(kind);
    v.set_mode(mode);
    v.set_phase(v1::PHASE_WARM);
    return v;
  };
  // Task a: gpu at calls 1 and 3 (3 is the newest), cpu at 2, and a verdict from before kinds
  // (call 4), which stands alone; stored out of order.
  const v1::RegressionVerdict gpu3 = verdict(2, "gpu", v1::RegressionVerdict::KIND_NOT_SIGNIFICANT);
  const v1::RegressionVerdict gpu1 = verdict(0, "gpu", v1::RegressionVerdict::KIND_SAMPLE_TOO_SMALL);
  const v1::RegressionVerdict cpu2 = verdict(1, "cpu", v1::RegressionVerdict::KIND_NO_CHANGE);
  v1::RegressionVerdict legacy4;
  legacy4.set_run_id(runs[3].run_id());
  legacy4.set_regression(false);
  const v1::RegressionVerdict b5 = verdict(4, "gpu", v1::RegressionVerdict::KIND_BASELINE_TOO_SMALL);
  const v1::RegressionVerdict other6 = verdict(5, "gpu", v1::RegressionVerdict::KIND_NO_CHANGE);
  ASSERT_TRUE(this->store().StoreVerdict(task_a, gpu3, "", kT0).ok());
  ASSERT_TRUE(this->store().StoreVerdict(task_a, gpu1, "", kT0 + absl::Seconds(1)).ok());
  ASSERT_TRUE(this->store().StoreVerdict(task_a, cpu2, "", kT0).ok());
  ASSERT_TRUE(this->store().StoreVerdict(task_a, legacy4, "", kT0).ok());
  ASSERT_TRUE(this->store().StoreVerdict(task_b, b5, "", kT0).ok());
  ASSERT_TRUE(this->store().StoreVerdict(others["a"].status.task_id(), other6, "", kT0).ok());

  absl::StatusOr<std::map<std::string, std::vector<v1::RegressionVerdict>>> listed =
      this->store().ListVerdicts(series_id);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 2u);
  auto run_ids = [](const std::vector<v1::RegressionVerdict>& vs) {
    std::vector<std::string> out;
    for (const auto& v : vs) out.push_back(v.run_id());
    return out;
  };
  EXPECT_THAT(run_ids(listed->at(task_a)), ElementsAre(cpu2.run_id(), gpu3.run_id(), legacy4.run_id()));
  EXPECT_THAT(run_ids(listed->at(task_b)), ElementsAre(b5.run_id()));
  EXPECT_THAT(Value(this->store().ListVerdicts(NewUuid())), IsEmpty());
  EXPECT_THAT(Value(this->store().ListVerdicts("nope")), IsEmpty());
}

// ---- FleetSnapshotReader ----

TYPED_TEST(FleetStoreContractTest, TheSnapshotCountsMachinesRecentAgentsTasksByStateAndOpenTasksOnce) {
  this->AddMachine("old", {}, kT0 - absl::Hours(25));
  this->AddMachine("b", {}, kT0);
  this->AddMachine("a", {}, kT0 - absl::Hours(24));
  SeriesRow chat = this->Row("chat");
  this->Create(chat, {"a", "b"});
  this->Create(chat, {"b"});
  SeriesRow image = this->Row("image");
  image.task = "txt2img";
  std::string image_id;
  this->Create(image, {"b", "old"}, &image_id);
  ASSERT_EQ(Value(this->store().ClaimPendingTasks({"a"}, "c1", kT0, kT0 + absl::Seconds(30))).size(), 1u);
  ASSERT_TRUE(this->store().CancelSeries(image_id, "stop", kT0).ok());

  absl::StatusOr<FleetSnapshot> snapshot = this->store().ReadFleetSnapshot(kT0 - absl::Hours(24));
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ(snapshot->agents_known, 3);
  EXPECT_THAT(snapshot->recent_agents, ElementsAre("a", "b"));
  EXPECT_EQ(snapshot->tasks_by_state, (std::map<std::string, int64_t>{{"pending", 2},
                                                                      {"running", 1},
                                                                      {"succeeded", 0},
                                                                      {"failed", 0},
                                                                      {"refused", 0},
                                                                      {"lost", 0},
                                                                      {"expired", 0},
                                                                      {"cancelled", 2}}));
  using Open = std::pair<std::string, std::string>;
  EXPECT_THAT(snapshot->open_tasks, ElementsAre(Open("a", "chat-7b"), Open("b", "chat-7b")));
}

}  // namespace
}  // namespace benchfleet::coordinator
