// LoadGuideInput (cli/guide_input.h): one input only, the filters on files, the empty selection,
// the targets file, and database errors that never show the password. No outside service.
#include "cli/guide_input.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/env.h"
#include "common/series_folder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/subprocess.h"

namespace benchfleet::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;


v1::RunRecord Record(const std::string& run_id, const std::string& task, int64_t start_seconds,
                     const std::string& fingerprint) {
  v1::RunRecord r;
  r.set_run_id(run_id);
  r.set_series_id("s1");
  r.set_agent_id("agent-1");
  r.set_conditions_fingerprint(fingerprint);
  r.set_backend("llama-server");
  r.set_task(task);
  r.set_mode("gpu");
  r.set_phase(v1::PHASE_WARM);
  r.set_call_index(1);
  if (start_seconds > 0) r.mutable_start_time()->set_seconds(start_seconds);
  auto* m = r.add_metrics();
  m->set_name("tokens_per_second");
  m->set_unit("tokens/s");
  m->set_value(50);
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
  return r;
}

// The runs read, whole records first, then rows (--files reads runs.jsonl as rows).
std::vector<std::string> RunIds(const synthesis::GuideInput& input) {
  std::vector<std::string> ids;
  for (const auto& r : input.records) ids.push_back(r.run_id());
  for (const synthesis::RunRow* r : input.rows.rows) ids.emplace_back(r->run_id);
  return ids;
}

constexpr int64_t kNov29 = 1764374400;  // 2025-11-29T00:00:00Z
constexpr int64_t kNov30 = 1764460800;  // 2025-11-30T00:00:00Z

class GuideInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("guide_input_test");
    ASSERT_FALSE(dir_.empty());
    // Two series folders, each with its own conditions.
    WriteSeries("a", "fp-a", {Record("00000000-0000-4000-8000-000000000001", "llama", kNov29, "fp-a"),
                              Record("00000000-0000-4000-8000-000000000002", "llama", kNov30 + 60, "fp-a"),
                              Record("00000000-0000-4000-8000-000000000003", "llama", 0, "fp-a")});
    WriteSeries("b", "fp-b", {Record("00000000-0000-4000-8000-000000000004", "sd15", kNov30, "fp-b"),
                              Record("00000000-0000-4000-8000-000000000005", "sd15", kNov29, "fp-b")});
  }

  void WriteSeries(const std::string& name, const std::string& fingerprint, const std::vector<v1::RunRecord>& records) {
    v1::MachineConditions conditions;
    conditions.set_hostname("host-" + name);
    conditions.set_fingerprint(fingerprint);
    auto writer = SeriesFolderWriter::Open(Env::Default(), dir_ + "/" + name, conditions);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->AddBatch(records).ok());
  }

  GuideSource Files() const {
    GuideSource source;
    source.files = {dir_ + "/a", dir_ + "/b"};
    return source;
  }

  std::string dir_;
};

TEST_F(GuideInputTest, NoInputIsAUsageError) {
  auto input = LoadGuideInput(Env::Default(), GuideSource{});
  EXPECT_EQ(input.status(), absl::InvalidArgumentError(
                                "give the records to read: --files PATH..., --coordinator ADDR or "
                                "--database-url URL (or set BENCHFLEET_DATABASE_URL)"));
}

TEST_F(GuideInputTest, SeveralInputsAreAUsageError) {
  GuideSource source = Files();
  source.coordinator = "127.0.0.1:1";
  EXPECT_EQ(LoadGuideInput(Env::Default(), source).status(),
            absl::InvalidArgumentError(
                "give only one of --files, --coordinator and --database-url (got --files and --coordinator)"));
  source.database_url = "postgresql://u@127.0.0.1:1/db";
  EXPECT_EQ(LoadGuideInput(Env::Default(), source).status(),
            absl::InvalidArgumentError("give only one of --files, --coordinator and --database-url (got --files "
                                       "and --coordinator and --database-url)"));
  source.files.clear();
  EXPECT_EQ(LoadGuideInput(Env::Default(), source).status(),
            absl::InvalidArgumentError(
                "give only one of --files, --coordinator and --database-url (got --coordinator and --database-url)"));
}

TEST_F(GuideInputTest, TheEnvironmentsDatabaseIsNotReadWhenFilesAreGiven) {
  GuideSource source = Files();
  source.database_url_from_env = "postgresql://u@127.0.0.1:1/db";
  auto input = LoadGuideInput(Env::Default(), source);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_EQ(RunIds(*input).size(), 5u);
  EXPECT_EQ(input->conditions.size(), 2u);
}

