// The series spec parser: the examples, the defaults, every error with its key and line, the
// reserved keys, and that the schema file lists what the parser reads.
#include "common/spec/series_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace benchfleet::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::StartsWith;

constexpr char kSource[] = "spec.yaml";
constexpr char kHead[] = "series: s1\ntask: t1\nbackend: fake\n";  // lines 1-3

std::string Example(const std::string& name) { return std::string(BENCHFLEET_SOURCE_DIR) + "/examples/series/" + name; }

// Returns the 1-based line of the first line of text that starts with prefix.
int LineStarting(const std::string& text, const std::string& prefix) {
  int line = 0;
  for (absl::string_view l : absl::StrSplit(text, '\n')) {
    ++line;
    if (absl::StartsWith(l, prefix)) return line;
  }
  return 0;
}

absl::Status ErrorOf(const std::string& yaml) { return ParseSeriesSpec(yaml, kSource).status(); }

void ExpectInvalid(const std::string& yaml, const std::string& message) {
  const absl::Status s = ErrorOf(yaml);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(s.message(), message);
}

TEST(SeriesSpecTest, TheGpuVsCpuExampleParses) {
  const std::string path = Example("llama-server-gpu-vs-cpu.yaml");
  auto text = Env::Default()->ReadFile(path);
  ASSERT_TRUE(text.ok()) << text.status();
  auto spec = LoadSeriesSpec(Env::Default(), path);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->source, path);
  EXPECT_EQ(spec->text, *text);
  EXPECT_EQ(spec->series, "llama-qwen2.5-3b-gpu-vs-cpu");
  EXPECT_EQ(spec->task, "llama-qwen2.5-3b-q4km");
  EXPECT_EQ(spec->backend, "llama-server");
  ASSERT_TRUE(spec->backend_section.IsMap());
  EXPECT_EQ(spec->backend_section_line, LineStarting(*text, "llama-server:"));
  EXPECT_EQ(spec->backend_section["binary"].Scalar(), "/opt/llama.cpp/bin/llama-server");
  EXPECT_EQ(spec->backend_section["model"].Scalar(), "/srv/models/qwen2.5-3b-instruct-q4_k_m.gguf");
  EXPECT_EQ(spec->backend_section["modes"]["gpu"][1].Scalar(), "99");
  EXPECT_EQ(spec->backend_section["modes"]["cpu"][1].Scalar(), "0");
  EXPECT_EQ(spec->backend_section["n_predict"].Scalar(), "128");
  EXPECT_EQ(spec->runs.validation, 0);
  EXPECT_EQ(spec->runs.cold, 1);
  EXPECT_EQ(spec->runs.warm, 4);
  EXPECT_EQ(spec->runs.repetitions, 1);
  EXPECT_EQ(spec->runs.pause_between_runs, absl::Seconds(2));
  EXPECT_DOUBLE_EQ(spec->runs.throughput_drop_threshold, 0.15);
  ASSERT_EQ(spec->matrix.size(), 1u);
  EXPECT_EQ(spec->matrix[0].name, "mode");
  EXPECT_THAT(spec->matrix[0].values, ElementsAre("gpu", "cpu"));
  EXPECT_EQ(spec->matrix[0].line, LineStarting(*text, "  mode:"));
  // The fleet keys are parsed with the rest, for the coordinator (the agent does not use them).
  ASSERT_TRUE(spec->fleet.targets.has_value());
  ASSERT_EQ(spec->fleet.targets->labels.size(), 1u);
  EXPECT_EQ(spec->fleet.targets->labels[0].text, "accelerator in (nvidia, amd, apple)");
  EXPECT_EQ(spec->fleet.deadline_in, absl::Hours(2));
  EXPECT_EQ(spec->fleet.retry_max, 2);
}

