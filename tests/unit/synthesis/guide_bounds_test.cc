// Case 3 of issue 19: whatever is stored, the guide's time and memory grow with the number of
// runs, never with a value. A record with call_index 4294967295 next to one with 1 once made
// `benchfleet guide` grow to 5 GB in 40 s without finishing; NaN and infinite figures and
// inverted times were shown as a median "NaN" and a range "-∞ – ∞". The readers skip such
// records (listed under "Inputs skipped"), and the guide built from records given whole (what
// no reader checked) stays small and fast.
#include <chrono>
#include <cmath>
#include <future>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/proto_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "synthesis/guide.h"
#include "synthesis/readers/measurement_files.h"
#include "tests/support/subprocess.h"

namespace benchfleet::synthesis {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::RunRecord MakeRun(const std::string& id, uint32_t call, double value) {
  v1::RunRecord r;
  r.set_run_id(id);
  r.set_task("llama-chat");
  r.set_agent_id("gpu-box");
  r.set_backend("llama-server");
  r.set_mode("gpu");
  r.set_phase(v1::PHASE_WARM);
  r.set_call_index(call);
  r.set_repetition(1);
  r.mutable_start_time()->set_seconds(1772359200 + 10 * (call % 1000));
  r.mutable_end_time()->set_seconds(1772359202 + 10 * (call % 1000));
  r.mutable_wall_duration()->set_seconds(2);
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
  (*r.mutable_params())["class"] = "a100";
  auto* m = r.add_metrics();
  m->set_name("tokens_per_second");
  m->set_value(value);
  m->set_unit("tokens/s");
  m->set_headline(1);
  m->set_better(v1::BETTER_HIGHER);
  m->set_label("generation tokens/s");
  return r;
}

size_t TotalBytes(const std::map<std::string, std::string>& files) {
  size_t bytes = 0;
  for (const auto& [name, content] : files) bytes += content.size();
  return bytes;
}

// The guide of records no reader checked: one at call_index 4294967295 beside calls 1 to 3.
TEST(GuideBoundsTest, AHugeCallIndexBesideSmallOnesBuildsASmallGuideFast) {
  GuideInput input;
  for (uint32_t call = 1; call <= 3; ++call) input.records.push_back(MakeRun("run-" + std::to_string(call), call, 50));
  input.records.push_back(MakeRun("run-huge", 4294967295u, 51));
  const absl::Time start = absl::Now();
  const std::map<std::string, std::string> files = BuildGuideFiles(input, {Lang::kEn});
  const absl::Duration took = absl::Now() - start;
  EXPECT_LT(took, absl::Seconds(5));
  // The same guide as for four small call indexes, give or take the digits: bytes, not gigabytes.
  GuideInput small;
  for (uint32_t call = 1; call <= 4; ++call) small.records.push_back(MakeRun("run-" + std::to_string(call), call, 50));
  const size_t small_bytes = TotalBytes(BuildGuideFiles(small, {Lang::kEn}));
  EXPECT_LT(TotalBytes(files), 2 * small_bytes);
  ASSERT_EQ(files.count("chart-llama-chat.en.svg"), 1u);
  const std::string& chart = files.at("chart-llama-chat.en.svg");
  EXPECT_THAT(chart, HasSubstr(">4294967295</text>"));
  std::printf("guide of 4 runs, one at call_index 4294967295: %zu bytes in %s (4 small call indexes: %zu bytes)\n",
              TotalBytes(files), absl::FormatDuration(took).c_str(), small_bytes);
}

// A runs.jsonl as a coordinator or an old agent could have left it: each record past a bound is
// skipped with its line and reason, the others make the guide, and nothing shows NaN or ∞.
TEST(GuideBoundsTest, TheReadersSkipRecordsPastABoundAndTheGuideListsThem) {
  const std::string dir = testing::MakeTempDir("guide-bounds");
  const std::string file = dir + "/runs.jsonl";
  std::vector<v1::RunRecord> records;
  for (uint32_t call = 1; call <= 5; ++call) records.push_back(MakeRun("run-" + std::to_string(call), call, 50 + call));
  records.push_back(MakeRun("huge", 4294967295u, 51));                                       // line 6
  records.push_back(MakeRun("nan", 6, std::numeric_limits<double>::quiet_NaN()));            // line 7
  records.push_back(MakeRun("inf", 7, std::numeric_limits<double>::infinity()));             // line 8
  v1::RunRecord inverted = MakeRun("inverted", 8, 52);                                      // line 9
  inverted.mutable_end_time()->set_seconds(inverted.start_time().seconds() - 30);
  inverted.clear_wall_duration();
  records.push_back(inverted);
  v1::RunRecord negative = MakeRun("negative", 9, 52);                                      // line 10
  negative.mutable_wall_duration()->set_seconds(-5);
  records.push_back(negative);
  {
    std::ofstream out(file);
    for (const v1::RunRecord& r : records) {
      absl::StatusOr<std::string> line = MessageToJson(r);
      ASSERT_TRUE(line.ok()) << line.status();
      out << *line << "\n";
    }
  }
  auto read = ReadMeasurementFiles(Env::Default(), {file});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->records.size(), 5u);
  std::vector<std::string> skipped;
  for (const Skipped& s : read->skipped) skipped.push_back(s.path + ":" + std::to_string(s.line) + ": " + s.reason);
  EXPECT_THAT(skipped,
              ::testing::ElementsAre(
                  file + ":6: outside the record bounds: call_index 4294967295 is over the maximum of 100000",
                  file + ":7: outside the record bounds: metric \"tokens_per_second\" is nan, not a finite number",
                  file + ":8: outside the record bounds: metric \"tokens_per_second\" is inf, not a finite number",
                  file + ":9: outside the record bounds: end_time is 30 s before start_time",
                  file + ":10: outside the record bounds: wall_duration -5 s is negative"));

