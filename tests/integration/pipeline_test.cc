// The core pipeline end to end, with real processes: agents stream records over gRPC on loopback
// to a coordinator that stores them in a real PostgreSQL. Each test checks the exact row count:
// every record stored, none twice, whatever is killed on the way.
#include <signal.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "benchfleet/v1/record.pb.h"
#include "common/hashing.h"
#include "common/proto_json.h"
#include "gtest/gtest.h"
#include "tests/integration/fleet.h"
#include "tests/support/pg_server.h"
#include "tests/support/pg_test_db.h"

namespace benchfleet::testing {
namespace {

constexpr absl::Duration kAgentTimeout = absl::Seconds(240);

int64_t Rows(const PgTestDb& db, const std::string& where = "true") {
  std::string v = db.QueryValue("SELECT count(*) FROM runs WHERE " + where);
  return v.empty() ? -1 : std::stoll(v);
}

int64_t RowsOrZero(const PgTestDb& db) {
  try {
    return Rows(db);
  } catch (const std::exception&) {
    return 0;  // the schema is not there yet
  }
}

// Waits for a child process, killing it when it outlives the timeout.
int WaitFor(Subprocess& p, absl::Duration timeout) {
  if (!PollUntil([&] { return !p.running(); }, timeout)) p.Signal(SIGKILL);
  return p.Wait();
}

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!db_.available()) GTEST_SKIP() << "BENCHFLEET_TEST_DATABASE_URL is not set";
    work_ = MakeTempDir("pipeline");
  }

  // Fills an agent's outbox with n SIMULATED records without sending them.
  void FillOutbox(const std::string& state_dir, int n) {
    auto p = StartAgent(work_, "fill", {"simulate", "--runs", std::to_string(n), "--out",
                                        work_ + "/series-fill", "--state-dir", state_dir});
    ASSERT_EQ(WaitFor(*p, kAgentTimeout), 0) << ReadAll(work_ + "/fill.log");
  }

  // Starts `serve` on a filled outbox; rate limits sending so a kill lands mid-stream.
  std::unique_ptr<Subprocess> Serve(const std::string& name, const std::string& state,
                                    const CoordinatorProcess& coordinator, bool limited,
                                    bool exit_when_drained) {
    std::vector<std::string> args = {"serve", "--state-dir", state, "--coordinator",
                                     coordinator.address()};
    if (limited) args.insert(args.end(), {"--send-rate", "2500"});
    if (exit_when_drained) args.push_back("--exit-when-drained");
    return StartAgent(work_, name, args);
  }

  PgTestDb db_;
  std::string work_;
};

TEST_F(PipelineTest, TenThousandRecordsFromThreeAgentsEndAsExactlyTenThousandRows) {
  CoordinatorProcess coordinator(db_.url(), work_);
  ASSERT_TRUE(coordinator.Start()) << coordinator.log();
  std::vector<std::unique_ptr<Subprocess>> agents;
  const int counts[3] = {3334, 3333, 3333};
  for (int i = 0; i < 3; ++i) {
    agents.push_back(StartAgent(
        work_, absl::StrCat("agent", i),
        {"simulate", "--runs", std::to_string(counts[i]), "--out", absl::StrCat(work_, "/series", i),
         "--state-dir", absl::StrCat(work_, "/state", i), "--coordinator", coordinator.address()}));
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(WaitFor(*agents[i], kAgentTimeout), 0) << ReadAll(absl::StrCat(work_, "/agent", i, ".log"));
  }
  EXPECT_EQ(Rows(db_), 10000);
  EXPECT_EQ(db_.QueryValue("SELECT count(DISTINCT agent_id) FROM runs"), "3");
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM runs WHERE NOT simulated"), "0");
  EXPECT_EQ(db_.QueryValue("SELECT count(*) FROM machines"), "3");
}