TEST_F(GuideInputTest, TaskFilterKeepsThoseTasksAndTheirConditions) {
  GuideSource source = Files();
  source.tasks = {"sd15"};
  auto input = LoadGuideInput(Env::Default(), source);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_THAT(RunIds(*input),
              ElementsAre("00000000-0000-4000-8000-000000000004", "00000000-0000-4000-8000-000000000005"));
  ASSERT_EQ(input->conditions.size(), 1u);
  EXPECT_EQ(input->conditions.begin()->first, "fp-b");
  EXPECT_EQ(input->conditions.begin()->second.hostname(), "host-b");
}

TEST_F(GuideInputTest, SinceKeepsRunsStartedAtOrAfterAndDropsRunsWithoutAStart) {
  GuideSource source = Files();
  source.since = absl::FromUnixSeconds(kNov30);
  auto input = LoadGuideInput(Env::Default(), source);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_THAT(RunIds(*input),
              ElementsAre("00000000-0000-4000-8000-000000000002", "00000000-0000-4000-8000-000000000004"));
}

TEST_F(GuideInputTest, TasksAndSinceTogether) {
  GuideSource source = Files();
  source.tasks = {"llama", "sd15"};
  source.since = absl::FromUnixSeconds(kNov30 + 1);
  auto input = LoadGuideInput(Env::Default(), source);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_THAT(RunIds(*input), ElementsAre("00000000-0000-4000-8000-000000000002"));
  EXPECT_EQ(input->conditions.size(), 1u);
}

TEST_F(GuideInputTest, AnEmptySelectionNamesTheFilters) {
  GuideSource source = Files();
  source.files = {dir_ + "/b"};
  source.tasks = {"llama", "flux"};
  source.since = absl::FromUnixSeconds(kNov30);
  EXPECT_EQ(LoadGuideInput(Env::Default(), source).status(),
            absl::InvalidArgumentError("no records match --task llama --task flux --since 2025-11-30T00:00:00Z in "
                                       "--files " + dir_ + "/b (2 runs read)"));
}

TEST_F(GuideInputTest, AMissingTargetsFileIsAUsageErrorNamingIt) {
  GuideSource source = Files();
  source.targets_path = dir_ + "/missing.yaml";
  EXPECT_EQ(LoadGuideInput(Env::Default(), source).status(),
            absl::InvalidArgumentError("--targets: open " + dir_ + "/missing.yaml: No such file or directory"));
}

TEST_F(GuideInputTest, TheTargetsFileIsParsedBeforeTheRecordsAreRead) {
  GuideSource source = Files();
  source.targets_path = dir_ + "/targets.yaml";
  ASSERT_TRUE(Env::Default()
                  ->WriteFileAtomically(source.targets_path,
                                        "tasks:\n  - match: \"*\"\n    item: token\n    uses:\n"
                                        "      - name: interactive\n        min_items_per_second: 10\n")
                  .ok());
  auto input = LoadGuideInput(Env::Default(), source);
  ASSERT_TRUE(input.ok()) << input.status();
  ASSERT_TRUE(input->targets.has_value());
  EXPECT_EQ(input->targets->path, source.targets_path);
  ASSERT_EQ(input->targets->tasks.size(), 1u);
  EXPECT_EQ(input->targets->tasks[0].item, "token");

  // A wrong file fails even though the records could not be read either (ParseTargets' message).
  ASSERT_TRUE(Env::Default()->WriteFileAtomically(source.targets_path, "tasks: 3\n").ok());
  source.files = {dir_ + "/missing"};
  input = LoadGuideInput(Env::Default(), source);
  ASSERT_EQ(input.status().code(), absl::StatusCode::kInvalidArgument) << input.status();
  EXPECT_THAT(std::string(input.status().message()), ::testing::StartsWith(source.targets_path + ":"));
}

TEST_F(GuideInputTest, AnUnreachableDatabaseSaysSoWithoutThePassword) {
  GuideSource source;
  source.database_url = "postgresql://bench:s3cret-pw@127.0.0.1:1/benchfleet?connect_timeout=2";
  auto input = LoadGuideInput(Env::Default(), source);
  ASSERT_EQ(input.status().code(), absl::StatusCode::kUnavailable) << input.status();
  EXPECT_THAT(std::string(input.status().message()), HasSubstr("cannot reach the database while connecting: "));
  EXPECT_THAT(std::string(input.status().message()), Not(HasSubstr("s3cret-pw")));
}

TEST_F(GuideInputTest, AnUnreachableCoordinatorSaysSo) {
  GuideSource source;
  source.coordinator = "127.0.0.1:1";
  auto input = LoadGuideInput(Env::Default(), source);
  ASSERT_EQ(input.status().code(), absl::StatusCode::kUnavailable) << input.status();
  EXPECT_THAT(std::string(input.status().message()), HasSubstr("cannot reach the coordinator at 127.0.0.1:1"));
}

}  // namespace
}  // namespace benchfleet::cli
