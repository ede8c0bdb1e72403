#include "common/series_folder.h"

#include "absl/strings/str_split.h"
#include "common/proto_json.h"
#include "gtest/gtest.h"
#include "tests/support/subprocess.h"

namespace benchfleet {
namespace {

v1::RunRecord Record(const std::string& id, int call) {
  v1::RunRecord r;
  r.set_run_id(id);
  r.set_agent_id("a1");
  r.set_phase(v1::PHASE_COLD);
  r.set_call_index(call);
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  return r;
}

TEST(SeriesFolderTest, WritesThreeFilesAndReadsRecordsBackWithLines) {
  Env* env = Env::Default();
  std::string dir = testing::MakeTempDir("series") + "/s1";
  v1::MachineConditions conditions;
  conditions.set_hostname("h1");
  {
    auto writer = SeriesFolderWriter::Open(env, dir, conditions);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Add(Record("11111111-1111-4111-8111-111111111111", 1)).ok());
    ASSERT_TRUE((*writer)->Add(Record("22222222-2222-4222-8222-222222222222", 2)).ok());
  }
  v1::MachineConditions read_back;
  ASSERT_TRUE(JsonToMessage(*env->ReadFile(dir + "/conditions.json"), &read_back).ok());
  EXPECT_EQ(read_back.hostname(), "h1");

  std::vector<std::string> csv_lines =
      absl::StrSplit(*env->ReadFile(dir + "/runs.csv"), '\n', absl::SkipEmpty());
  EXPECT_EQ(csv_lines.size(), 3u);  // header + 2 runs

  auto records = ReadRecords(env, dir);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[1].record.run_id(), "22222222-2222-4222-8222-222222222222");
  EXPECT_EQ((*records)[1].file, dir + "/runs.jsonl");
  EXPECT_EQ((*records)[1].line, 2u);

  // Reopening appends: the CSV keeps every run.
  auto writer = SeriesFolderWriter::Open(env, dir, conditions);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Add(Record("33333333-3333-4333-8333-333333333333", 3)).ok());
  csv_lines = absl::StrSplit(*env->ReadFile(dir + "/runs.csv"), '\n', absl::SkipEmpty());
  EXPECT_EQ(csv_lines.size(), 4u);
  EXPECT_EQ(ReadRecords(env, dir)->size(), 3u);
}

TEST(SeriesFolderTest, ABadLineFailsTheReadWithItsPlace) {
  Env* env = Env::Default();
  std::string dir = testing::MakeTempDir("series");
  std::string file = dir + "/runs.jsonl";
  ASSERT_TRUE(env->WriteFileAtomically(file, "{\"run_id\":\"x\"}\n{not json}\n").ok());
  auto records = ReadRecords(env, file);
  EXPECT_EQ(records.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(records.status().message()).rfind(file + ":2: ", 0), 0u)
      << records.status();
}

TEST(SeriesFolderTest, AFolderWithoutRunsIsNotASeries) {
  std::string dir = testing::MakeTempDir("series");
  auto records = ReadRecords(Env::Default(), dir);
  EXPECT_EQ(records.status(),
            absl::NotFoundError(dir + " is not a series folder: it has no runs.jsonl"));
}

}  // namespace
}  // namespace benchfleet
