// GroupCommitter (and StreamWork) against a FakeRunStore and a SimulatedClock: results only after
// a successful store, retries with backoff while the store is down, cancelled work dropped,
// machine updates applied later, and what each of those tells the metrics. Nothing sleeps for real.
#include <atomic>
#include <condition_variable>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "coordinator/ingest/group_committer.h"
#include "coordinator/ingest/stream_work.h"
#include "coordinator/store/run_rows.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/coordinator/test_records.h"

namespace benchfleet::coordinator {
namespace {

using ::testing::ElementsAre;

// Work of `n` fresh records whose results land in the returned future.
std::shared_ptr<CommitWork> MakeWork(int n, std::promise<std::vector<StoreOutcome>>* done,
                                     std::vector<std::string>* ids = nullptr) {
  auto work = std::make_shared<CommitWork>();
  for (int i = 0; i < n; ++i) {
    v1::RunRecord r = testing::MakeRecord(i + 1);
    if (ids != nullptr) ids->push_back(r.run_id());
    EXPECT_TRUE(AppendRunRow(r, &work->runs).ok());
  }
  work->done = [done](absl::Span<const RunStoreResult> results) {
    std::vector<StoreOutcome> outcomes;
    for (const auto& r : results) outcomes.push_back(r.outcome);
    done->set_value(outcomes);
  };
  return work;
}

// Waits (without sleeping) until the committer is blocked in the clock's SleepFor.
void WaitForSleeper(SimulatedClock& clock) {
  while (clock.sleepers() == 0) std::this_thread::yield();
}

// Stops the committer while moving the simulated clock, so a retry delay it sleeps in ends.
void StopWhileAdvancing(GroupCommitter& committer, SimulatedClock& clock) {
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    committer.Stop();
    stopped = true;
  });
  while (!stopped) {
    clock.Advance(absl::Seconds(1));
    std::this_thread::yield();
  }
  stopper.join();
}

// Records the group commits (runs in each) and failed database operations it is told of.
class RecordingMetrics : public NullMetrics {
 public:
  void GroupCommitted(uint64_t runs, absl::Duration latency) override {
    std::lock_guard<std::mutex> lock(mu_);
    commits_.push_back(runs);
    EXPECT_GE(latency, absl::ZeroDuration());
  }
  void DatabaseError(std::string_view operation) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++errors_[std::string(operation)];
  }
  std::vector<uint64_t> commits() {
    std::lock_guard<std::mutex> lock(mu_);
    return commits_;
  }
  std::map<std::string, int> errors() {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }

 private:
  std::mutex mu_;
  std::vector<uint64_t> commits_;
  std::map<std::string, int> errors_;
};

class GroupCommitterTest : public ::testing::Test {
 protected:
  testing::FakeRunStore store_;
  SimulatedClock clock_;
  RecordingMetrics metrics_;
};

TEST_F(GroupCommitterTest, ReportsResultsAfterTheStoreSucceeds) {
  GroupCommitter committer(&store_, &clock_, &metrics_);
  committer.Start();
  std::promise<std::vector<StoreOutcome>> done;
  std::vector<std::string> ids;
  ASSERT_TRUE(committer.Submit(MakeWork(3, &done, &ids)).ok());
  EXPECT_THAT(done.get_future().get(),
              ElementsAre(StoreOutcome::kStored, StoreOutcome::kStored, StoreOutcome::kStored));
  EXPECT_EQ(store_.stored().size(), 3u);
  EXPECT_EQ(store_.store_calls(), 1);
  EXPECT_THAT(metrics_.commits(), ElementsAre(3u));
  EXPECT_TRUE(metrics_.errors().empty());
}

