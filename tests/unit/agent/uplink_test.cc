// The uplink against an in-test fake AgentGateway over real gRPC on loopback.
#include "agent/uplink/uplink.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "agent/outbox/outbox.h"
#include "common/conditions_fingerprint.h"
#include "common/hashing.h"
#include "common/version.h"
#include "tests/unit/agent/fake_gateway.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::FakeGateway;
using testing::ScopedTempDir;

constexpr char kAgentId[] = "1b4e28ba-2fa1-41d2-883f-0016d3cca427";

class UplinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OutboxOptions options;
    options.warn = [](std::string_view w) { ADD_FAILURE() << "outbox warning: " << w; };
    auto outbox = Outbox::Open(Env::Default(), tmp_.path() + "/outbox", options);
    ASSERT_TRUE(outbox.ok()) << outbox.status();
    outbox_ = std::move(*outbox);
  }

  UplinkOptions Options() {
    UplinkOptions options;
    options.target = gateway_.address();
    options.agent_id = kAgentId;
    options.conditions.set_hostname("gpu-01");
    options.conditions.set_fingerprint("fp-1");
    options.backoff = BackoffPolicy{absl::Milliseconds(1), absl::Milliseconds(10)};
    return options;
  }

  std::vector<std::string> Fill(int n) {
    std::vector<v1::RunRecord> records(n);
    std::vector<std::string> ids;
    for (auto& r : records) {
      r.set_run_id(NewUuid());
      ids.push_back(r.run_id());
    }
    EXPECT_TRUE(outbox_->AppendBatch(records).ok());
    return ids;
  }

  ScopedTempDir tmp_;
  FakeGateway gateway_;
  std::unique_ptr<Outbox> outbox_;
};

TEST_F(UplinkTest, DrainsTheOutboxInBatchesAndSaysHello) {
  Fill(600);
  UplinkOptions options = Options();
  Uplink uplink(options, outbox_.get());
  ASSERT_TRUE(uplink.Start().ok());
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  uplink.Stop();

  EXPECT_EQ(outbox_->depth(), 0u);
  EXPECT_THAT(gateway_.batch_sizes(), ElementsAre(256, 256, 88));
  EXPECT_EQ(gateway_.stored().size(), 600u);
  const UplinkStats stats = uplink.stats();
  EXPECT_EQ(stats.stored, 600u);
  EXPECT_EQ(stats.duplicates, 0u);
  EXPECT_EQ(stats.rejected, 0u);
  EXPECT_EQ(stats.sessions, 1u);
  EXPECT_EQ(stats.coordinator_version, "fake");
  const v1::Hello hello = gateway_.last_hello();
  EXPECT_EQ(hello.agent_id(), kAgentId);
  EXPECT_EQ(hello.agent_version(), kVersion);
  EXPECT_EQ(hello.api_revision(), kApiRevision);
  EXPECT_EQ(hello.conditions().hostname(), "gpu-01");
  EXPECT_EQ(hello.conditions().fingerprint(), "fp-1");
}

TEST_F(UplinkTest, RejectedRecordsGoToRejectedJsonlAndAreNotResent) {
  const auto ids = Fill(5);
  gateway_.Reject(ids[1], "phase PHASE_UNSPECIFIED is not allowed");
  gateway_.Reject(ids[3], "run_id is not a UUID");
  Uplink uplink(Options(), outbox_.get());
  ASSERT_TRUE(uplink.Start().ok());
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  uplink.Stop();

  const UplinkStats stats = uplink.stats();
  EXPECT_EQ(stats.stored, 3u);
  EXPECT_EQ(stats.rejected, 2u);
  ASSERT_EQ(stats.rejections.size(), 2u);
  EXPECT_EQ(stats.rejections[0].run_id, ids[1]);
  EXPECT_EQ(stats.rejections[0].reason, "phase PHASE_UNSPECIFIED is not allowed");
  std::ifstream rejected(tmp_.path() + "/outbox/rejected.jsonl");
  std::string line;
  int lines = 0;
  while (std::getline(rejected, line)) {
    ++lines;
    EXPECT_THAT(line, HasSubstr(lines == 1 ? ids[1] : ids[3]));
  }
  EXPECT_EQ(lines, 2);
  EXPECT_EQ(outbox_->depth(), 0u);
}

