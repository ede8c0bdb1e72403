#include "agent/simulate/simulated_series.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "common/series_folder.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using testing::ScopedTempDir;

double Metric(const v1::RunRecord& r, const std::string& name) {
  for (const auto& m : r.metrics()) {
    if (m.name() == name) return m.value();
  }
  return -1;
}

SimulatedSeriesOptions Options(int runs) {
  SimulatedSeriesOptions options;
  options.runs = runs;
  options.task_id = "task-1";
  options.agent_id = "agent-1";
  options.conditions_fingerprint = "fp";
  options.end_time = absl::FromUnixSeconds(1767225600);
  return options;
}

TEST(SimulatedSeriesTest, TwelveRunsAreOneColdAndFiveWarmPerMode) {
  const auto records = GenerateSimulatedSeries(Options(12));
  ASSERT_EQ(records.size(), 12u);
  std::set<std::string> run_ids;
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    EXPECT_EQ(r.mode(), i < 6 ? "gpu" : "cpu");
    EXPECT_EQ(r.phase(), i % 6 == 0 ? v1::PHASE_COLD : v1::PHASE_WARM);
    EXPECT_EQ(r.call_index(), i % 6 == 0 ? 1u : i % 6);
    EXPECT_TRUE(r.simulated());
    EXPECT_EQ(r.task(), "llama-qwen2.5-3b-q4km");
    EXPECT_EQ(r.backend(), "llama-server");
    EXPECT_EQ(r.series_id(), "simulated-llama-qwen2.5-3b-q4km");
    EXPECT_EQ(r.agent_id(), "agent-1");
    EXPECT_EQ(r.conditions_fingerprint(), "fp");
    EXPECT_EQ(r.status().code(), v1::RunStatus::CODE_OK);
    EXPECT_EQ(r.provenance().kind(), v1::Provenance::KIND_LIVE);
    EXPECT_EQ(r.metrics(0).unit(), "tokens/s");
    EXPECT_EQ(r.matrix().at("mode"), r.mode());
    run_ids.insert(r.run_id());
    const int64_t wall = r.wall_duration().seconds() * 1'000'000'000 + r.wall_duration().nanos();
    const int64_t span = (r.end_time().seconds() - r.start_time().seconds()) * 1'000'000'000 +
                         (r.end_time().nanos() - r.start_time().nanos());
    EXPECT_EQ(wall, span);
    if (i > 0) {
      EXPECT_GT(r.start_time().seconds() * 1e9 + r.start_time().nanos(),
                records[i - 1].end_time().seconds() * 1e9 + records[i - 1].end_time().nanos());
    }
  }
  EXPECT_EQ(run_ids.size(), 12u);
  EXPECT_EQ(records.back().end_time().seconds(), 1767225600);
  // The GPU collapse at the third warm call.
  EXPECT_DOUBLE_EQ(Metric(records[1], "tokens_per_second"), 52.9);
  EXPECT_DOUBLE_EQ(Metric(records[2], "tokens_per_second"), 52.6);
  EXPECT_DOUBLE_EQ(Metric(records[3], "tokens_per_second"), 30.0);
  EXPECT_DOUBLE_EQ(Metric(records[4], "tokens_per_second"), 28.2);
}

TEST(SimulatedSeriesTest, TenThousandRuns) {
  const auto records = GenerateSimulatedSeries(Options(10'000));
  ASSERT_EQ(records.size(), 10'000u);
  EXPECT_EQ(records[5000].mode(), "cpu");
  EXPECT_EQ(records[5000].phase(), v1::PHASE_COLD);
  EXPECT_EQ(records[9999].call_index(), 4999u);
}

TEST(SimulatedSeriesTest, BatchesWriteWhatSeriesFolderReadersRead) {
  ScopedTempDir tmp;
  const std::string dir = tmp.path() + "/series";
  v1::MachineConditions conditions;
  conditions.set_hostname("gpu-01");
  const auto first = GenerateSimulatedSeries(Options(4));
  const auto second = GenerateSimulatedSeries(Options(2));
  {
    auto writer = SeriesFolderWriter::Open(Env::Default(), dir, conditions);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->AddBatch(first).ok());
  }
  auto writer = SeriesFolderWriter::Open(Env::Default(), dir, conditions);
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->AddBatch(second).ok());

  auto read = ReadRecords(Env::Default(), dir);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 6u);
  EXPECT_EQ((*read)[0].record.run_id(), first[0].run_id());
  EXPECT_EQ((*read)[5].record.run_id(), second[1].run_id());
  EXPECT_EQ((*read)[5].line, 6u);
  auto csv = Env::Default()->ReadFile(dir + "/runs.csv");
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(std::count(csv->begin(), csv->end(), '\n'), 7);  // header + 6 rows
  EXPECT_TRUE(Env::Default()->FileExists(dir + "/conditions.json"));
}

}  // namespace
}  // namespace benchfleet::agent