TEST_F(PipelineTest, CoordinatorKilledMidStreamLosesAndDuplicatesNothing) {
  const std::string state = work_ + "/state";
  FillOutbox(state, 10000);
  CoordinatorProcess coordinator(db_.url(), work_);
  ASSERT_TRUE(coordinator.Start()) << coordinator.log();
  auto agent = Serve("serve", state, coordinator, /*limited=*/true, /*exit_when_drained=*/true);
  ASSERT_TRUE(PollUntil([&] { return RowsOrZero(db_) >= 1000; }, absl::Seconds(60)));
  coordinator.Kill(SIGKILL);
  coordinator.Wait();
  const int64_t at_kill = Rows(db_);
  EXPECT_LT(at_kill, 10000) << "the kill came after the stream ended; the test proves nothing";
  ASSERT_TRUE(coordinator.Start()) << coordinator.log();
  EXPECT_EQ(WaitFor(*agent, kAgentTimeout), 0) << ReadAll(work_ + "/serve.log");
  EXPECT_EQ(Rows(db_), 10000);
}

TEST_F(PipelineTest, PostgresStoppedMidStreamLosesAndDuplicatesNothing) {
  PgServer server;
  ASSERT_TRUE(server.Start());
  const std::string state = work_ + "/state";
  FillOutbox(state, 10000);
  CoordinatorProcess coordinator(server.url(), work_);
  ASSERT_TRUE(coordinator.Start()) << coordinator.log();
  auto agent = Serve("serve", state, coordinator, /*limited=*/true, /*exit_when_drained=*/true);
  auto rows = [&] {
    std::string out;
    FILE* p = ::popen(("psql -At '" + server.url() + "' -c 'SELECT count(*) FROM runs' 2>/dev/null").c_str(), "r");
    char buf[64] = {0};
    if (p != nullptr) {
      if (std::fgets(buf, sizeof(buf), p) != nullptr) out = buf;
      ::pclose(p);
    }
    return out.empty() ? int64_t{0} : std::stoll(out);
  };
  ASSERT_TRUE(PollUntil([&] { return rows() >= 1000; }, absl::Seconds(60)));
  ASSERT_TRUE(server.Stop());
  absl::SleepFor(absl::Seconds(2));  // the stream goes on while the database is away
  EXPECT_TRUE(agent->running()) << ReadAll(work_ + "/serve.log");
  ASSERT_TRUE(server.Resume());
  EXPECT_EQ(WaitFor(*agent, kAgentTimeout), 0) << ReadAll(work_ + "/serve.log");
  EXPECT_EQ(rows(), 10000) << coordinator.log();
  coordinator.Kill(SIGTERM);
  EXPECT_EQ(coordinator.Wait(), 0) << coordinator.log();
}

TEST_F(PipelineTest, AgentKilledMidStreamAndRestartedLosesAndDuplicatesNothing) {
  const std::string state = work_ + "/state";
  FillOutbox(state, 10000);
  CoordinatorProcess coordinator(db_.url(), work_);
  ASSERT_TRUE(coordinator.Start()) << coordinator.log();
  auto agent = Serve("serve", state, coordinator, /*limited=*/true, /*exit_when_drained=*/false);
  ASSERT_TRUE(PollUntil([&] { return RowsOrZero(db_) >= 1000; }, absl::Seconds(60)));
  agent->Signal(SIGKILL);
  agent->Wait();
  EXPECT_LT(Rows(db_), 10000) << "the kill came after the stream ended; the test proves nothing";
  auto restarted = Serve("serve2", state, coordinator, /*limited=*/false, /*exit_when_drained=*/true);
  EXPECT_EQ(WaitFor(*restarted, kAgentTimeout), 0) << ReadAll(work_ + "/serve2.log");
  EXPECT_EQ(Rows(db_), 10000);
  EXPECT_EQ(db_.QueryValue("SELECT count(DISTINCT agent_id) FROM runs"), "1");
}