TEST(SeriesSpecTest, TheUrlExampleParses) {
  auto spec = LoadSeriesSpec(Env::Default(), Example("llama-server-url.yaml"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->backend, "llama-server");
  EXPECT_EQ(spec->backend_section["url"].Scalar(), "http://127.0.0.1:8080");
  EXPECT_FALSE(spec->backend_section["binary"].IsDefined());
  EXPECT_EQ(spec->runs.cold, 1);
  EXPECT_EQ(spec->runs.warm, 8);
  EXPECT_EQ(spec->runs.pause_between_runs, absl::Milliseconds(500));
  EXPECT_TRUE(spec->matrix.empty());
}

// Every example in examples/series is a spec the parser accepts (its backend's section is checked
// by the backend, with an allow-list: each backend's tests run its example).
TEST(SeriesSpecTest, EveryExampleParses) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(Example(""))) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_THAT(names, ::testing::IsSupersetOf({"comfyui-sd15-txt2img.yaml", "llama-server-gpu-vs-cpu.yaml",
                                              "llama-server-url.yaml", "openai-concurrency-sweep.yaml",
                                              "workflow-v6.yaml"}));
  for (const std::string& name : names) {
    auto spec = LoadSeriesSpec(Env::Default(), Example(name));
    EXPECT_TRUE(spec.ok()) << name << ": " << spec.status();
    if (spec.ok()) {
      EXPECT_TRUE(spec->backend_section.IsMap()) << name;
    }
  }
}

// The Workflow v6 method: batch size 4, 8 and 16, five repetitions, ACCELERATOR from the label.
TEST(SeriesSpecTest, TheWorkflowV6ExampleParses) {
  auto spec = LoadSeriesSpec(Env::Default(), Example("workflow-v6.yaml"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->backend, "workflow");
  EXPECT_EQ(spec->backend_section["command"].Scalar(), "workflow-v6");
  EXPECT_EQ(spec->backend_section["prompts"].Scalar(), "/srv/workflows/bench_prompts.jsonl");
  EXPECT_EQ(spec->backend_section["env"]["ACCELERATOR"]["label"].Scalar(), "accelerator");
  EXPECT_EQ(spec->backend_section["env"]["MODEL"].Scalar(), "meta-llama/Llama-2-7b-hf");
  EXPECT_EQ(spec->backend_section["env"]["DTYPE"].Scalar(), "float16");
  EXPECT_EQ(spec->backend_section["container"].Scalar(), "restart");
  EXPECT_EQ(spec->runs.cold, 1);
  EXPECT_EQ(spec->runs.warm, 0);
  EXPECT_EQ(spec->runs.repetitions, 5);
  ASSERT_EQ(spec->matrix.size(), 1u);
  EXPECT_EQ(spec->matrix[0].name, "batch_size");
  EXPECT_THAT(spec->matrix[0].values, ElementsAre("4", "8", "16"));
}

// An OpenAI-compatible endpoint at concurrency 1, 4, 8 and 16 with TTFT and TPOT SLOs.
TEST(SeriesSpecTest, TheOpenAiConcurrencySweepExampleParses) {
  auto spec = LoadSeriesSpec(Env::Default(), Example("openai-concurrency-sweep.yaml"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->backend, "openai");
  EXPECT_EQ(spec->backend_section["slo"]["ttft"].Scalar(), "500ms");
  EXPECT_EQ(spec->backend_section["slo"]["tpot"].Scalar(), "50ms");
  EXPECT_EQ(spec->backend_section["prompts"].Scalar(), "/srv/workflows/bench_prompts.jsonl");
  ASSERT_EQ(spec->matrix.size(), 1u);
  EXPECT_EQ(spec->matrix[0].name, "concurrency");
  EXPECT_THAT(spec->matrix[0].values, ElementsAre("1", "4", "8", "16"));
  EXPECT_EQ(spec->runs.cold, 1);
  EXPECT_EQ(spec->runs.warm, 1);
}

// The prompts both examples send: 100 of our own, one JSON object per line, ids p001..p100.
TEST(SeriesSpecTest, TheExamplePromptsAreAHundredExplainInOneSentence) {
  auto text = Env::Default()->ReadFile(std::string(BENCHFLEET_SOURCE_DIR) + "/examples/prompts/bench_prompts.jsonl");
  ASSERT_TRUE(text.ok()) << text.status();
  int n = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
    ++n;
    const nlohmann::json prompt = nlohmann::json::parse(line);
    EXPECT_EQ(prompt["id"], absl::StrFormat("p%03d", n));
    const std::string words = prompt["prompt"].get<std::string>();
    EXPECT_THAT(words, StartsWith("Explain in one sentence what "));
    // About 30 tokens: 15 to 30 words.
    const size_t count = std::vector<absl::string_view>(absl::StrSplit(words, ' ')).size();
    EXPECT_GE(count, 15u) << words;
    EXPECT_LE(count, 30u) << words;
  }
  EXPECT_EQ(n, 100);
}

TEST(SeriesSpecTest, MissingSectionsTakeTheDefaults) {
  auto spec = ParseSeriesSpec(kHead, kSource);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->series, "s1");
  EXPECT_EQ(spec->task, "t1");
  EXPECT_EQ(spec->backend, "fake");
  EXPECT_TRUE(spec->backend_section.IsNull());
  EXPECT_EQ(spec->runs.validation, 0);
  EXPECT_EQ(spec->runs.cold, 1);
  EXPECT_EQ(spec->runs.warm, 0);
  EXPECT_EQ(spec->runs.repetitions, 1);
  EXPECT_EQ(spec->runs.pause_between_runs, absl::ZeroDuration());
  EXPECT_DOUBLE_EQ(spec->runs.throughput_drop_threshold, 0.15);
  EXPECT_TRUE(spec->matrix.empty());
  EXPECT_FALSE(spec->fleet.targets.has_value());
  EXPECT_FALSE(spec->fleet.DeadlineFor(absl::UnixEpoch()).has_value());
  EXPECT_EQ(spec->fleet.retry_max, 1);
}