TEST_F(UplinkTest, DroppedStreamIsReopenedAndUnacknowledgedRecordsAreResent) {
  const auto ids = Fill(10);
  gateway_.DropOnNextBatches(1, /*store_first=*/false);
  Uplink uplink(Options(), outbox_.get());
  ASSERT_TRUE(uplink.Start().ok());
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  uplink.Stop();

  EXPECT_EQ(gateway_.hellos(), 2);
  EXPECT_EQ(gateway_.records_received(), 20);
  EXPECT_EQ(gateway_.stored(), std::set<std::string>(ids.begin(), ids.end()));
  const UplinkStats stats = uplink.stats();
  EXPECT_EQ(stats.sessions, 2u);
  EXPECT_EQ(stats.stored, 10u);
  EXPECT_EQ(stats.records_sent, 20u);
}

TEST_F(UplinkTest, LostAckMeansDuplicatesNotLoss) {
  Fill(10);
  gateway_.DropOnNextBatches(1, /*store_first=*/true);
  Uplink uplink(Options(), outbox_.get());
  ASSERT_TRUE(uplink.Start().ok());
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  uplink.Stop();
  const UplinkStats stats = uplink.stats();
  EXPECT_EQ(stats.stored, 0u);
  EXPECT_EQ(stats.duplicates, 10u);
  EXPECT_EQ(gateway_.stored().size(), 10u);
  EXPECT_EQ(outbox_->depth(), 0u);
}

TEST_F(UplinkTest, RefusedWelcomeStopsWithTheReasonAndNoReconnection) {
  Fill(3);
  gateway_.Refuse("agent API revision 1 is older than 2, the oldest this coordinator accepts: upgrade the agent");
  Uplink uplink(Options(), outbox_.get());
  ASSERT_TRUE(uplink.Start().ok());
  const absl::Status s = uplink.WaitUntilDrained(absl::Seconds(20));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), absl::StrCat("coordinator ", gateway_.address(),
                                      " refused this agent: agent API revision 1 is older than 2, the oldest this "
                                      "coordinator accepts: upgrade the agent"));
  uplink.Stop();
  EXPECT_EQ(uplink.status(), s);
  EXPECT_EQ(gateway_.hellos(), 1);
  EXPECT_EQ(outbox_->depth(), 3u);
}

TEST_F(UplinkTest, HeartbeatsCarryTheOutboxDepth) {
  SimulatedClock clock;
  Fill(5);
  gateway_.HoldAcks();
  UplinkOptions options = Options();
  options.clock = &clock;
  options.heartbeat_interval = absl::Seconds(10);
  Uplink uplink(options, outbox_.get());
  ASSERT_TRUE(uplink.Start().ok());
  ASSERT_TRUE(gateway_.WaitFor([&] { return gateway_.batches() == 1; }));
  EXPECT_TRUE(gateway_.heartbeats().empty());

  clock.Advance(absl::Seconds(10));
  ASSERT_TRUE(gateway_.WaitFor([&] { return gateway_.heartbeats().size() == 1; }));
  const v1::Heartbeat heartbeat = gateway_.heartbeats()[0];
  EXPECT_EQ(heartbeat.outbox_depth(), 5u);
  EXPECT_EQ(heartbeat.send_time().seconds(), 1767225600 + 10);
  ASSERT_TRUE(gateway_.WaitFor([&] { return uplink.stats().heartbeat_acks == 1; }));

  gateway_.ReleaseAcks();
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  uplink.Stop();
}