TEST_F(GroupCommitterTest, KeepsWorkWhileTheStoreIsDownAndRetriesWithBackoff) {
  store_.FailNext(2);
  GroupCommitter committer(&store_, &clock_, &metrics_);
  committer.Start();
  std::promise<std::vector<StoreOutcome>> done;
  auto result = done.get_future();
  ASSERT_TRUE(committer.Submit(MakeWork(2, &done)).ok());

  WaitForSleeper(clock_);  // first attempt failed
  EXPECT_EQ(store_.store_calls(), 1);
  EXPECT_EQ(result.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  clock_.Advance(absl::Milliseconds(100));
  store_.WaitForStoreCalls(2);
  WaitForSleeper(clock_);  // second attempt failed; now waits 200 ms
  clock_.Advance(absl::Milliseconds(100));
  EXPECT_EQ(result.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  clock_.Advance(absl::Milliseconds(100));
  EXPECT_THAT(result.get(), ElementsAre(StoreOutcome::kStored, StoreOutcome::kStored));
  EXPECT_EQ(store_.store_calls(), 3);
  // Each failed attempt counts; the commit counts once, after it succeeded.
  EXPECT_EQ(metrics_.errors(), (std::map<std::string, int>{{"store_runs", 2}}));
  EXPECT_THAT(metrics_.commits(), ElementsAre(2u));
}

TEST_F(GroupCommitterTest, DropsCancelledWorkAndReportsNothingAfterStop) {
  store_.FailNext(1);
  GroupCommitter committer(&store_, &clock_, &metrics_);
  committer.Start();
  std::promise<std::vector<StoreOutcome>> cancelled_done, kept_done;
  auto cancelled = MakeWork(1, &cancelled_done);
  cancelled->cancelled = std::make_shared<std::atomic<bool>>(false);
  ASSERT_TRUE(committer.Submit(cancelled).ok());
  WaitForSleeper(clock_);
  cancelled->cancelled->store(true);  // its stream closed while the store was down
  ASSERT_TRUE(committer.Submit(MakeWork(2, &kept_done)).ok());
  clock_.Advance(absl::Milliseconds(100));
  EXPECT_THAT(kept_done.get_future().get(), ElementsAre(StoreOutcome::kStored, StoreOutcome::kStored));
  EXPECT_EQ(store_.stored().size(), 2u);

  // Down for good: StopWhileAdvancing moves the clock a second per turn until Stop() returns, and
  // on a busy host that can be more turns than any finite count of failures (100 were used up once,
  // and the work got stored).
  store_.FailNext(std::numeric_limits<int>::max());
  std::promise<std::vector<StoreOutcome>> never;
  auto never_result = never.get_future();
  ASSERT_TRUE(committer.Submit(MakeWork(1, &never)).ok());
  WaitForSleeper(clock_);
  StopWhileAdvancing(committer, clock_);
  EXPECT_EQ(never_result.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  std::promise<std::vector<StoreOutcome>> late;
  EXPECT_EQ(committer.Submit(MakeWork(1, &late)),
            absl::UnavailableError("the coordinator is shutting down"));
}

TEST_F(GroupCommitterTest, AppliesMachineUpdatesOnceTheStoreTakesThem) {
  store_.SetMachinesDown(true);
  GroupCommitter committer(&store_, &clock_, &metrics_);
  committer.Start();
  MachineUpdate update;
  update.agent_id = "agent-9";
  update.seen = absl::FromUnixSeconds(100);
  committer.UpsertMachineLater(update);
  WaitForSleeper(clock_);
  committer.TouchMachineLater("agent-9", absl::FromUnixSeconds(160));
  store_.SetMachinesDown(false);
  clock_.Advance(absl::Milliseconds(100));
  while (store_.machines_seen().count("agent-9") == 0) std::this_thread::yield();
  EXPECT_EQ(store_.machines_seen().at("agent-9"), absl::FromUnixSeconds(160));
  EXPECT_EQ(metrics_.errors(), (std::map<std::string, int>{{"upsert_machine", 1}}));
}

TEST(StreamWorkTest, OneThreadRunsTheStepsInOrderAndTheDestructorRunsWhatIsQueued) {
  std::vector<int> ran;  // touched by the one thread only, read after the join
  {
    StreamWork work(1);
    for (int i = 1; i <= 100; ++i) work.Submit([&ran, i] { ran.push_back(i); });
  }
  ASSERT_EQ(ran.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(ran[i], i + 1);
}

TEST(StreamWorkTest, ABlockedStepHoldsOneThreadOnly) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> others{0};
  {
    StreamWork work(2);
    work.Submit([&] {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return release; });
    });
    for (int i = 0; i < 10; ++i) work.Submit([&] { ++others; });
    // The other thread runs the ten steps while the first one is blocked.
    while (others.load() < 10) std::this_thread::yield();
    {
      std::lock_guard<std::mutex> lock(mu);
      release = true;
    }
    cv.notify_all();
  }
  EXPECT_EQ(others.load(), 10);
}

}  // namespace
}  // namespace benchfleet::coordinator