TEST(SeriesSpecTest, EveryRunsKeyIsRead) {
  auto spec = ParseSeriesSpec(absl::StrCat(kHead, R"(runs:
  validation: 2
  cold: 3
  warm: 10
  repetitions: 4
  pause_between_runs: 1m30s
  throughput_drop_threshold: 0.25
)"),
                              kSource);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->runs.validation, 2);
  EXPECT_EQ(spec->runs.cold, 3);
  EXPECT_EQ(spec->runs.warm, 10);
  EXPECT_EQ(spec->runs.repetitions, 4);
  EXPECT_EQ(spec->runs.pause_between_runs, absl::Seconds(90));
  EXPECT_DOUBLE_EQ(spec->runs.throughput_drop_threshold, 0.25);
}

TEST(SeriesSpecTest, DurationsReadTheUsualForms) {
  for (const auto& [text, expected] : std::vector<std::pair<std::string, absl::Duration>>{
           {"0", absl::ZeroDuration()},
           {"500ms", absl::Milliseconds(500)},
           {"2s", absl::Seconds(2)},
           {"1.5h", absl::Minutes(90)},
           {"\"250us\"", absl::Microseconds(250)}}) {
    auto spec = ParseSeriesSpec(absl::StrCat(kHead, "runs:\n  pause_between_runs: ", text, "\n"), kSource);
    ASSERT_TRUE(spec.ok()) << text << ": " << spec.status();
    EXPECT_EQ(spec->runs.pause_between_runs, expected) << text;
  }
}

TEST(SeriesSpecTest, MatrixKeepsTheSpecsOrder) {
  auto spec = ParseSeriesSpec(absl::StrCat(kHead, "matrix:\n  n_predict: [256, 64, 128]\n  mode: [cpu, gpu]\n"),
                              kSource);
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->matrix.size(), 2u);
  EXPECT_EQ(spec->matrix[0].name, "n_predict");
  EXPECT_THAT(spec->matrix[0].values, ElementsAre("256", "64", "128"));
  EXPECT_EQ(spec->matrix[0].line, 5);
  EXPECT_EQ(spec->matrix[1].name, "mode");
  EXPECT_THAT(spec->matrix[1].values, ElementsAre("cpu", "gpu"));
  EXPECT_EQ(spec->matrix[1].line, 6);
}

