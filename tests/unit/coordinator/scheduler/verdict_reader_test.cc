// The regression check reaches the guide's "Regression checks": the database reader
// (synthesis/readers) reads the newest stored verdict of each agent, task, mode, phase and matrix
// point, and the guide prints it in one line with its test, p-value, level, threshold and the
// baseline's runs (a count source naming them in sources.csv).
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "cli/guide_input.h"
#include "common/clock.h"
#include "common/conditions_fingerprint.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/server.h"
#include "tests/unit/coordinator/scheduler/regression_scenario.h"
#include "coordinator/store/migrator.h"
#include "coordinator/store/pg_fleet_store.h"
#include "coordinator/store/pg_run_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "synthesis/guide.h"
#include "synthesis/readers/database_reader.h"
#include "tests/support/pg_test_db.h"
#include "tests/unit/coordinator/test_records.h"

namespace benchfleet::coordinator {
namespace {

using ::testing::HasSubstr;

TEST(VerdictReaderTest, TheGuideReaderReadsTheNewestVerdictOfEachPoint) {
  testing::PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  ASSERT_TRUE(Migrate(db.url()).ok());
  const std::vector<v1::RunRecord> all = StoreARegression(db.url());
  ASSERT_FALSE(::testing::Test::HasFailure());

  synthesis::RunRows rows;
  absl::StatusOr<synthesis::ReadResult> read = synthesis::ReadRecordsFromDatabase(db.url(), {}, &rows);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->skipped.size(), 0u);
  // Three calls checked, one point: only the newest call's verdict, the REGRESSION.
  ASSERT_EQ(read->verdicts.size(), 1u);
  const synthesis::StoredVerdict& stored = read->verdicts[0];
  EXPECT_EQ(stored.agent_id, testing::kAgentId);
  EXPECT_EQ(stored.task, "chat-7b");
  EXPECT_EQ(stored.conditions_fingerprint, "fp-1");
  const v1::RegressionVerdict& v = stored.verdict;
  EXPECT_EQ(v.run_id(), all[7].run_id());
  EXPECT_EQ(v.kind(), v1::RegressionVerdict::KIND_REGRESSION);
  EXPECT_EQ(v.test(), "Mann-Whitney U, two-sided, exact");
  // Exact two-sided Mann-Whitney p of 3 runs wholly below 5: 2 / C(8, 3) = 1 / 28.
  EXPECT_NEAR(v.p_value(), 1.0 / 28, 1e-12);
  EXPECT_EQ(v.level(), 0.05);
  EXPECT_EQ(v.threshold(), 0.10);
  EXPECT_EQ(v.sample_median(), 40);
  EXPECT_EQ(v.baseline_median(), 51);
  EXPECT_EQ(v.mode(), "gpu");
  EXPECT_EQ(v.phase(), v1::PHASE_WARM);
  ASSERT_EQ(v.sample_run_ids_size(), 3);
  EXPECT_EQ(v.sample_run_ids(0), all[5].run_id());
  ASSERT_EQ(v.baseline_run_ids_size(), 5);
  std::vector<std::string> baseline(v.baseline_run_ids().begin(), v.baseline_run_ids().end());
  std::vector<std::string> earlier;
  for (size_t i = 0; i < 5; ++i) earlier.push_back(all[i].run_id());
  EXPECT_THAT(baseline, ::testing::UnorderedElementsAreArray(earlier));

  // The filter of the runs is the verdicts' too.
  synthesis::RunRows other_rows;
  absl::StatusOr<synthesis::ReadResult> other =
      synthesis::ReadRecordsFromDatabase(db.url(), {.tasks = {"other-task"}, .since = std::nullopt}, &other_rows);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->verdicts.size(), 0u);
}