// The runner pauses the uplink during each timed run: records queued then wait, heartbeats go on.
TEST_F(UplinkTest, PausedUplinkSendsNoRecordsUntilResumed) {
  SimulatedClock clock;
  UplinkOptions options = Options();
  options.clock = &clock;
  options.heartbeat_interval = absl::Seconds(10);
  Uplink uplink(options, outbox_.get());
  uplink.SetPaused(true);
  ASSERT_TRUE(uplink.Start().ok());
  ASSERT_TRUE(gateway_.WaitFor([&] { return uplink.stats().connected; }));
  const auto ids = Fill(5);

  // Two heartbeats on the same stream: a batch sent when the records were queued would have
  // reached the gateway before the second one.
  for (size_t beats = 1; beats <= 2; ++beats) {
    clock.Advance(absl::Seconds(10));
    ASSERT_TRUE(gateway_.WaitFor([&] { return gateway_.heartbeats().size() == beats; }));
  }
  EXPECT_EQ(gateway_.heartbeats()[1].outbox_depth(), 5u);
  EXPECT_EQ(gateway_.batches(), 0);
  EXPECT_EQ(gateway_.records_received(), 0);

  uplink.SetPaused(false);
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  uplink.Stop();
  EXPECT_EQ(gateway_.stored(), std::set<std::string>(ids.begin(), ids.end()));
  EXPECT_EQ(gateway_.batches(), 1);
}

