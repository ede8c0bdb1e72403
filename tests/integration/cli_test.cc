// The `benchfleet` command against a coordinator process: runs and agents, each format, and the
// label filter that tells two machines apart.
#include <fstream>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/integration/fleet.h"
#include "tests/support/pg_test_db.h"

namespace benchfleet::testing {
namespace {

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!db_.available()) GTEST_SKIP() << "BENCHFLEET_TEST_DATABASE_URL is not set";
    work_ = MakeTempDir("cli");
    coordinator_ = std::make_unique<CoordinatorProcess>(db_.url(), work_);
    ASSERT_TRUE(coordinator_->Start()) << coordinator_->log();
    Simulate("a100", 12);
    Simulate("m1pro", 6);
  }

  // Runs a SIMULATED series of n runs on an agent labelled class=cls, sent to the coordinator.
  void Simulate(const std::string& cls, int n) {
    ASSERT_EQ(SimulateSeries(work_, cls, n, coordinator_->address()), 0) << ReadAll(work_ + "/sim-" + cls + ".log");
  }

  // Runs `benchfleet ARGS... --coordinator ADDR`; returns its exit code, output in *out.
  int Cli(std::vector<std::string> args, std::string* out) {
    const std::string log = work_ + "/cli-" + std::to_string(++calls_) + ".log";
    args.insert(args.begin(), BinaryPath("benchfleet"));
    args.push_back("--coordinator");
    args.push_back(coordinator_->address());
    Subprocess p(args, {}, log);
    int rc = p.Wait();
    *out = ReadAll(log);
    return rc;
  }

  PgTestDb db_;
  std::string work_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  int calls_ = 0;
};

TEST_F(CliTest, RunsAsCsvHaveOneRowPerRun) {
  std::string out;
  ASSERT_EQ(Cli({"runs", "--format", "csv"}, &out), 0) << out;
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 19u) << out;  // header + 18 runs
  EXPECT_EQ(lines[0].rfind("run_id,series_id,task_id,agent_id,", 0), 0u);
}

TEST_F(CliTest, LabelFilterSelectsOneMachine) {
  std::string out;
  ASSERT_EQ(Cli({"runs", "--label", "class=m1pro", "--format", "json"}, &out), 0) << out;
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  EXPECT_EQ(lines.size(), 6u) << out;
}

TEST_F(CliTest, TableSaysSimulated) {
  std::string out;
  ASSERT_EQ(Cli({"runs"}, &out), 0) << out;
  EXPECT_NE(out.find("18 runs (18 SIMULATED)"), std::string::npos) << out;
}

TEST_F(CliTest, AgentsListsBothMachinesWithTheirRunCounts) {
  std::string out;
  ASSERT_EQ(Cli({"agents", "--format", "csv"}, &out), 0) << out;
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << out;
  EXPECT_NE(out.find("class=a100,12,"), std::string::npos) << out;
  EXPECT_NE(out.find("class=m1pro,6,"), std::string::npos) << out;
}

TEST_F(CliTest, BadInputExitsWithUsageError) {
  std::string out;
  EXPECT_EQ(Cli({"runs", "--label", "novalue"}, &out), 2);
  EXPECT_NE(out.find("label \"novalue\" is not of the form key=value"), std::string::npos) << out;
  EXPECT_EQ(Cli({"runs", "--format", "xml"}, &out), 2);
}

}  // namespace
}  // namespace benchfleet::testing