// Issue 19, case 8: agent.yaml lists two coordinators (one PostgreSQL); the first is killed
// mid-stream and the records keep flowing to the second within a few seconds, none lost or twice.
TEST_F(PipelineTest, AgentWithTwoCoordinatorsFailsOverWhenTheFirstIsKilled) {
  const std::string state = work_ + "/state";
  FillOutbox(state, 5000);
  ASSERT_EQ(::mkdir((work_ + "/a").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((work_ + "/b").c_str(), 0755), 0);
  CoordinatorProcess first(db_.url(), work_ + "/a");
  CoordinatorProcess second(db_.url(), work_ + "/b");
  ASSERT_TRUE(first.Start()) << first.log();
  ASSERT_TRUE(second.Start()) << second.log();
  const std::string config = work_ + "/agent.yaml";
  std::ofstream(config) << "coordinator:\n  - " << first.address() << "\n  - " << second.address() << "\n";
  auto agent = StartAgent(work_, "serve", {"serve", "--config", config, "--state-dir", state, "--send-rate", "1000",
                                           "--exit-when-drained"});
  ASSERT_TRUE(PollUntil([&] { return RowsOrZero(db_) >= 1000; }, absl::Seconds(60))) << ReadAll(work_ + "/serve.log");
  first.Kill(SIGKILL);
  first.Wait();
  const int64_t at_kill = Rows(db_);
  const absl::Time killed = absl::Now();
  EXPECT_LT(at_kill, 5000) << "the kill came after the stream ended; the test proves nothing";
  ASSERT_TRUE(PollUntil([&] { return Rows(db_) >= at_kill + 100; }, absl::Seconds(5)))
      << "no record reached the second coordinator within 5 s of the kill\n" << ReadAll(work_ + "/serve.log");
  const absl::Duration failover = absl::Now() - killed;
  EXPECT_LT(failover, absl::Seconds(5));
  EXPECT_EQ(WaitFor(*agent, kAgentTimeout), 0) << ReadAll(work_ + "/serve.log");
  EXPECT_EQ(Rows(db_), 5000);
  const std::string log = ReadAll(work_ + "/serve.log");
  EXPECT_NE(log.find("connected to coordinator " + first.address()), std::string::npos) << log;
  EXPECT_NE(log.find("connected to coordinator " + second.address()), std::string::npos) << log;
  std::printf("failover: 100 more records stored %s after the first coordinator's SIGKILL (%lld stored before)\n",
              absl::FormatDuration(failover).c_str(), static_cast<long long>(at_kill));
  second.Kill(SIGTERM);
  EXPECT_EQ(second.Wait(), 0) << second.log();
}

TEST_F(PipelineTest, ImportingASeriesFolderTwiceStoresItOnceWithFileAndLine) {
  CoordinatorProcess coordinator(db_.url(), work_);
  ASSERT_TRUE(coordinator.Start()) << coordinator.log();
  const std::string series = work_ + "/series";
  auto gen = StartAgent(work_, "gen", {"simulate", "--runs", "12", "--out", series, "--state-dir",
                                       work_ + "/state"});
  ASSERT_EQ(WaitFor(*gen, kAgentTimeout), 0) << ReadAll(work_ + "/gen.log");

  auto first = StartAgent(work_, "import1", {"import", series, "--coordinator", coordinator.address(),
                                             "--state-dir", work_ + "/state-import"});
  ASSERT_EQ(WaitFor(*first, kAgentTimeout), 0) << ReadAll(work_ + "/import1.log");
  EXPECT_NE(ReadAll(work_ + "/import1.log").find("imported 12 records: 12 stored, 0 already stored, 0 rejected"),
            std::string::npos)
      << ReadAll(work_ + "/import1.log");
  auto second = StartAgent(work_, "import2", {"import", series, "--coordinator", coordinator.address(),
                                              "--state-dir", work_ + "/state-import"});
  ASSERT_EQ(WaitFor(*second, kAgentTimeout), 0) << ReadAll(work_ + "/import2.log");
  EXPECT_NE(ReadAll(work_ + "/import2.log").find("imported 12 records: 0 stored, 12 already stored, 0 rejected"),
            std::string::npos)
      << ReadAll(work_ + "/import2.log");
  EXPECT_EQ(Rows(db_), 12);
  EXPECT_EQ(Rows(db_, "provenance = '" + series + "/runs.jsonl:7'"), 1);
}

// Issue 19, cases 3 and 4, through `benchfleet-agent import` to a real coordinator: records past a
// bound are refused one by one with their file:line and reason, a stored run_id re-sent with
// another figure is answered as a conflict (the stored row kept), and the rest is stored.
TEST_F(PipelineTest, ImportRefusesRecordsPastABoundAndConflictsAndStoresTheRest) {
  CoordinatorProcess coordinator(db_.url(), work_);
  ASSERT_TRUE(coordinator.Start()) << coordinator.log();
  const std::string series = work_ + "/series";
  auto gen = StartAgent(work_, "gen", {"simulate", "--runs", "4", "--out", series, "--state-dir", work_ + "/state"});
  ASSERT_EQ(WaitFor(*gen, kAgentTimeout), 0) << ReadAll(work_ + "/gen.log");
  auto first = StartAgent(work_, "import1", {"import", series, "--coordinator", coordinator.address(),
                                             "--state-dir", work_ + "/state-import"});
  ASSERT_EQ(WaitFor(*first, kAgentTimeout), 0) << ReadAll(work_ + "/import1.log");
  ASSERT_EQ(Rows(db_), 4);

  std::vector<v1::RunRecord> stored;
  for (absl::string_view line : absl::StrSplit(ReadAll(series + "/runs.jsonl"), '\n', absl::SkipEmpty())) {
    v1::RunRecord r;
    ASSERT_TRUE(JsonToMessage(std::string(line), &r).ok()) << line;
    stored.push_back(r);
  }
  ASSERT_EQ(stored.size(), 4u);
  ASSERT_GT(stored[0].metrics_size(), 0);
  v1::RunRecord changed = stored[0];  // line 1: a conflict
  changed.mutable_metrics(0)->set_value(changed.metrics(0).value() + 1000);
  v1::RunRecord huge = stored[2];  // line 3
  huge.set_run_id(NewUuid());
  huge.set_call_index(4294967295u);
  v1::RunRecord nan = stored[3];  // line 4
  nan.set_run_id(NewUuid());
  nan.mutable_metrics(0)->set_value(std::numeric_limits<double>::quiet_NaN());
  v1::RunRecord fresh = stored[3];  // line 5
  fresh.set_run_id(NewUuid());
  const std::string edited = work_ + "/edited.jsonl";
  {
    std::string text;
    for (const v1::RunRecord& r : {changed, stored[1], huge, nan, fresh}) {
      absl::StatusOr<std::string> json = MessageToJson(r);
      ASSERT_TRUE(json.ok()) << json.status();
      text += *json + "\n";
    }
    std::ofstream(edited) << text;
  }
  auto second = StartAgent(work_, "import2", {"import", edited, "--coordinator", coordinator.address(),
                                              "--state-dir", work_ + "/state-import"});
  EXPECT_EQ(WaitFor(*second, kAgentTimeout), 1) << ReadAll(work_ + "/import2.log");
  const std::string log = ReadAll(work_ + "/import2.log");
  EXPECT_NE(log.find("imported 5 records: 1 stored, 1 already stored, 3 rejected\n"), std::string::npos) << log;
  const std::string id = changed.run_id();
  EXPECT_NE(log.find("  rejected " + edited + ":1 (run " + id + "): conflict: run_id " + id +
                     " already stored with different content\n"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("  rejected " + edited + ":3 (run " + huge.run_id() +
                     "): call_index 4294967295 is over the maximum of 100000\n"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("  rejected " + edited + ":4 (run " + nan.run_id() + "): metric \"" + nan.metrics(0).name() +
                     "\" is nan, not a finite number\n"),
            std::string::npos)
      << log;
  EXPECT_EQ(Rows(db_), 5);
  EXPECT_EQ(Rows(db_, "run_id = '" + fresh.run_id() + "'"), 1);
  EXPECT_NE(coordinator.log().find("conflict: run_id " + id + " already stored with different content (not stored)"),
            std::string::npos)
      << coordinator.log();
  coordinator.Kill(SIGTERM);
  EXPECT_EQ(coordinator.Wait(), 0) << coordinator.log();
}

}  // namespace
}  // namespace benchfleet::testing