TEST_F(UplinkTest, KeepsAtMostMaxInFlightBatchesUnacknowledged) {
  Fill(50);
  gateway_.HoldAcks();
  UplinkOptions options = Options();
  options.max_batch = 10;
  options.max_in_flight = 2;
  Uplink uplink(options, outbox_.get());
  ASSERT_TRUE(uplink.Start().ok());
  ASSERT_TRUE(gateway_.WaitFor([&] { return gateway_.batches() == 2; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // room for a wrong third batch
  EXPECT_EQ(gateway_.batches(), 2);

  gateway_.ReleaseAcks();
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  uplink.Stop();
  EXPECT_THAT(gateway_.batch_sizes(), ElementsAre(10, 10, 10, 10, 10));
}

TEST_F(UplinkTest, RecordsAppendedWhileConnectedAreSentWithoutPolling) {
  Uplink uplink(Options(), outbox_.get());
  ASSERT_TRUE(uplink.Start().ok());
  ASSERT_TRUE(gateway_.WaitFor([&] { return uplink.stats().connected; }));
  const auto ids = Fill(3);
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  uplink.Stop();
  EXPECT_EQ(gateway_.stored(), std::set<std::string>(ids.begin(), ids.end()));
}

TEST_F(UplinkTest, StopLeavesUnacknowledgedRecordsInTheOutbox) {
  Fill(10);
  gateway_.HoldAcks();
  Uplink uplink(Options(), outbox_.get());
  ASSERT_TRUE(uplink.Start().ok());
  ASSERT_TRUE(gateway_.WaitFor([&] { return gateway_.batches() == 1; }));
  uplink.Stop();
  EXPECT_EQ(outbox_->depth(), 10u);
  const absl::Status s = uplink.WaitUntilDrained(absl::ZeroDuration());
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(s.message(), "uplink stopped with 10 records unacknowledged");
}

TEST_F(UplinkTest, UnreachableCoordinatorBacksOffByTheClockThenGivesUp) {
  // Sleeping takes no real time: back-offs and pacing run at full speed while the clock adds up
  // exactly what they waited.
  SimulatedClock clock({.sleeps_advance = true});
  Fill(1);
  UplinkOptions options = Options();
  const std::string target = absl::StrCat("127.0.0.1:", testing::UnusedLoopbackPort());
  options.target = target;
  options.clock = &clock;
  options.backoff = BackoffPolicy{};  // 200 ms, doubling, 30 s cap
  options.jitter = [] { return 1.0; };  // always the ceiling: exact delays
  options.max_connect_failures = 4;
  Uplink uplink(options, outbox_.get());
  ASSERT_TRUE(uplink.Start().ok());
  const absl::Status s = uplink.WaitUntilDrained(absl::Seconds(30));
  uplink.Stop();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(s.message()), StartsWith(absl::StrCat("coordinator ", target, " unreachable after 4 attempts: ")));
  // Three waits between four attempts: 200 + 400 + 800 ms by the clock.
  EXPECT_EQ(clock.Monotonic(), absl::Milliseconds(1400));
  EXPECT_EQ(uplink.stats().connect_failures, 4u);
  EXPECT_EQ(outbox_->depth(), 1u);
}

// Issue 19, case 8: several coordinators, the agent fails over to the next when one goes away.
TEST_F(UplinkTest, SeveralCoordinatorsFailOverToTheNextWhenOneGoesAway) {
  auto first = std::make_unique<FakeGateway>();
  FakeGateway second;
  const std::string first_address = first->address();
  UplinkOptions options = Options();
  options.target = first_address + ", " + second.address();
  std::vector<std::string> lines;
  std::mutex lines_mu;
  options.log = [&](std::string_view line) {
    std::lock_guard<std::mutex> l(lines_mu);
    lines.emplace_back(line);
  };
  Uplink uplink(options, outbox_.get());
  ASSERT_TRUE(uplink.Start().ok());
  Fill(10);
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  EXPECT_EQ(first->stored().size(), 10u);
  EXPECT_EQ(uplink.stats().coordinator, first_address);

  first.reset();  // the first coordinator is gone (its server shut down, its port closed)
  Fill(10);
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  uplink.Stop();
  EXPECT_EQ(second.stored().size(), 10u);
  EXPECT_EQ(second.hellos(), 1);
  EXPECT_EQ(uplink.stats().coordinator, second.address());
  EXPECT_EQ(uplink.stats().sessions, 2u);
  std::lock_guard<std::mutex> l(lines_mu);
  EXPECT_THAT(lines, ::testing::Contains(StartsWith(absl::StrCat("stream to ", first_address, ": "))));
  EXPECT_THAT(lines, ::testing::Contains(HasSubstr(absl::StrCat("; trying coordinator ", second.address(), " in "))));
}

TEST_F(UplinkTest, AnUnreachableFirstCoordinatorCostsOneAttempt) {
  // Sleeping takes no real time: back-offs and pacing run at full speed while the clock adds up
  // exactly what they waited.
  SimulatedClock clock({.sleeps_advance = true});
  Fill(3);
  UplinkOptions options = Options();
  options.target = absl::StrCat("127.0.0.1:", testing::UnusedLoopbackPort(), ",", gateway_.address());
  options.clock = &clock;
  options.backoff = BackoffPolicy{};
  options.jitter = [] { return 1.0; };
  options.max_connect_failures = 2;
  Uplink uplink(options, outbox_.get());
  ASSERT_TRUE(uplink.Start().ok());
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  uplink.Stop();
  EXPECT_EQ(gateway_.stored().size(), 3u);
  EXPECT_EQ(uplink.stats().connect_failures, 1u);
  EXPECT_EQ(clock.Monotonic(), absl::Milliseconds(200));  // one backoff step between the two
}

TEST_F(UplinkTest, BackoffStartsOverAfterEachWelcome) {
  // Sleeping takes no real time: back-offs and pacing run at full speed while the clock adds up
  // exactly what they waited.
  SimulatedClock clock({.sleeps_advance = true});
  Fill(4);
  gateway_.DropOnNextBatches(2, /*store_first=*/false);
  UplinkOptions options = Options();
  options.clock = &clock;
  options.backoff = BackoffPolicy{};
  options.jitter = [] { return 1.0; };
  Uplink uplink(options, outbox_.get());
  ASSERT_TRUE(uplink.Start().ok());
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  uplink.Stop();
  // Each drop came after a Welcome, so each wait is the first step again: 200 + 200 ms.
  EXPECT_EQ(clock.Monotonic(), absl::Milliseconds(400));
  EXPECT_EQ(gateway_.hellos(), 3);
}

TEST_F(UplinkTest, SendRatePacesRecordsByTheClock) {
  // Sleeping takes no real time: back-offs and pacing run at full speed while the clock adds up
  // exactly what they waited.
  SimulatedClock clock({.sleeps_advance = true});
  Fill(3);
  UplinkOptions options = Options();
  options.clock = &clock;
  options.send_rate = 4;  // records/s: one record per batch, 250 ms apart
  Uplink uplink(options, outbox_.get());
  ASSERT_TRUE(uplink.Start().ok());
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  uplink.Stop();
  EXPECT_THAT(gateway_.batch_sizes(), ElementsAre(1, 1, 1));
  EXPECT_EQ(clock.Monotonic(), absl::Milliseconds(500));
}

v1::TaskUpdate Progress(const std::string& task_id, uint32_t done) {
  v1::TaskUpdate update;
  update.set_task_id(task_id);
  update.mutable_progress()->set_runs_done(done);
  update.mutable_progress()->set_runs_total(4);
  return update;
}

std::string BriefUpdate(const v1::TaskUpdate& u) {
  if (u.has_accepted()) return absl::StrCat(u.task_id(), " accepted ", u.accepted().runs_total());
  if (u.has_progress()) return absl::StrCat(u.task_id(), " progress ", u.progress().runs_done());
  if (u.has_finished()) return absl::StrCat(u.task_id(), " finished ", u.finished().message());
  if (u.has_refused()) return absl::StrCat(u.task_id(), " refused ", u.refused().reason());
  return "empty";
}

TEST_F(UplinkTest, TaskUpdatesWaitForAStreamAndOnlyTheLatestProgressIsKept) {
  UplinkOptions options = Options();
  Uplink uplink(options, outbox_.get());
  // Before any stream: queued. The progress updates of task-1 coalesce; nothing else does.
  v1::TaskUpdate accepted;
  accepted.set_task_id("task-1");
  accepted.mutable_accepted()->set_runs_total(4);
  uplink.SendTaskUpdate(accepted);
  uplink.SendTaskUpdate(Progress("task-1", 1));
  uplink.SendTaskUpdate(Progress("task-2", 1));
  uplink.SendTaskUpdate(Progress("task-1", 2));
  v1::TaskUpdate finished;
  finished.set_task_id("task-1");
  finished.mutable_finished()->set_ok(true);
  finished.mutable_finished()->set_message("done");
  uplink.SendTaskUpdate(finished);
  EXPECT_EQ(uplink.pending_task_updates(), 4u);
  ASSERT_TRUE(uplink.Start().ok());
  // The gateway can see the last update before the uplink's writer has counted it: wait for both.
  ASSERT_TRUE(gateway_.WaitFor(
      [&] { return gateway_.task_updates().size() >= 4 && uplink.stats().task_updates_sent >= 4; }));
  std::vector<std::string> seen;
  for (const auto& u : gateway_.task_updates()) seen.push_back(BriefUpdate(u));
  EXPECT_THAT(seen, ElementsAre("task-1 accepted 4", "task-1 progress 2", "task-2 progress 1", "task-1 finished done"));
  EXPECT_EQ(uplink.pending_task_updates(), 0u);
  EXPECT_EQ(uplink.stats().task_updates_sent, 4u);
  uplink.Stop();
}

TEST_F(UplinkTest, TaskUpdatesMadeWhileTheStreamIsBrokenGoOnTheNextStream) {
  SimulatedClock clock;
  UplinkOptions options = Options();
  options.clock = &clock;
  options.backoff = BackoffPolicy{absl::Seconds(5), absl::Seconds(5)};
  options.jitter = [] { return 1.0; };  // the full 5 s
  Uplink uplink(options, outbox_.get());
  ASSERT_TRUE(uplink.Start().ok());
  ASSERT_TRUE(gateway_.WaitFor([&] { return uplink.stats().connected; }));
  gateway_.DropCurrentStream();
  // Backing off, by the simulated clock: no stream to write on.
  ASSERT_TRUE(gateway_.WaitFor([&] { return !uplink.stats().connected && clock.sleepers() > 0; }));
  v1::TaskUpdate finished;
  finished.set_task_id("task-1");
  finished.mutable_finished()->set_message("done");
  uplink.SendTaskUpdate(finished);
  EXPECT_EQ(uplink.pending_task_updates(), 1u);
  EXPECT_TRUE(gateway_.task_updates().empty());
  clock.Advance(absl::Seconds(5));
  ASSERT_TRUE(
      gateway_.WaitFor([&] { return gateway_.task_updates().size() == 1 && uplink.pending_task_updates() == 0; }));
  EXPECT_EQ(uplink.stats().sessions, 2u);
  EXPECT_EQ(BriefUpdate(gateway_.task_updates()[0]), "task-1 finished done");
  EXPECT_EQ(uplink.pending_task_updates(), 0u);
  uplink.Stop();
}

TEST_F(UplinkTest, AssignAndCancelFromTheCoordinatorReachTheCallbacks) {
  std::mutex mu;
  std::vector<std::string> got;
  UplinkOptions options = Options();
  options.on_assign_task = [&](const v1::TaskAssignment& a) {
    std::lock_guard<std::mutex> l(mu);
    got.push_back(absl::StrCat("assign ", a.task_id(), " ", a.series_id(), " ", a.attempt()));
  };
  options.on_cancel_task = [&](const v1::TaskCancel& c) {
    std::lock_guard<std::mutex> l(mu);
    got.push_back(absl::StrCat("cancel ", c.task_id(), " ", c.reason()));
  };
  Uplink uplink(options, outbox_.get());
  ASSERT_TRUE(uplink.Start().ok());
  ASSERT_TRUE(gateway_.WaitFor([&] { return uplink.stats().connected; }));
  v1::CoordinatorMessage assign;
  assign.mutable_assign_task()->set_task_id("task-1");
  assign.mutable_assign_task()->set_series_id("series-1");
  assign.mutable_assign_task()->set_attempt(1);
  ASSERT_TRUE(gateway_.SendToAgent(assign));
  v1::CoordinatorMessage cancel;
  cancel.mutable_cancel_task()->set_task_id("task-1");
  cancel.mutable_cancel_task()->set_reason("operator");
  ASSERT_TRUE(gateway_.SendToAgent(cancel));
  ASSERT_TRUE(gateway_.WaitFor([&] {
    std::lock_guard<std::mutex> l(mu);
    return got.size() == 2;
  }));
  uplink.Stop();
  EXPECT_THAT(got, ElementsAre("assign task-1 series-1 1", "cancel task-1 operator"));
}

// A series' finished conditions: the base ones with what its backend reported.
v1::MachineConditions SeriesConditions(const std::string& fingerprint, const std::string& devices) {
  v1::MachineConditions c;
  c.set_hostname("gpu-01");
  (*c.mutable_backend_versions())["llama-server"] = "b4000";
  (*c.mutable_backend_attributes())["llama-server.devices"] = devices;
  c.set_fingerprint(fingerprint);
  return c;
}

TEST_F(UplinkTest, AnnouncedConditionsGoAsALaterHelloBeforeTheRecordsAndAgainOnEveryNewStream) {
  Uplink uplink(Options(), outbox_.get());
  ASSERT_TRUE(uplink.Start().ok());
  ASSERT_TRUE(gateway_.WaitFor([&] { return uplink.stats().connected; }));
  const v1::MachineConditions series = SeriesConditions("fp-2", "CUDA0 (NVIDIA H200)");
  uplink.AnnounceConditions(series);
  Fill(3);
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  EXPECT_THAT(gateway_.events(), ElementsAre("stream 1 hello fp-1", "stream 1 hello fp-2", "stream 1 records 3"));
  const std::vector<v1::Hello> hellos = gateway_.all_hellos();
  ASSERT_EQ(hellos.size(), 2u);
  EXPECT_EQ(hellos[1].agent_id(), kAgentId);
  EXPECT_EQ(hellos[1].agent_version(), kVersion);
  EXPECT_EQ(hellos[1].api_revision(), kApiRevision);
  EXPECT_EQ(hellos[1].conditions().SerializeAsString(), series.SerializeAsString());
  // The Welcome that answered it changed nothing: same stream, still connected.
  UplinkStats stats = uplink.stats();
  EXPECT_EQ(stats.sessions, 1u);
  EXPECT_TRUE(stats.connected);
  EXPECT_EQ(stats.conditions_announced, 1u);

  // A new stream opens with the base conditions, then announces the series' ones again.
  gateway_.DropCurrentStream();
  ASSERT_TRUE(gateway_.WaitFor([&] { return gateway_.events().size() == 5; }));
  EXPECT_THAT(gateway_.events(), ElementsAre("stream 1 hello fp-1", "stream 1 hello fp-2", "stream 1 records 3",
                                             "stream 2 hello fp-1", "stream 2 hello fp-2"));
  EXPECT_EQ(gateway_.all_hellos()[3].conditions().SerializeAsString(), series.SerializeAsString());

  // fp-2 again after fp-3 is the latest again, so it is written again; the latest once more is
  // not (the records after it show that nothing else was written).
  uplink.AnnounceConditions(SeriesConditions("fp-3", "CUDA1 (NVIDIA H200)"));
  uplink.AnnounceConditions(series);
  uplink.AnnounceConditions(series);
  Fill(1);
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  uplink.Stop();
  EXPECT_THAT(gateway_.events(),
              ElementsAre("stream 1 hello fp-1", "stream 1 hello fp-2", "stream 1 records 3", "stream 2 hello fp-1",
                          "stream 2 hello fp-2", "stream 2 hello fp-3", "stream 2 hello fp-2", "stream 2 records 1"));
  stats = uplink.stats();
  EXPECT_EQ(stats.sessions, 2u);
  EXPECT_EQ(stats.conditions_announced, 4u);
  EXPECT_EQ(stats.coordinator_version, "fake");
}

TEST_F(UplinkTest, ConditionsAnnouncedBeforeStartAreKeptToTheLastSixteen) {
  Uplink uplink(Options(), outbox_.get());
  for (int i = 1; i <= 17; ++i) {
    uplink.AnnounceConditions(SeriesConditions(absl::StrCat("series-", i), absl::StrCat("CUDA", i)));
  }
  // No fingerprint: the uplink computes it, as the coordinator would.
  v1::MachineConditions unfingerprinted = SeriesConditions("", "CUDA18");
  uplink.AnnounceConditions(unfingerprinted);
  ASSERT_TRUE(uplink.Start().ok());
  ASSERT_TRUE(gateway_.WaitFor([&] { return uplink.stats().conditions_announced == 16; }));
  Fill(1);  // a barrier: nothing was written between the last Hello and these records
  ASSERT_TRUE(uplink.WaitUntilDrained(absl::Seconds(20)).ok());
  uplink.Stop();
  std::vector<std::string> expected = {"stream 1 hello fp-1"};
  for (int i = 3; i <= 17; ++i) expected.push_back(absl::StrCat("stream 1 hello series-", i));
  expected.push_back(absl::StrCat("stream 1 hello ", ConditionsFingerprint(unfingerprinted)));
  expected.push_back("stream 1 records 1");
  EXPECT_EQ(gateway_.events(), expected);
  EXPECT_EQ(uplink.stats().conditions_announced, 16u);
}

TEST(UplinkOptionsTest, BadOptionsAreRefusedAtStart) {
  ScopedTempDir tmp;
  auto outbox = Outbox::Open(Env::Default(), tmp.path());
  ASSERT_TRUE(outbox.ok());
  UplinkOptions options;
  options.agent_id = kAgentId;
  Uplink uplink(options, outbox->get());
  EXPECT_EQ(uplink.Start().message(), "uplink: no coordinator address");
}

}  // namespace
}  // namespace benchfleet::agent
