// ReadMeasurementFiles with `as_rows` (what `benchfleet guide --files` reads with) gives the rows
// of exactly the records the messages' path gives, in the same order, with the same lines skipped
// for the same reasons, on one thread and on several.
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/env.h"
#include "common/proto_json.h"
#include "gtest/gtest.h"
#include "synthesis/analysis/run_row.h"
#include "synthesis/readers/measurement_files.h"
#include "tests/support/subprocess.h"

namespace benchfleet::synthesis {
namespace {

std::string Fixture(const std::string& name) { return std::string(BENCHFLEET_SOURCE_DIR) + "/tests/fixtures/" + name; }

// Both paths over `paths`: the same records as rows, the same skipped lines, the same conditions.
void ExpectSameAsMessages(const std::vector<std::string>& paths) {
  absl::StatusOr<ReadResult> messages = ReadMeasurementFiles(Env::Default(), paths);
  ASSERT_TRUE(messages.ok()) << messages.status();
  RunRows expected;
  AddRows(messages->records, &expected);

  RunRows rows;
  absl::StatusOr<ReadResult> read = ReadMeasurementFiles(Env::Default(), paths, &rows);
  ASSERT_TRUE(read.ok()) << read.status();
  // Other formats' records stay messages; runs.jsonl's became rows after them.
  RunRows got;
  AddRows(read->records, &got);
  got.rows.insert(got.rows.end(), rows.rows.begin(), rows.rows.end());
  ASSERT_EQ(got.rows.size(), expected.rows.size());
  std::vector<std::string> a, b;
  for (const RunRow* r : got.rows) a.push_back(DebugString(*r));
  for (const RunRow* r : expected.rows) b.push_back(DebugString(*r));
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);

  ASSERT_EQ(read->skipped.size(), messages->skipped.size());
  for (size_t i = 0; i < read->skipped.size(); ++i) {
    EXPECT_EQ(read->skipped[i].path, messages->skipped[i].path) << i;
    EXPECT_EQ(read->skipped[i].line, messages->skipped[i].line) << i;
    EXPECT_EQ(read->skipped[i].reason, messages->skipped[i].reason) << i;
  }
  ASSERT_EQ(read->conditions.size(), messages->conditions.size());
}

TEST(MeasurementRowsTest, TheGuidesSeriesFoldersGiveTheRowsOfTheirRecords) {
  ExpectSameAsMessages({Fixture("guide/series-a100"), Fixture("guide/series-m1pro"),
                        Fixture("guide/series-demo-sd15-txt2img"), Fixture("guide/series-demo-sd15-cache-trap"),
                        Fixture("llama-bench/llama-bench.jsonl")});
}

// 50,000 lines (more than one thread's share) with a malformed line, a record past a bound and a
// malformed conditions.json among them: the same rows in line order, the same lines skipped.
TEST(MeasurementRowsTest, ALargeFileReadOnSeveralThreadsKeepsItsLineOrderAndItsSkippedLines) {
  const std::string dir = testing::MakeTempDir("measurement-rows");
  {
    std::ofstream out(dir + "/runs.jsonl");
    for (int i = 1; i <= 50000; ++i) {
      if (i == 777) {
        out << "{not json\n";
        continue;
      }
      v1::RunRecord r;
      r.set_run_id(absl::StrCat("run-", i));
      r.set_backend("llama-server");
      r.set_task("chat");
      r.set_mode(i % 2 == 0 ? "gpu" : "cpu");
      r.set_phase(v1::PHASE_WARM);
      r.set_call_index(i == 31000 ? 4000000 : static_cast<uint32_t>(i % 100 + 1));  // one past kMaxCallIndex
      r.mutable_start_time()->set_seconds(1767225600 + i);
      r.mutable_wall_duration()->set_nanos(500000000);
      r.mutable_end_time()->set_seconds(1767225600 + i + 1);
      v1::Metric* m = r.add_metrics();
      m->set_name("predicted_per_second");
      m->set_value(50 + i % 7);
      m->set_unit("tokens/s");
      (*r.mutable_params())["system_fingerprint"] = i % 1000 == 0 ? "llama-server-sim" : "b4100";
      out << *MessageToJson(r) << "\n";
    }
    std::ofstream(dir + "/conditions.json") << "{\"hostname\": ";
  }
  RunRows rows;
  absl::StatusOr<ReadResult> read = ReadMeasurementFiles(Env::Default(), {dir}, &rows);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(rows.rows.size(), 49998u);
  EXPECT_EQ(rows.rows.front()->run_id, "run-1");
  EXPECT_EQ(rows.rows[775]->run_id, "run-776");
  EXPECT_EQ(rows.rows[776]->run_id, "run-778");
  EXPECT_EQ(rows.rows.back()->run_id, "run-50000");
  ASSERT_EQ(read->skipped.size(), 3u);
  EXPECT_EQ(read->skipped[0].line, 777u);
  EXPECT_EQ(read->skipped[1].line, 31000u);
  EXPECT_EQ(read->skipped[2].path, dir + "/conditions.json");
  ExpectSameAsMessages({dir});
}

}  // namespace
}  // namespace benchfleet::synthesis