  GuideInput input;
  input.records = std::move(read->records);
  input.skipped = std::move(read->skipped);
  const std::map<std::string, std::string> files = BuildGuideFiles(input, {Lang::kEn});
  const std::string& guide = files.at("guide.en.md");
  EXPECT_THAT(guide, HasSubstr("- `" + file + ":6: outside the record bounds: call_index 4294967295 is over the "
                               "maximum of 100000`"));
  EXPECT_THAT(guide, HasSubstr("5 inputs skipped"));
  EXPECT_THAT(guide, Not(HasSubstr("NaN")));
  EXPECT_THAT(guide, Not(HasSubstr("∞")));
  EXPECT_THAT(guide, Not(HasSubstr("4294967295`)")));
}

// Whatever the records given whole hold (no reader checked them), the guide of 8 runs stays the
// size of the guide of 8 ordinary runs, and is built at once: non-finite and extreme figures,
// durations, memory and matrix values, call indexes and start times far apart.
TEST(GuideBoundsTest, NoValueMakesTheGuideOfAFewRunsLargeOrSlow) {
  auto base = [] {
    std::vector<v1::RunRecord> r;
    for (uint32_t k = 1; k <= 8; ++k) r.push_back(MakeRun("a" + std::to_string(k), k, 50));
    return r;
  };
  GuideInput plain;
  plain.records = base();
  const size_t plain_bytes = TotalBytes(BuildGuideFiles(plain, {Lang::kEn}));
  std::vector<std::pair<std::string, std::vector<v1::RunRecord>>> cases;
  for (double v : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), 1e308, 1e-300}) {
    auto r = base();
    r[6].mutable_metrics(0)->set_value(v);
    r[7].mutable_metrics(0)->set_value(-v);
    cases.emplace_back("figure " + std::to_string(v), r);
  }
  for (int64_t w : {int64_t{-5}, int64_t{4294967295}, int64_t{315576000000}}) {
    auto r = base();
    r[2].mutable_wall_duration()->set_seconds(w);
    cases.emplace_back("wall " + std::to_string(w), r);
  }
  {
    auto r = base();
    r[1].add_memory()->set_kind(v1::MEMORY_KIND_DEVICE_USED);
    r[1].mutable_memory(0)->set_bytes(~uint64_t{0});
    r[2].add_memory()->set_kind(v1::MEMORY_KIND_DEVICE_USED);
    r[2].mutable_memory(0)->set_bytes(1);
    cases.emplace_back("memory", r);
  }
  {
    auto r = base();
    (*r[0].mutable_matrix())["concurrency"] = "1";
    (*r[1].mutable_matrix())["concurrency"] = "4294967295";
    (*r[2].mutable_matrix())["concurrency"] = "1e308";
    cases.emplace_back("matrix", r);
  }
  {
    auto r = base();
    r[7].set_call_index(4294967295u);
    r[7].mutable_start_time()->set_seconds(1772359200 + 4294967295ll);
    r[7].set_repetition(4294967295u);
    cases.emplace_back("call index, start and repetition", r);
  }
  for (auto& [name, records] : cases) {
    GuideInput input;
    input.records = std::move(records);
    const absl::Time start = absl::Now();
    const size_t bytes = TotalBytes(BuildGuideFiles(input, {Lang::kEn}));
    EXPECT_LT(absl::Now() - start, absl::Seconds(5)) << name;
    EXPECT_LT(bytes, 2 * plain_bytes) << name;
  }
}

}  // namespace
}  // namespace benchfleet::synthesis
