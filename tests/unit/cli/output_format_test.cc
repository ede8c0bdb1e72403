#include "cli/output_format.h"

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "common/proto_json.h"
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
            "RUN       AGENT     TASK  MODE  PHASE  CALL  STATUS  WALL_S  FIGURES                    "
            "      FLAGS            SOURCE\n"
            "12345678  abcdef12  qwen  gpu   warm   3     ok              tokens_per_second=28.2 "
            "tokens/s  THROUGHPUT_DROP  SIMULATED\n"
            "1 runs (1 SIMULATED)\n");
}

TEST(OutputFormatTest, JsonIsOneRecordPerLineInTheProtoMappingWithTheAgentAndHeadlineAdded) {
  v1::RunRecord r;
  r.set_run_id("id");
  r.set_call_index(2);
  auto text = FormatRuns({r, r}, Format::kJson);
  ASSERT_TRUE(text.ok());
  const std::string line =
      "{\"run_id\":\"id\",\"call_index\":2,"
      "\"agent\":{\"hostname\":\"\",\"class\":\"\",\"name\":\"\"},\"headline_figures\":[]}\n";
  EXPECT_EQ(*text, line + line);
  v1::RunRecord empty;
  text = FormatRuns({empty}, Format::kJson);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "{\"agent\":{\"hostname\":\"\",\"class\":\"\",\"name\":\"\"},\"headline_figures\":[]}\n");
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