TEST(SeriesSpecTest, TheFleetKeysAreParsedWithTheSpec) {
  auto spec = ParseSeriesSpec(absl::StrCat(kHead, R"(targets:
  labels: [class=a100]
deadline: 2026-02-01T00:00:00Z
retry:
  max_attempts: 3
regression: {baseline_runs: 5, threshold: 0.05}
)"),
                              kSource);
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(spec->fleet.targets.has_value());
  EXPECT_EQ(spec->fleet.targets->Describe(), "labels [class=a100]");
  EXPECT_EQ(spec->fleet.DeadlineFor(absl::UnixEpoch()), absl::FromUnixSeconds(1769904000));
  EXPECT_EQ(spec->fleet.retry_max, 3);
  EXPECT_EQ(spec->fleet.baseline_runs, 5);
  EXPECT_EQ(spec->fleet.regression_threshold, 0.05);
  // Checked where they are written, as every key of the spec: the agent refuses them too.
  auto bad = ParseSeriesSpec(absl::StrCat(kHead, "retry: {max_attempts: 0}\n"), kSource);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              ::testing::HasSubstr("field retry.max_attempts: must be a whole number from 1 to 100 (1: no retry)"));
}

TEST(SeriesSpecTest, TheBackendsSectionIsKeptUnderItsName) {
  auto spec = ParseSeriesSpec(absl::StrCat(kHead, "fake:\n  speed: 3\n  modes: {gpu: [-x]}\n"), kSource);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->backend_section["speed"].Scalar(), "3");
  EXPECT_EQ(spec->backend_section["modes"]["gpu"][0].Scalar(), "-x");
  EXPECT_EQ(spec->backend_section_line, 4);
}

TEST(SeriesSpecTest, UnknownTopLevelKeyIsNamedWithItsLine) {
  ExpectInvalid(absl::StrCat(kHead, "runz:\n  cold: 1\n"),
                "spec.yaml:4: unknown key 'runz' (known keys: series, task, backend, fake, runs, outputs, matrix, "
                "targets, deadline, retry, regression)");
}

TEST(SeriesSpecTest, AnotherBackendsSectionIsAnUnknownKey) {
  ExpectInvalid(absl::StrCat(kHead, "fake:\n  a: 1\nllama-server:\n  url: http://x\n"),
                "spec.yaml:6: unknown key 'llama-server' (known keys: series, task, backend, fake, runs, outputs, "
                "matrix, targets, deadline, retry, regression)");
}

// outputs.deterministic: what the same inputs must give (common/output_determinism.h).
TEST(SeriesSpecTest, OutputsDeterministicTakesTrueFalseOrPerMachine) {
  auto none = ParseSeriesSpec(kHead, kSource);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->outputs.given);
  EXPECT_EQ(none->outputs.deterministic, OutputDeterminism::kEverywhere);
  const std::pair<const char*, OutputDeterminism> cases[] = {
      {"true", OutputDeterminism::kEverywhere},
      {"false", OutputDeterminism::kNone},
      {"per_machine", OutputDeterminism::kPerMachine}};
  for (const auto& [word, expected] : cases) {
    auto spec = ParseSeriesSpec(absl::StrCat(kHead, "outputs:\n  deterministic: ", word, "\n"), kSource);
    ASSERT_TRUE(spec.ok()) << word << ": " << spec.status();
    EXPECT_TRUE(spec->outputs.given) << word;
    EXPECT_EQ(spec->outputs.deterministic, expected) << word;
    EXPECT_EQ(OutputDeterminismName(expected), word);
  }
  auto flow = ParseSeriesSpec(absl::StrCat(kHead, "outputs: {deterministic: false}\n"), kSource);
  ASSERT_TRUE(flow.ok()) << flow.status();
  EXPECT_EQ(flow->outputs.deterministic, OutputDeterminism::kNone);
  // An empty section is given, with the default.
  auto empty = ParseSeriesSpec(absl::StrCat(kHead, "outputs:\n"), kSource);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->outputs.given);
  EXPECT_EQ(empty->outputs.deterministic, OutputDeterminism::kEverywhere);
}