TEST(VerdictReaderTest, TheGuideOfTheDatabaseListsTheRegressionWithItsBaselineRuns) {
  testing::PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  ASSERT_TRUE(Migrate(db.url()).ok());
  const std::vector<v1::RunRecord> all = StoreARegression(db.url());
  ASSERT_FALSE(::testing::Test::HasFailure());

  synthesis::GuideInput input;
  absl::StatusOr<synthesis::ReadResult> read = synthesis::ReadRecordsFromDatabase(db.url(), {}, &input.rows);
  ASSERT_TRUE(read.ok()) << read.status();
  input.conditions = std::move(read->conditions);
  input.verdicts = std::move(read->verdicts);
  const std::map<std::string, std::string> files =
      synthesis::BuildGuideFiles(input, {synthesis::Lang::kEn, synthesis::Lang::kFr});
  const std::string& en = files.at("guide.en.md");
  EXPECT_THAT(en, HasSubstr("\n## Regression checks\n"));
  // The one line of the regression, its count sources, and the ids of the baseline's runs in
  // sources.csv.
  const size_t begin = en.find("\n- **Regression** — ");
  ASSERT_NE(begin, std::string::npos) << en;
  const std::string text = en.substr(begin + 1, en.find('\n', begin + 1) - begin - 1);
  std::smatch line;
  ASSERT_TRUE(std::regex_search(text, line, std::regex(" — runs: 3 \\[(S[0-9]+)\\] vs 5 \\[(S[0-9]+)\\] in the baseline \\(")))
      << text;
  EXPECT_THAT(text, HasSubstr(" — Mann-Whitney U, two-sided, exact: `p = 0.0357 < 0.05` — "));
  EXPECT_THAT(text, HasSubstr(" — output tokens/s median `40.0` vs `51.0` (`-21.6%`, threshold `10%`) — "));
  const std::string& csv = files.at("sources.csv");
  std::string baseline_row;
  for (size_t at = 0; at < csv.size();) {
    const size_t end = csv.find("\r\n", at);
    const std::string row = csv.substr(at, end - at);
    if (row.rfind(line[2].str() + ",count,", 0) == 0) baseline_row = row;
    at = end == std::string::npos ? csv.size() : end + 2;
  }
  for (size_t i = 0; i < 5; ++i) EXPECT_THAT(baseline_row, HasSubstr(all[i].run_id())) << i;
  EXPECT_THAT(files.at("guide.fr.md"), HasSubstr("\n## Contrôles de régression\n"));
  EXPECT_THAT(files.at("guide.fr.md"), HasSubstr(" — Mann-Whitney U, bilatéral, exact : `p = 0,0357 < 0,05` — "));
}

TEST(VerdictReaderTest, TheStoreAnswersTheAdminApiWithTheReadersQuery) {
  testing::PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  ASSERT_TRUE(Migrate(db.url()).ok());
  const std::vector<v1::RunRecord> all = StoreARegression(db.url());
  ASSERT_FALSE(::testing::Test::HasFailure());
  std::unique_ptr<RunStore> store = NewPgRunStore({db.url()});
  absl::StatusOr<v1::ListRegressionChecksResponse> checks = store->ListRegressionChecks({}, std::nullopt);
  ASSERT_TRUE(checks.ok()) << checks.status();
  ASSERT_EQ(checks->checks_size(), 1);
  EXPECT_EQ(checks->checks(0).verdict().run_id(), all[7].run_id());
  EXPECT_EQ(checks->checks(0).agent_id(), testing::kAgentId);
  EXPECT_EQ(checks->checks(0).task(), "chat-7b");
  // The filters: another task, or a start after every run, leave nothing.
  checks = store->ListRegressionChecks({"other-task"}, std::nullopt);
  ASSERT_TRUE(checks.ok()) << checks.status();
  EXPECT_EQ(checks->checks_size(), 0);
  checks = store->ListRegressionChecks({}, absl::FromUnixSeconds(4102444800));  // 2100-01-01
  ASSERT_TRUE(checks.ok()) << checks.status();
  EXPECT_EQ(checks->checks_size(), 0);
  checks = store->ListRegressionChecks({"chat-7b"}, absl::FromUnixSeconds(0));
  ASSERT_TRUE(checks.ok()) << checks.status();
  EXPECT_EQ(checks->checks_size(), 1);
}

// `benchfleet guide --coordinator` (Admin ListRuns, GetConditions, ListRegressionChecks) and
// `--database-url` (COPY and the same verdict query) write the same guide, regression checks
// included.
TEST(VerdictReaderTest, CoordinatorAndDatabaseGuidesListTheSameChecks) {
  testing::PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  ASSERT_TRUE(Migrate(db.url()).ok());
  StoreARegression(db.url());
  ASSERT_FALSE(::testing::Test::HasFailure());
  CoordinatorServerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.database_url = db.url();
  options.tick_interval = absl::ZeroDuration();
  CoordinatorServer server(options);
  ASSERT_TRUE(server.Start().ok());

  auto guide = [](const cli::GuideSource& source) {
    absl::StatusOr<synthesis::GuideInput> input = cli::LoadGuideInput(Env::Default(), source);
    EXPECT_TRUE(input.ok()) << input.status();
    if (!input.ok()) return std::map<std::string, std::string>{};
    EXPECT_EQ(input->verdicts.size(), 1u);
    return synthesis::BuildGuideFiles(*input, {synthesis::Lang::kEn, synthesis::Lang::kFr});
  };
  cli::GuideSource coordinator_source, database_source;
  coordinator_source.coordinator = server.address();
  database_source.database_url = db.url();
  const auto from_coordinator = guide(coordinator_source);
  const auto from_database = guide(database_source);
  server.Shutdown();
  ASSERT_FALSE(from_coordinator.empty());
  EXPECT_THAT(from_coordinator.at("guide.en.md"), HasSubstr("\n- **Regression** — "));
  for (const auto& [name, content] : from_coordinator) {
    EXPECT_TRUE(content == from_database.at(name)) << name << " differs";
  }
}

}  // namespace
}  // namespace benchfleet::coordinator
