// The `benchfleet` command against a coordinator process: runs and agents, each format, the
// label filter that tells two machines apart, and each run named by its machine's hostname and
// class with its mode and its headline figures.
#include <algorithm>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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

  // Returns the agent labelled class=cls as `runs` names it, "HOSTNAME (CLS, SHORT_ID)", from
  // `benchfleet agents`; "" when it is not listed.
  std::string AgentName(const std::string& cls) {
    std::string out;
    if (Cli({"agents", "--format", "csv"}, &out) != 0) return "";
    for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
      // AGENT and HOSTNAME come first; a later cell may be quoted, so LABELS is found by value.
      std::vector<std::string> cells = absl::StrSplit(line, ',');
      if (cells.size() < 2 || std::find(cells.begin(), cells.end(), "class=" + cls) == cells.end()) continue;
      return absl::StrCat(cells[1], " (", cls, ", ", cells[0].substr(0, 8), ")");
    }
    return "";
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

TEST_F(CliTest, TableNamesTheMachineAndShowsTheModeAndTheHeadlineFigures) {
  const std::string a100 = AgentName("a100");
  ASSERT_FALSE(a100.empty());
  std::string out;
  ASSERT_EQ(Cli({"runs", "--label", "class=a100"}, &out), 0) << out;
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  // The runs (header, 12 runs, the count), then the spread of each setting (cli/run_spread.h).
  ASSERT_GE(lines.size(), 16u) << out;
  EXPECT_EQ(lines[13], "12 runs (12 SIMULATED)") << out;
  EXPECT_EQ(lines[14].rfind("main figure per setting over its accepted runs", 0), 0u) << out;
  EXPECT_EQ(lines[15].rfind("AGENT ", 0), 0u) << out;
  for (size_t i = 16; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].rfind(a100 + "  ", 0), 0u) << lines[i];
    EXPECT_NE(lines[i].find("  SIMULATED"), std::string::npos) << lines[i];
  }
  EXPECT_NE(lines[0].find("  AGENT  "), std::string::npos) << out;
  // The simulated series: a gpu mode, then a cpu mode, each starting with cold call 1. Its
  // declaration makes tokens/s the main figure and time to first token the second.
  const std::vector<std::string> cold = {lines[1], lines[7]};
  for (const std::string& line : cold) {
    EXPECT_NE(line.find(absl::StrCat("  ", a100, "  ")), std::string::npos) << line;
    EXPECT_NE(line.find("  cold   1  "), std::string::npos) << line;
  }
  EXPECT_NE(cold[0].find("  gpu   cold   1  "), std::string::npos) << cold[0];
  EXPECT_NE(cold[0].find("  51.8 tokens/s, time to first token 2.4 s  "), std::string::npos) << cold[0];
  EXPECT_NE(cold[1].find("  cpu   cold   1  "), std::string::npos) << cold[1];
  EXPECT_NE(cold[1].find("  9.1 tokens/s, time to first token 6.8 s  "), std::string::npos) << cold[1];
}

TEST_F(CliTest, JsonAndCsvCarryTheMachineAndTheHeadlineFigures) {
  const std::string m1pro = AgentName("m1pro");
  ASSERT_FALSE(m1pro.empty());
  const std::string hostname = m1pro.substr(0, m1pro.find(" ("));
  std::string out;
  ASSERT_EQ(Cli({"runs", "--label", "class=m1pro", "--format", "json"}, &out), 0) << out;
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 6u) << out;
  EXPECT_NE(lines[0].find("\"mode\":\"gpu\""), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find(absl::StrCat("\"agent\":{\"hostname\":\"", hostname, "\",\"class\":\"m1pro\",\"name\":\"",
                                       m1pro, "\"}")),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("\"headline_figures\":[{\"name\":\"tokens_per_second\",\"label\":\"tokens/s\","
                          "\"value\":51.8,\"unit\":\"tokens/s\",\"text\":\"51.8 tokens/s\"},"),
            std::string::npos)
      << lines[0];

  ASSERT_EQ(Cli({"runs", "--label", "class=m1pro", "--format", "csv"}, &out), 0) << out;
  lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 7u) << out;
  EXPECT_TRUE(absl::EndsWith(lines[0], ",agent_hostname,agent_class,headline_figures")) << lines[0];
  EXPECT_TRUE(
      absl::EndsWith(lines[1], absl::StrCat(",", hostname, ",m1pro,\"51.8 tokens/s, time to first token 2.4 s\"")))
      << lines[1];
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