TEST(SeriesSpecTest, OutputsErrorsNameTheKeyAndTheLine) {
  ExpectInvalid(absl::StrCat(kHead, "outputs:\n  deterministic: sometimes\n"),
                "spec.yaml:5: outputs.deterministic must be true (the same outputs on every run and every "
                "machine), per_machine (on every run of one machine) or false, got 'sometimes'");
  ExpectInvalid(absl::StrCat(kHead, "outputs:\n  deterministic: \"false\"\n"),
                "spec.yaml:5: outputs.deterministic must be true (the same outputs on every run and every "
                "machine), per_machine (on every run of one machine) or false, got \"false\" (quoted: a string)");
  ExpectInvalid(absl::StrCat(kHead, "outputs:\n  determinstic: false\n"),
                "spec.yaml:5: unknown key 'outputs.determinstic' (known keys: deterministic)");
  ExpectInvalid(absl::StrCat(kHead, "outputs: false\n"),
                "spec.yaml:4: outputs must be a map with the key deterministic, got 'false'");
}

TEST(SeriesSpecTest, UnknownRunsKeyIsNamedWithItsLine) {
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  cold: 1\n  wram: 4\n"),
                "spec.yaml:6: unknown key 'runs.wram' (known keys: validation, cold, warm, repetitions, "
                "pause_between_runs, throughput_drop_threshold)");
}

TEST(SeriesSpecTest, KeyGivenTwiceIsAnError) {
  ExpectInvalid(absl::StrCat(kHead, "task: t2\n"), "spec.yaml:4: key 'task' is given twice");
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  warm: 1\n  warm: 2\n"), "spec.yaml:6: key 'runs.warm' is given twice");
}

TEST(SeriesSpecTest, MissingRequiredKeysAreNamed) {
  ExpectInvalid("series: s\nbackend: fake\n", "spec.yaml:1: missing key 'task'");
  ExpectInvalid("series: s\ntask: t\n", "spec.yaml:1: missing key 'backend'");
  ExpectInvalid("task: t\nbackend: fake\n", "spec.yaml:1: missing key 'series'");
}

TEST(SeriesSpecTest, WrongTypesNameTheKeyTheLineAndTheValue) {
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  warm: four\n"),
                "spec.yaml:5: runs.warm must be a whole number from 0 to 1000000, got 'four'");
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  warm: \"4\"\n"),
                "spec.yaml:5: runs.warm must be a whole number from 0 to 1000000, got \"4\" (quoted: a string)");
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  cold: -1\n"),
                "spec.yaml:5: runs.cold must be a whole number from 0 to 1000000, got '-1'");
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  validation: [1]\n"),
                "spec.yaml:5: runs.validation must be a whole number from 0 to 1000000, got a list");
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  repetitions: 0\n"),
                "spec.yaml:5: runs.repetitions must be a whole number from 1 to 100000, got '0'");
  ExpectInvalid(absl::StrCat(kHead, "runs: 5\n"),
                "spec.yaml:4: runs must be a map with the keys validation, cold, warm, repetitions, "
                "pause_between_runs, throughput_drop_threshold, got '5'");
  ExpectInvalid(absl::StrCat(kHead, "fake: [1, 2]\n"),
                "spec.yaml:4: fake must be a map (the settings of the fake backend), got a list");
  ExpectInvalid("series: [a]\ntask: t\nbackend: fake\n",
                "spec.yaml:1: series must be a non-empty name (letters, digits, '.', '_' and '-'), got a list");
}

TEST(SeriesSpecTest, NamesAreChecked) {
  ExpectInvalid("series: my series\ntask: t\nbackend: fake\n",
                "spec.yaml:1: series must start with a letter or digit and hold only letters, digits, '.', '_' and "
                "'-' (at most 128 characters), got 'my series'");
  ExpectInvalid("series: s\ntask: t\nbackend: Fake\n",
                "spec.yaml:3: backend must start with a letter or digit and hold only lower-case letters, digits, "
                "'.', '_' and '-' (at most 128 characters), got 'Fake'");
  ExpectInvalid("series: s\ntask: t\nbackend: runs\n",
                "spec.yaml:3: backend 'runs' is a key of the spec itself, not a backend name");
}