namespace benchfleet::cli {
namespace {

v1::Metric* AddMetric(v1::RunRecord* r, const std::string& name, double value, const std::string& unit,
                      uint32_t headline = 0, const std::string& label = "") {
  v1::Metric* m = r->add_metrics();
  m->set_name(name);
  m->set_value(value);
  m->set_unit(unit);
  m->set_headline(headline);
  m->set_label(label);
  return m;
}

// A llama-server run as its declaration stamps it: the main figure declared second, a further
// headline figure, and figures that are not headline ones.
v1::RunRecord DeclaredRun() {
  v1::RunRecord r;
  r.set_run_id("12345678-aaaa-4bbb-8ccc-dddddddddddd");
  r.set_agent_id("3f2a9c1e-0000-4000-8000-000000000000");
  r.set_conditions_fingerprint("fp-a100");
  r.set_task("qwen");
  r.set_mode("gpu");
  r.set_phase(v1::PHASE_COLD);
  r.set_call_index(1);
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  AddMetric(&r, "prompt_n", 11, "tokens");
  AddMetric(&r, "time_to_first_token_seconds", 0.412, "s", 2, "time to first token");
  AddMetric(&r, "predicted_per_second", 52.94, "tokens/s", 1, "generation tokens/s");
  return r;
}

TEST(OutputFormatTest, AgentNameIsHostnameWithClassAndShortId) {
  const std::string id = "3f2a9c1e-0000-4000-8000-000000000000";
  EXPECT_EQ(FormatAgentName(id, {"a100-01", "a100"}), "a100-01 (a100, 3f2a9c1e)");
  EXPECT_EQ(FormatAgentName(id, {"a100-01", ""}), "a100-01 (3f2a9c1e)");
  EXPECT_EQ(FormatAgentName(id, {"", "a100"}), "3f2a9c1e");
  EXPECT_EQ(FormatAgentName("ok-1", {"ok-1", "c5"}), "ok-1 (c5)");  // an id that is the hostname
  EXPECT_EQ(FormatAgentName("ok-1", {"ok-1", ""}), "ok-1");
  v1::MachineConditions c;
  c.set_hostname("m1-07");
  (*c.mutable_labels())["class"] = "m1pro";
  (*c.mutable_labels())["site"] = "lab";
  const AgentName name = AgentNameOf(c);
  EXPECT_EQ(name.hostname, "m1-07");
  EXPECT_EQ(name.agent_class, "m1pro");
}

TEST(OutputFormatTest, FigureTextSaysEachFigureOnceWithItsUnitForPeople) {
  v1::RunRecord r;
  EXPECT_EQ(FigureText(*AddMetric(&r, "predicted_per_second", 52.94, "tokens/s", 1, "generation tokens/s")),
            "52.9 generation tokens/s");
  EXPECT_EQ(FigureText(*AddMetric(&r, "images_per_second", 0.0532, "images/s", 1, "images/s")),
            "0.0532 images/s");
  EXPECT_EQ(FigureText(*AddMetric(&r, "latency_mean_seconds", 0.412, "s", 2, "mean latency")),
            "mean latency 412 ms");
  EXPECT_EQ(FigureText(*AddMetric(&r, "ttft_p99_seconds", 0.0883, "s", 3, "TTFT p99")), "TTFT p99 88.3 ms");
  EXPECT_EQ(FigureText(*AddMetric(&r, "wall_seconds", 12.34, "s", 4, "")), "wall_seconds 12.3 s");
  EXPECT_EQ(FigureText(*AddMetric(&r, "energy_per_output_token_joules", 0.52, "J/token", 5,
                                  "energy per output token")),
            "energy per output token 0.52 J/token");
}

TEST(OutputFormatTest, TableNamesTheAgentAndShowsTheHeadlineFiguresMainFirst) {
  v1::RunRecord cold_gpu = DeclaredRun();
  v1::RunRecord cold_cpu = DeclaredRun();
  cold_cpu.set_run_id("87654321-aaaa-4bbb-8ccc-dddddddddddd");
  cold_cpu.set_mode("cpu");
  cold_cpu.set_conditions_fingerprint("fp-unknown");  // falls back to the agent's latest conditions
  cold_cpu.mutable_metrics(2)->set_value(9.1);
  cold_cpu.mutable_metrics(1)->set_value(6.815);
  RunAgents agents;
  agents.by_fingerprint["fp-a100"] = {"a100-01", "a100"};
  agents.by_agent_id["3f2a9c1e-0000-4000-8000-000000000000"] = {"a100-01b", "a100"};
  auto text = FormatRuns({cold_gpu, cold_cpu}, Format::kTable, agents);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text,
            "RUN       AGENT                      TASK  MODE  PHASE  CALL  STATUS  WALL_S  FIGURES        "
            "                                       FLAGS  SOURCE\n"
            "12345678  a100-01 (a100, 3f2a9c1e)   qwen  gpu   cold   1     ok              52.9 generation "
            "tokens/s, time to first token 412 ms         measured\n"
            "87654321  a100-01b (a100, 3f2a9c1e)  qwen  cpu   cold   1     ok              9.1 generation "
            "tokens/s, time to first token 6.8 s           measured\n"
            "2 runs\n"
            "\n"
            // Each setting's main figure over its accepted runs: one run each, so no median or spread.
            "main figure per setting over its accepted runs (median, 95% CI of the median and CV from 5 runs on):\n"
            "AGENT                      TASK  BACKEND  MODE  PHASE  MATRIX  FIGURE               N  MEDIAN  95% CI  CV  "
            "SOURCE\n"
            "a100-01 (a100, 3f2a9c1e)   qwen  -        gpu   cold   -       generation tokens/s  1  -       -       -   "
            "measured\n"
            "a100-01b (a100, 3f2a9c1e)  qwen  -        cpu   cold   -       generation tokens/s  1  -       -       -   "
            "measured\n");
}

TEST(OutputFormatTest, JsonAddsTheAgentAndTheHeadlineFiguresAndStillReadsAsARecord) {
  v1::RunRecord r = DeclaredRun();
  r.clear_metrics();
  AddMetric(&r, "predicted_per_second", 52.9, "tokens/s", 1, "generation tokens/s");
  RunAgents agents;
  agents.by_fingerprint["fp-a100"] = {"a100-01", "a100"};
  auto text = FormatRuns({r}, Format::kJson, agents);
  ASSERT_TRUE(text.ok());
  const std::string added =
      ",\"agent\":{\"hostname\":\"a100-01\",\"class\":\"a100\",\"name\":\"a100-01 (a100, 3f2a9c1e)\"},"
      "\"headline_figures\":[{\"name\":\"predicted_per_second\",\"label\":\"generation tokens/s\","
      "\"value\":52.9,\"unit\":\"tokens/s\",\"text\":\"52.9 generation tokens/s\"}]}\n";
  ASSERT_GT(text->size(), added.size());
  EXPECT_EQ(text->substr(text->size() - added.size()), added) << *text;
  // Everything before the additions is the record's own mapping, and a reader that ignores unknown
  // fields (benchfleet's own: import, the guide) reads the line as the record.
  auto mapping = MessageToJson(r);
  ASSERT_TRUE(mapping.ok());
  EXPECT_EQ(text->substr(0, mapping->size() - 1), mapping->substr(0, mapping->size() - 1));
  v1::RunRecord read;
  ASSERT_TRUE(JsonToMessage(*text, &read, /*ignore_unknown_fields=*/true).ok());
  EXPECT_EQ(read.SerializeAsString(), r.SerializeAsString());
}

TEST(OutputFormatTest, CsvAddsTheAgentAndTheHeadlineFiguresAtTheEndOfEachRow) {
  v1::RunRecord r = DeclaredRun();
  r.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
  r.mutable_status()->set_message("first line\nsecond \"line\"");  // a quoted field across lines
  RunAgents agents;
  agents.by_fingerprint["fp-a100"] = {"a100-01", "a100"};
  auto text = FormatRuns({r, r}, Format::kCsv, agents);
  ASSERT_TRUE(text.ok());
  std::vector<std::string> lines = absl::StrSplit(*text, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 5u) << *text;  // the header, then two rows of two lines each
  EXPECT_TRUE(absl::StartsWith(lines[0], "run_id,series_id,task_id,agent_id,")) << lines[0];
  EXPECT_TRUE(absl::EndsWith(lines[0], ",metric:time_to_first_token_seconds [s],agent_hostname,agent_class,"
                                       "headline_figures"))
      << lines[0];
  EXPECT_TRUE(absl::EndsWith(lines[1], ",failed,\"first line")) << lines[1];
  EXPECT_EQ(lines[2],
            "second \"\"line\"\"\",,,,,,52.94,11,0.412,a100-01,a100,\"52.9 generation tokens/s, time to first token "
            "412 ms\"");
  EXPECT_EQ(lines[3], lines[1]);
  EXPECT_EQ(lines[4], lines[2]);
}

}  // namespace
}  // namespace benchfleet::cli
