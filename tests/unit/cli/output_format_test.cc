#include "cli/output_format.h"

#include "gtest/gtest.h"

namespace benchfleet::cli {
namespace {

TEST(OutputFormatTest, ParsesTheThreeFormats) {
  EXPECT_EQ(*ParseFormat("table"), Format::kTable);
  EXPECT_EQ(*ParseFormat("csv"), Format::kCsv);
  EXPECT_EQ(*ParseFormat("json"), Format::kJson);
  EXPECT_EQ(ParseFormat("xml").status(),
            absl::InvalidArgumentError("unknown format \"xml\": use table, csv or json"));
}

TEST(OutputFormatTest, AlignsColumns) {
  EXPECT_EQ(AlignColumns({{"A", "BB"}, {"ccc", "d"}}), "A    BB\nccc  d\n");
}

TEST(OutputFormatTest, TableListsEveryRunAndCountsSimulatedOnes) {
  v1::RunRecord r;
  r.set_run_id("12345678-aaaa-4bbb-8ccc-dddddddddddd");
  r.set_agent_id("abcdef12-0000-4000-8000-000000000000");
  r.set_task("qwen");
  r.set_mode("gpu");
  r.set_phase(v1::PHASE_WARM);
  r.set_call_index(3);
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  auto* m = r.add_metrics();
  m->set_name("tokens_per_second");
  m->set_value(28.2);
  m->set_unit("tokens/s");
  r.add_flags()->set_code("THROUGHPUT_DROP");
  r.set_simulated(true);
  auto text = FormatRuns({r}, Format::kTable);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text,
            "RUN       AGENT     TASK  MODE  PHASE  CALL  STATUS  WALL_S  METRICS                    "
            "      FLAGS            SOURCE\n"
            "12345678  abcdef12  qwen  gpu   warm   3     ok              tokens_per_second=28.2 "
            "tokens/s  THROUGHPUT_DROP  SIMULATED\n"
            "1 runs (1 SIMULATED)\n");
}

TEST(OutputFormatTest, JsonIsOneRecordPerLineInTheProtoMapping) {
  v1::RunRecord r;
  r.set_run_id("id");
  r.set_call_index(2);
  auto text = FormatRuns({r, r}, Format::kJson);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "{\"run_id\":\"id\",\"call_index\":2}\n{\"run_id\":\"id\",\"call_index\":2}\n");
}

}  // namespace
}  // namespace benchfleet::cli

namespace benchfleet::cli {
namespace {

TEST(OutputFormatTest, TableShowsRatesFirstAndCountsTheRest) {
  v1::RunRecord r;
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  for (const auto& [name, unit, value] : std::vector<std::tuple<std::string, std::string, double>>{
           {"prompt_n", "tokens", 11},
           {"prompt_per_second", "tokens/s", 1051},
           {"predicted_n", "tokens", 16},
           {"predicted_per_second", "tokens/s", 52.9},
           {"predicted_seconds", "s", 0.3}}) {
    auto* m = r.add_metrics();
    m->set_name(name);
    m->set_unit(unit);
    m->set_value(value);
  }
  auto text = FormatRuns({r}, Format::kTable);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("prompt_per_second=1051 tokens/s, predicted_per_second=52.9 tokens/s, "
                       "prompt_n=11 tokens, +2 more"),
            std::string::npos)
      << *text;
}

}  // namespace
}  // namespace benchfleet::cli