TEST(SeriesSpecTest, BadDurationsAreRefused) {
  for (const char* text : {"2", "-1s", "inf", "soon", "1d"}) {
    ExpectInvalid(absl::StrCat(kHead, "runs:\n  pause_between_runs: ", text, "\n"),
                  absl::StrCat("spec.yaml:5: runs.pause_between_runs must be a duration such as 2s or 500ms (units "
                               "ns, us, ms, s, m, h), got '",
                               text, "'"));
  }
}

// Issue 19 case 6: "pause_between_runs: 100000000h" held an agent for good; a pause is at most a day.
TEST(SeriesSpecTest, APauseAboveItsBoundIsRefusedWithItsLine) {
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  cold: 1\n  pause_between_runs: 100000000h\n"),
                "spec.yaml:6: runs.pause_between_runs must be at most 24h, got 100000000h");
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  pause_between_runs: 1500m\n"),
                "spec.yaml:5: runs.pause_between_runs must be at most 24h, got 25h");
  auto spec = ParseSeriesSpec(absl::StrCat(kHead, "runs:\n  pause_between_runs: 24h\n"), kSource);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->runs.pause_between_runs, kMaxSpecDuration);
}

TEST(SeriesSpecTest, ParseSpecDurationTakesTheBoundItIsGiven) {
  const YAML::Node node = YAML::Load("deadline: 721h")["deadline"];
  EXPECT_EQ(ParseSpecDuration(node, "deadline", kSource, kMaxSpecDeadline).status().message(),
            "spec.yaml:1: deadline must be at most 720h, got 721h");
  EXPECT_EQ(*ParseSpecDuration(YAML::Load("d: 720h")["d"], "d", kSource, kMaxSpecDeadline), absl::Hours(720));
}

TEST(SeriesSpecTest, ThresholdMustBeAFraction) {
  for (const char* text : {"15", "0", "1", "-0.1", "high"}) {
    ExpectInvalid(absl::StrCat(kHead, "runs:\n  throughput_drop_threshold: ", text, "\n"),
                  absl::StrCat("spec.yaml:5: runs.throughput_drop_threshold must be a fraction between 0 and 1 "
                               "(0.15 means 15%), got '",
                               text, "'"));
  }
}

TEST(SeriesSpecTest, WarmRunsNeedAColdRun) {
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  cold: 0\n  warm: 3\n"),
                "spec.yaml:6: runs.warm needs runs.cold of at least 1: the first call after the backend is "
                "(re)opened is the cold run, never a warm one");
}

TEST(SeriesSpecTest, ASeriesWithNoRunIsRefused) {
  ExpectInvalid(absl::StrCat(kHead, "runs:\n  cold: 0\n"),
                "spec.yaml:5: runs: nothing to run (validation, cold and warm are all 0)");
}

TEST(SeriesSpecTest, MatrixErrorsNameTheAxis) {
  ExpectInvalid(absl::StrCat(kHead, "matrix:\n  mode: gpu\n"),
                "spec.yaml:5: matrix.mode must be a non-empty list of values, got 'gpu'");
  ExpectInvalid(absl::StrCat(kHead, "matrix:\n  mode: []\n"),
                "spec.yaml:5: matrix.mode must be a non-empty list of values, got a list");
  ExpectInvalid(absl::StrCat(kHead, "matrix:\n  mode: [gpu, cpu, gpu]\n"),
                "spec.yaml:5: matrix.mode lists 'gpu' twice");
  ExpectInvalid(absl::StrCat(kHead, "matrix:\n  mode:\n    - gpu\n    - {a: 1}\n"),
                "spec.yaml:7: matrix.mode values must be non-empty scalars, got a map");
  ExpectInvalid(absl::StrCat(kHead, "matrix:\n  Mode: [gpu]\n"),
                "spec.yaml:5: matrix axis names must be lower_snake_case (a-z, 0-9, '_'), got 'Mode'");
  ExpectInvalid(absl::StrCat(kHead, "matrix: [gpu]\n"),
                "spec.yaml:4: matrix must be a map of axis: [values...], got a list");
}

TEST(SeriesSpecTest, TheTopLevelMustBeAMap) {
  ExpectInvalid("- a\n",
                "spec.yaml:1: the top level must be a map with the keys series, task, backend, runs, outputs, matrix, "
                "targets, deadline, retry, regression and the backend's section; got a list");
}

TEST(SeriesSpecTest, BrokenYamlSaysWhere) {
  const absl::Status s = ErrorOf("series: s\ntask: [t\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), StartsWith("spec.yaml:3:1: not valid YAML: "));
}

TEST(SeriesSpecTest, NonUtf8OrBinarySaysLineAndColumn) {
  EXPECT_EQ(ErrorOf("series: s\ntask: caf\xE9\n").message(),
            "spec.yaml:2:10: not UTF-8 text (byte 0xE9); a series spec is YAML text: is this the right file?");
  EXPECT_EQ(ErrorOf(std::string("series: s\n\x00\x01", 12)).message(),
            "spec.yaml:2:1: control character 0x00 is not allowed in YAML text; a series spec is YAML text: is this "
            "the right file?");
}

TEST(SeriesSpecTest, UnreadableFileKeepsItsCode) {
  const absl::Status s = LoadSeriesSpec(Env::Default(), "/nonexistent/spec.yaml").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), StartsWith("cannot read series spec: "));
}

// The schema is documentation that must not drift: it lists exactly the keys the parser reads,
// with the parser's defaults.
TEST(SeriesSpecTest, TheSchemaFileListsWhatTheParserReads) {
  auto text = Env::Default()->ReadFile(std::string(BENCHFLEET_SOURCE_DIR) + "/common/spec/series-spec.schema.json");
  ASSERT_TRUE(text.ok()) << text.status();
  const nlohmann::json schema = nlohmann::json::parse(*text);
  std::set<std::string> top;
  for (const auto& [key, value] : schema["properties"].items()) top.insert(key);
  EXPECT_EQ(top, (std::set<std::string>{"series", "task", "backend", "runs", "outputs", "matrix", "targets",
                                        "deadline", "retry", "regression"}));
  EXPECT_EQ(schema["required"], nlohmann::json({"series", "task", "backend"}));
  const nlohmann::json& runs = schema["properties"]["runs"]["properties"];
  std::set<std::string> runs_keys;
  for (const auto& [key, value] : runs.items()) runs_keys.insert(key);
  EXPECT_EQ(runs_keys, (std::set<std::string>{"validation", "cold", "warm", "repetitions", "pause_between_runs",
                                              "throughput_drop_threshold"}));
  const RunsSpec defaults;
  EXPECT_EQ(runs["validation"]["default"], defaults.validation);
  EXPECT_EQ(runs["cold"]["default"], defaults.cold);
  EXPECT_EQ(runs["warm"]["default"], defaults.warm);
  EXPECT_EQ(runs["repetitions"]["default"], defaults.repetitions);
  EXPECT_EQ(runs["pause_between_runs"]["default"], "0s");
  EXPECT_EQ(runs["pause_between_runs"]["maxDuration"], absl::FormatDuration(kMaxSpecDuration));
  EXPECT_EQ(schema["properties"]["deadline"]["maxDuration"], absl::FormatDuration(kMaxSpecDeadline));
  EXPECT_EQ(runs["throughput_drop_threshold"]["default"], defaults.throughput_drop_threshold);
  const nlohmann::json& outputs = schema["properties"]["outputs"];
  std::set<std::string> outputs_keys;
  for (const auto& [key, value] : outputs["properties"].items()) outputs_keys.insert(key);
  EXPECT_EQ(outputs_keys, (std::set<std::string>{"deterministic"}));
  EXPECT_EQ(outputs["properties"]["deterministic"]["default"], true);
  EXPECT_EQ(outputs["properties"]["deterministic"]["enum"], nlohmann::json({true, "per_machine", false}));
}

}  // namespace
}  // namespace benchfleet::agent
