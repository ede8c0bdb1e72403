#include "synthesis/readers/measurement_files.h"

#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "common/conditions_fingerprint.h"
#include "common/hashing.h"
#include "common/series_folder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/subprocess.h"

namespace benchfleet::synthesis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Fixture(const std::string& name) { return std::string(BENCHFLEET_SOURCE_DIR) + "/tests/fixtures/" + name; }

ReadResult ReadOk(const std::vector<std::string>& paths) {
  auto result = ReadMeasurementFiles(Env::Default(), paths);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : ReadResult{};
}

double MetricValue(const v1::RunRecord& r, const std::string& name) {
  for (const auto& m : r.metrics()) {
    if (m.name() == name) return m.value();
  }
  ADD_FAILURE() << "no metric " << name << " in " << r.run_id();
  return -1;
}

std::string MetricUnit(const v1::RunRecord& r, const std::string& name) {
  for (const auto& m : r.metrics()) {
    if (m.name() == name) return m.unit();
  }
  return "";
}

std::vector<double> Figures(const ReadResult& r, const std::string& name) {
  std::vector<double> out;
  for (const auto& rec : r.records) out.push_back(MetricValue(rec, name));
  return out;
}

std::vector<uint32_t> Lines(const ReadResult& r) {
  std::vector<uint32_t> out;
  for (const auto& rec : r.records) out.push_back(rec.provenance().line());
  return out;
}

std::vector<uint32_t> CallIndexes(const ReadResult& r) {
  std::vector<uint32_t> out;
  for (const auto& rec : r.records) out.push_back(rec.call_index());
  return out;
}

std::vector<std::string> Tasks(const ReadResult& r) {
  std::vector<std::string> out;
  for (const auto& rec : r.records) out.push_back(rec.task());
  return out;
}

void WriteFile(const std::string& path, const std::string& content) {
  ASSERT_TRUE(Env::Default()->WriteFileAtomically(path, content).ok());
}

TEST(LlamaBenchTest, JsonGivesOneRecordPerSampleWithTheTestObjectsLine) {
  const std::string path = Fixture("llama-bench/llama-bench.json");
  ReadResult r = ReadOk({path});
  ASSERT_EQ(r.records.size(), 6u);
  EXPECT_TRUE(r.skipped.empty());
  EXPECT_THAT(Figures(r, "tokens_per_second"), ElementsAre(81282.6, 84098.1, 88110.1, 9596.25, 9565.28, 9486.78));
  EXPECT_THAT(Figures(r, "wall_seconds"),
              ElementsAre(196844e-9, 190254e-9, 181591e-9, 1667318e-9, 1672716e-9, 1686557e-9));
  EXPECT_THAT(Lines(r), ElementsAre(2, 2, 2, 46, 46, 46));
  EXPECT_THAT(CallIndexes(r), ElementsAre(1, 2, 3, 1, 2, 3));
  EXPECT_THAT(Tasks(r), ElementsAre("llama ?B F16 pp16", "llama ?B F16 pp16", "llama ?B F16 pp16",
                                    "llama ?B F16 tg16", "llama ?B F16 tg16", "llama ?B F16 tg16"));
  const v1::RunRecord& first = r.records[0];
  EXPECT_EQ(first.backend(), "llama-bench");
  EXPECT_EQ(first.mode(), "cpu");
  EXPECT_EQ(first.phase(), v1::PHASE_WARM);
  EXPECT_EQ(first.status().code(), v1::RunStatus::CODE_OK);
  EXPECT_EQ(first.provenance().kind(), v1::Provenance::KIND_FILE);
  EXPECT_EQ(first.provenance().file(), path);
  EXPECT_EQ(first.start_time().seconds(), 1795998513);  // 2026-11-30T00:28:33Z
  EXPECT_EQ(first.wall_duration().nanos(), 196844);
  EXPECT_EQ(MetricUnit(first, "tokens_per_second"), "tokens/s");
  EXPECT_EQ(MetricValue(first, "tokens"), 16);
  EXPECT_FALSE(first.simulated());
  EXPECT_EQ(first.agent_version(), "");
  EXPECT_TRUE(IsUuid(first.run_id()));
  EXPECT_NE(r.records[0].run_id(), r.records[1].run_id());
}

TEST(LlamaBenchTest, JsonlGivesTheSameRecordsAsJson) {
  const std::string path = Fixture("llama-bench/llama-bench.jsonl");
  ReadResult jsonl = ReadOk({path});
  ReadResult json = ReadOk({Fixture("llama-bench/llama-bench.json")});
  ASSERT_EQ(jsonl.records.size(), json.records.size());
  EXPECT_THAT(Figures(jsonl, "tokens_per_second"), ElementsAre(74369.8, 89829.1, 92981.6, 9362.42, 9540.78, 9872.16));
  EXPECT_THAT(Lines(jsonl), ElementsAre(1, 1, 1, 2, 2, 2));
  EXPECT_EQ(Tasks(jsonl), Tasks(json));
  EXPECT_EQ(CallIndexes(jsonl), CallIndexes(json));
  for (size_t i = 0; i < json.records.size(); ++i) {
    EXPECT_EQ(jsonl.records[i].mode(), json.records[i].mode());
    EXPECT_EQ(jsonl.records[i].phase(), json.records[i].phase());
    EXPECT_EQ(jsonl.records[i].start_time().seconds(), json.records[i].start_time().seconds());
    EXPECT_EQ(jsonl.records[i].provenance().file(), path);
  }
}

TEST(LlamaBenchTest, CsvGivesOneMeanOnlyRecordPerRow) {
  const std::string path = Fixture("llama-bench/llama-bench.csv");
  ReadResult r = ReadOk({path});
  ASSERT_EQ(r.records.size(), 6u);
  EXPECT_TRUE(r.skipped.empty());
  EXPECT_THAT(Figures(r, "tokens_per_second"),
              ElementsAre(57648.602630, 68915.723365, 6507.534010, 92520.955595, 119095.964761, 10131.450931));
  EXPECT_THAT(Lines(r), ElementsAre(2, 3, 4, 5, 6, 7));
  EXPECT_THAT(Tasks(r), ElementsAre("llama ?B F16 pp16", "llama ?B F16 pp32", "llama ?B F16 tg16",
                                    "llama ?B F16 pp16", "llama ?B F16 pp32", "llama ?B F16 tg16"));
  // n_threads 1 and 2 are two matrix cells: each numbers its own calls.
  EXPECT_THAT(CallIndexes(r), ElementsAre(1, 1, 1, 1, 1, 1));
  EXPECT_EQ(r.records[3].matrix().at("n_threads"), "2");
  EXPECT_EQ(r.records[0].mode(), "cpu");  // -ngl -1 on a CPU-only build
  ASSERT_EQ(r.records[0].flags_size(), 1);
  EXPECT_EQ(r.records[0].flags(0).code(), "MEAN_ONLY");
  EXPECT_THAT(r.records[0].flags(0).reason(), HasSubstr("no per-repetition samples"));
}

TEST(LlamaBenchTest, JsonlWithoutSamplesGivesAMeanOnlyRecordAndABadLineIsSkipped) {
  const std::string path = testing::MakeTempDir("synth") + "/old-bench.jsonl";
  WriteFile(path,
            "{\"model_type\": \"m\", \"n_prompt\": 512, \"n_gen\": 0, \"n_gpu_layers\": 99, "
            "\"avg_ns\": 2000000, \"avg_ts\": 256000.5, \"stddev_ts\": 10}\n"
            "{\"avg_ts\": \n");
  ReadResult r = ReadOk({path});
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].task(), "m pp512");
  EXPECT_EQ(r.records[0].mode(), "gpu");
  EXPECT_EQ(MetricValue(r.records[0], "tokens_per_second"), 256000.5);
  ASSERT_EQ(r.records[0].flags_size(), 1);
  EXPECT_EQ(r.records[0].flags(0).code(), "MEAN_ONLY");
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0].path, path);
  EXPECT_EQ(r.skipped[0].line, 2u);
  EXPECT_EQ(r.skipped[0].reason, "malformed JSON line");
}

// Found by the llama_bench_json and llama_bench_csv fuzz targets: numbers beyond int64_t were
// converted (undefined behaviour). An out-of-range sample is skipped; an out-of-range count is 0.
TEST(LlamaBenchTest, NumbersOutOfRangeAreSkippedOrIgnored) {
  const std::string dir = testing::MakeTempDir("synth");
  WriteFile(dir + "/huge.jsonl",
            "{\"model_type\": \"m\", \"n_prompt\": 1e300, \"n_gen\": 16, \"avg_ts\": 2, "
            "\"samples_ts\": [1, 2], \"samples_ns\": [1000, 1.8e32]}\n");
  WriteFile(dir + "/huge.csv", "build_commit,model_type,n_prompt,n_gen,avg_ns,avg_ts\nabc,m,16,-3.3e74,1000,10.5\n");
  ReadResult r = ReadOk({dir + "/huge.jsonl", dir + "/huge.csv"});
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_THAT(Tasks(r), ElementsAre("m tg16", "m pp16"));
  EXPECT_EQ(r.records[0].wall_duration().nanos(), 1000);
  EXPECT_EQ(MetricValue(r.records[0], "tokens"), 16);
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0].line, 1u);
  EXPECT_EQ(r.skipped[0].reason, "sample 2 has samples_ns out of range");
}

TEST(LlamaBenchTest, MarkdownIsSkippedWithAReason) {
  const std::string md = Fixture("llama-bench/llama-bench.md");
  ReadResult r = ReadOk({md, Fixture("llama-bench/llama-bench.json")});
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0].path, md);
  EXPECT_THAT(r.skipped[0].reason, HasSubstr("use llama-bench -o json"));
}

TEST(ComfyUiLogTest, OneRunPerPromptExecutedLine) {
  const std::string path = Fixture("comfyui/server_log.txt");
  ReadResult r = ReadOk({path});
  ASSERT_EQ(r.records.size(), 8u);
  EXPECT_TRUE(r.skipped.empty());
  EXPECT_THAT(Lines(r), ElementsAre(58, 60, 62, 64, 66, 68, 70, 96));
  EXPECT_EQ(r.records[0].phase(), v1::PHASE_COLD);
  EXPECT_EQ(r.records[0].call_index(), 1u);
  EXPECT_EQ(r.records[1].phase(), v1::PHASE_WARM);
  EXPECT_THAT(CallIndexes(r), ElementsAre(1, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_EQ(r.records[0].backend(), "comfyui");
  EXPECT_EQ(r.records[0].task(), "comfyui-log");
  EXPECT_EQ(r.records[0].mode(), "");
  EXPECT_EQ(MetricValue(r.records[0], "wall_seconds"), 0.13);
  EXPECT_EQ(r.records[0].wall_duration().nanos(), 130000000);
  // Cached runs (0.00 s): run2 (identical to run1) and run4 (only SaveImage ran). A log has no
  // execution_cached report: the verdict is by timing, and says so.
  for (size_t i : {1u, 3u}) {
    ASSERT_EQ(r.records[i].flags_size(), 1) << i;
    EXPECT_EQ(r.records[i].flags(0).code(), "CACHE_HIT");
    EXPECT_EQ(r.records[i].flags(0).reason(),
              "\"Prompt executed in 0.00 seconds\": inferred from timing (a server log holds no execution_cached "
              "report): ComfyUI printed 0.00 s, as it does when its outputs come from the execution cache");
  }
  for (size_t i : {0u, 2u, 4u, 5u, 6u}) {
    EXPECT_EQ(r.records[i].flags_size(), 0) << i;
    EXPECT_EQ(r.records[i].status().code(), v1::RunStatus::CODE_OK) << i;
  }
  // run8: the runtime error, then "Prompt executed in 0.01 seconds".
  const v1::RunRecord& failed = r.records[7];
  EXPECT_EQ(failed.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(failed.status().message(),
            "Argument #4: Padding size should be less than the corresponding input dimension, but got: "
            "padding (10, 10) at dimension 3 of input 4");
  EXPECT_THAT(failed.status().log_tail(), HasSubstr("RuntimeError: Argument #4"));
  EXPECT_EQ(failed.metrics_size(), 0);
}

// Found by the comfyui_log fuzz target: a duration beyond int64_t milliseconds was converted
// (undefined behaviour). Its line is skipped.
TEST(ComfyUiLogTest, DurationOutOfRangeIsSkipped) {
  const std::string path = testing::MakeTempDir("synth") + "/comfyui.log";
  WriteFile(path, "got prompt\nPrompt executed in 44444444444444444440.13 seconds\n"
                  "got prompt\nPrompt executed in 0.13 seconds\n");
  ReadResult r = ReadOk({path});
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_THAT(Lines(r), ElementsAre(4));
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0].line, 2u);
  EXPECT_EQ(r.skipped[0].reason,
            "duration out of range in \"Prompt executed in 44444444444444444440.13 seconds\"");
}

TEST(LlamaServerLogTest, PerRequestTimingsWithFileLines) {
  const std::string path = Fixture("llama-server/startup.log");
  ReadResult r = ReadOk({path});
  ASSERT_EQ(r.records.size(), 7u);
  EXPECT_TRUE(r.skipped.empty());
  EXPECT_THAT(Lines(r), ElementsAre(17, 24, 31, 38, 45, 52, 59));
  EXPECT_THAT(CallIndexes(r), ElementsAre(1, 1, 2, 3, 4, 5, 6));
  EXPECT_EQ(r.records[0].phase(), v1::PHASE_COLD);
  EXPECT_EQ(r.records[1].phase(), v1::PHASE_WARM);
  const v1::RunRecord& first = r.records[0];
  EXPECT_EQ(first.backend(), "llama-server");
  EXPECT_EQ(first.task(), "tiny.gguf");
  EXPECT_EQ(MetricValue(first, "prompt_n"), 11);
  EXPECT_DOUBLE_EQ(MetricValue(first, "prompt_seconds"), 0.00437);
  EXPECT_EQ(MetricValue(first, "prompt_per_second"), 2519.47);
  EXPECT_EQ(MetricValue(first, "predicted_n"), 24);
  EXPECT_DOUBLE_EQ(MetricValue(first, "predicted_seconds"), 0.00578);
  EXPECT_EQ(MetricValue(first, "predicted_per_second"), 3979.93);
  EXPECT_DOUBLE_EQ(MetricValue(first, "wall_seconds"), 0.01014);
  EXPECT_EQ(MetricUnit(first, "predicted_per_second"), "tokens/s");
  EXPECT_EQ(first.wall_duration().nanos(), 10140000);
  EXPECT_EQ(MetricValue(r.records[5], "prompt_n"), 37);
  EXPECT_EQ(first.memory_size(), 0);  // this log prints no buffer sizes
}

TEST(LlamaServerLogTest, BufferSizesWithFileLines) {
  const std::string path = Fixture("llama-server/startup_verbose_lv4.log");
  ReadResult r = ReadOk({path});
  ASSERT_EQ(r.records.size(), 1u);
  const v1::RunRecord& rec = r.records[0];
  EXPECT_EQ(rec.provenance().line(), 205u);
  EXPECT_EQ(rec.phase(), v1::PHASE_COLD);
  EXPECT_EQ(MetricValue(rec, "predicted_per_second"), 1822.65);
  ASSERT_EQ(rec.memory_size(), 4);
  EXPECT_EQ(rec.memory(0).kind(), v1::MEMORY_KIND_HOST_BUFFER);
  EXPECT_EQ(rec.memory(0).scope(), "CPU_Mapped model");
  EXPECT_EQ(rec.memory(0).bytes(), 8357151u);  // 7.97 MiB
  EXPECT_EQ(rec.memory(0).source(), path + ":116");
  EXPECT_EQ(rec.memory(1).scope(), "CPU output");
  EXPECT_EQ(rec.memory(1).source(), path + ":132");
  EXPECT_EQ(rec.memory(2).scope(), "CPU KV");
  EXPECT_EQ(rec.memory(2).bytes(), 125829u);  // 0.12 MiB
  EXPECT_EQ(rec.memory(2).source(), path + ":133");
  EXPECT_EQ(rec.memory(3).scope(), "CPU compute");
  EXPECT_EQ(rec.memory(3).source(), path + ":148");
}

TEST(LlamaServerLogTest, WhatTheServerRanOnIsInTheParams) {
  const ReadResult r = ReadOk({Fixture("llama-server/startup_verbose_lv4.log")});
  ASSERT_EQ(r.records.size(), 1u);
  const v1::RunRecord& rec = r.records[0];
  EXPECT_EQ(rec.params().at("devices"), "none (warning: no usable GPU found, --gpu-layers option will be ignored)");
  EXPECT_EQ(rec.params().at("offloaded_layers"), "0/0");
  EXPECT_EQ(rec.params().at("build"), "10587 (3f545becc) with GNU 12.2.0 for Linux x86_64");
  EXPECT_FALSE(rec.simulated());
  EXPECT_FALSE(rec.params().contains("simulated_by"));
}

// One request's print_timing lines, as in the capture startup.log.
constexpr char kOneRequest[] =
    "0.00.122.398 I slot print_timing: id  3 | task 2 | prompt eval time =       4.37 ms /    11 tokens (    0.40 ms "
    "per token,  2519.47 tokens per second)\n"
    "0.00.122.402 I slot print_timing: id  3 | task 2 |        eval time =       5.78 ms /    24 tokens (    0.25 ms "
    "per token,  3979.93 tokens per second)\n"
    "0.00.122.403 I slot print_timing: id  3 | task 2 |       total time =      10.14 ms /    35 tokens\n";

// The guide's reader labels buffers by the same rule as the agent (common/llama_cpp_log.h): a
// CPU-only Xeon's AMX buffer is host memory (fixture written from llama.cpp's source).
TEST(LlamaServerLogTest, BuffersAreLabelledByTheDevicesTheLogReports) {
  const std::string path = testing::MakeTempDir("synth") + "/xeon.log";
  std::ifstream fixture(Fixture("llama-server/cpu_amx_xeon_lv4.log"));
  const std::string xeon_log((std::istreambuf_iterator<char>(fixture)), std::istreambuf_iterator<char>());
  WriteFile(path, xeon_log + kOneRequest);
  const ReadResult r = ReadOk({path});
  ASSERT_EQ(r.records.size(), 1u);
  const v1::RunRecord& rec = r.records[0];
  ASSERT_EQ(rec.memory_size(), 4);
  EXPECT_EQ(rec.memory(1).scope(), "AMX model");
  for (const v1::MemoryFigure& f : rec.memory()) EXPECT_EQ(f.kind(), v1::MEMORY_KIND_HOST_BUFFER) << f.scope();

  // The same buffer lines with no device report at all: unknown, never device memory.
  const std::string silent = testing::MakeTempDir("synth") + "/silent.log";
  WriteFile(silent, std::string("load_tensors:        CUDA0 model buffer size =  1918.35 MiB\n") + kOneRequest);
  const ReadResult u = ReadOk({silent});
  ASSERT_EQ(u.records.size(), 1u);
  ASSERT_EQ(u.records[0].memory_size(), 1);
  EXPECT_EQ(u.records[0].memory(0).kind(), v1::MEMORY_KIND_BUFFER_UNKNOWN);
}

// A simulator's log (tests/sim/llama_server's build line): every record simulated, saying why.
TEST(LlamaServerLogTest, ASimulatorsLogGivesSimulatedRecords) {
  const std::string path = testing::MakeTempDir("synth") + "/sim.log";
  WriteFile(path,
            "0.00.000.010 I cmn  common_param: common_params_print_info: build 10587 (benchfleet-sim (SIMULATED)) "
            "with GNU 12.2.0 for Linux x86_64\n" +
                std::string(kOneRequest));
  const ReadResult r = ReadOk({path});
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_TRUE(r.records[0].simulated());
  EXPECT_EQ(r.records[0].params().at("simulated_by"),
            "build line 1: 10587 (benchfleet-sim (SIMULATED)) with GNU 12.2.0 for Linux x86_64");
}

TEST(GenericCsvTest, ReadsRowsAndSkipsABadLineWithItsPathAndLine) {
  const std::string path = testing::MakeTempDir("synth") + "/runs.generic.csv";
  WriteFile(path,
            "machine,task,backend,mode,phase,call_index,wall_seconds,metric,value,unit,status\n"
            "m1,txt2img,comfyui,gpu,cold,,2.5,,,,ok\n"
            "m1,txt2img,comfyui,gpu,warm,,1.25,images_per_second,0.8,images/s,\n"
            "m1,txt2img,comfyui,gpu,warm,,,,,,\"failed: out of memory\"\n"
            "m1,txt2img,comfyui,gpu,hot,,1.0,,,,ok\n"
            "m2,chat,llama-server,,,7,,tokens_per_second,42,tokens/s,ok\n");
  ReadResult r = ReadOk({path});
  ASSERT_EQ(r.records.size(), 4u);
  EXPECT_THAT(Lines(r), ElementsAre(2, 3, 4, 6));
  EXPECT_THAT(CallIndexes(r), ElementsAre(1, 1, 2, 7));
  EXPECT_EQ(r.records[0].phase(), v1::PHASE_COLD);
  EXPECT_EQ(r.records[0].params().at("machine"), "m1");
  EXPECT_EQ(MetricValue(r.records[0], "wall_seconds"), 2.5);
  EXPECT_EQ(MetricValue(r.records[1], "images_per_second"), 0.8);
  EXPECT_EQ(MetricUnit(r.records[1], "images_per_second"), "images/s");
  EXPECT_EQ(r.records[2].status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(r.records[2].status().message(), "out of memory");
  EXPECT_EQ(r.records[3].backend(), "llama-server");
  EXPECT_EQ(r.records[3].phase(), v1::PHASE_WARM);
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0].path, path);
  EXPECT_EQ(r.skipped[0].line, 5u);
  EXPECT_EQ(r.skipped[0].reason, "phase \"hot\" is not cold, warm, validation or blank");
}

TEST(SeriesFolderReadTest, ReadsRunsJsonlThroughReadRecords) {
  const std::string dir = testing::MakeTempDir("synth") + "/series";
  {
    auto writer = SeriesFolderWriter::Open(Env::Default(), dir, v1::MachineConditions());
    ASSERT_TRUE(writer.ok()) << writer.status();
    v1::RunRecord record;
    record.set_run_id("11111111-1111-4111-8111-111111111111");
    record.set_task("t");
    record.set_call_index(1);
    ASSERT_TRUE((*writer)->Add(record).ok());
    record.set_run_id("22222222-2222-4222-8222-222222222222");
    record.set_call_index(2);
    ASSERT_TRUE((*writer)->Add(record).ok());
  }
  ReadResult from_dir = ReadOk({dir});
  ASSERT_EQ(from_dir.records.size(), 2u);
  EXPECT_EQ(from_dir.records[1].run_id(), "22222222-2222-4222-8222-222222222222");
  ReadResult from_file = ReadOk({dir + "/runs.jsonl"});
  EXPECT_EQ(from_file.records.size(), 2u);
  // runs.csv alone is not read.
  ReadResult with_csv = ReadOk({dir, dir + "/runs.csv"});
  EXPECT_EQ(with_csv.records.size(), 2u);
  ASSERT_EQ(with_csv.skipped.size(), 1u);
  EXPECT_THAT(with_csv.skipped[0].reason, HasSubstr("read runs.jsonl instead"));
}

TEST(SeriesFolderReadTest, KeepsTheSeriesConditionsByFingerprint) {
  const std::string dir = testing::MakeTempDir("synth") + "/series";
  v1::MachineConditions conditions;
  conditions.set_hostname("gpu-01");
  (*conditions.mutable_labels())["class"] = "a100";
  conditions.set_fingerprint(ConditionsFingerprint(conditions));
  {
    auto writer = SeriesFolderWriter::Open(Env::Default(), dir, conditions);
    ASSERT_TRUE(writer.ok()) << writer.status();
    v1::RunRecord record;
    record.set_run_id("11111111-1111-4111-8111-111111111111");
    record.set_conditions_fingerprint(conditions.fingerprint());
    ASSERT_TRUE((*writer)->Add(record).ok());
  }
  ReadResult read = ReadOk({dir});
  ASSERT_EQ(read.conditions.size(), 1u);
  ASSERT_TRUE(read.conditions.contains(read.records[0].conditions_fingerprint()));
  EXPECT_EQ(read.conditions.at(read.records[0].conditions_fingerprint()).hostname(), "gpu-01");
}

// llama-server-sim's build (tests/sim/llama_server: build 10587, commit "benchfleet-sim
// (SIMULATED)") as llama-bench would print it: the records are simulated, and say why.
TEST(LlamaBenchTest, ABuildThatSaysSimulatedMakesEveryRecordSimulated) {
  const std::string dir = testing::MakeTempDir("synth");
  WriteFile(dir + "/sim.jsonl",
            "{\"build_commit\": \"benchfleet-sim (SIMULATED)\", \"build_number\": 10587, \"model_type\": \"m\", "
            "\"n_prompt\": 0, \"n_gen\": 16, \"avg_ns\": 2000000, \"avg_ts\": 8000, "
            "\"samples_ns\": [2000000, 2000000], \"samples_ts\": [8000, 8000]}\n"
            "{\"build_commit\": \"1a2b3c4d\", \"build_number\": 10587, \"model_type\": \"m\", "
            "\"n_prompt\": 0, \"n_gen\": 16, \"avg_ns\": 2000000, \"avg_ts\": 8000, "
            "\"samples_ns\": [2000000], \"samples_ts\": [8000]}\n");
  ReadResult r = ReadOk({dir + "/sim.jsonl"});
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_TRUE(r.records[0].simulated());
  EXPECT_TRUE(r.records[1].simulated());
  EXPECT_EQ(r.records[0].params().at("simulated_by"), "build_commit: benchfleet-sim (SIMULATED)");
  EXPECT_FALSE(r.records[2].simulated());
  EXPECT_EQ(r.records[2].params().count("simulated_by"), 0u);
}

TEST(GenericCsvTest, ABackendOrMachineThatSaysSimulatedMakesTheRowSimulated) {
  const std::string path = testing::MakeTempDir("synth") + "/runs.generic.csv";
  WriteFile(path,
            "machine,task,backend,mode,phase,call_index,wall_seconds,metric,value,unit,status\n"
            "m1,chat,llama-server-sim (SIMULATED),gpu,warm,,1.5,,,,ok\n"
            "SIMULATED host,chat,llama-server,gpu,warm,,1.5,,,,ok\n"
            "m1,chat,llama-server,gpu,warm,,1.5,,,,ok\n");
  ReadResult r = ReadOk({path});
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_TRUE(r.records[0].simulated());
  EXPECT_EQ(r.records[0].params().at("simulated_by"), "backend: llama-server-sim (SIMULATED)");
  EXPECT_TRUE(r.records[1].simulated());
  EXPECT_EQ(r.records[1].params().at("simulated_by"), "machine: SIMULATED host");
  EXPECT_FALSE(r.records[2].simulated());
}

// Records an openai backend stored before it read every answer's system_fingerprint said
// simulated: false; a series whose conditions' versions say SIMULATED is simulated throughout.
TEST(SeriesFolderReadTest, RecordsOrConditionsThatSaySimulatedAreReadAsSimulated) {
  const std::string dir = testing::MakeTempDir("synth");
  const std::string plain = dir + "/plain";
  {
    auto writer = SeriesFolderWriter::Open(Env::Default(), plain, v1::MachineConditions());
    ASSERT_TRUE(writer.ok()) << writer.status();
    v1::RunRecord record;
    record.set_run_id("11111111-1111-4111-8111-111111111111");
    (*record.mutable_params())["system_fingerprint"] = "benchfleet-sim (SIMULATED)";
    ASSERT_TRUE((*writer)->Add(record).ok());
    record.set_run_id("22222222-2222-4222-8222-222222222222");
    (*record.mutable_params())["system_fingerprint"] = "fp_3b9a4d1c";
    ASSERT_TRUE((*writer)->Add(record).ok());
  }
  ReadResult r = ReadOk({plain});
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_TRUE(r.records[0].simulated());
  EXPECT_EQ(r.records[0].params().at("simulated_by"), "system_fingerprint: benchfleet-sim (SIMULATED)");
  EXPECT_FALSE(r.records[1].simulated());

  const std::string sim = dir + "/sim";
  v1::MachineConditions conditions;
  (*conditions.mutable_backend_versions())["llama-server"] = "b10587-benchfleet-sim (SIMULATED)";
  {
    auto writer = SeriesFolderWriter::Open(Env::Default(), sim, conditions);
    ASSERT_TRUE(writer.ok()) << writer.status();
    v1::RunRecord record;
    record.set_run_id("33333333-3333-4333-8333-333333333333");
    ASSERT_TRUE((*writer)->Add(record).ok());
  }
  ReadResult s = ReadOk({sim});
  ASSERT_EQ(s.records.size(), 1u);
  EXPECT_TRUE(s.records[0].simulated());
  EXPECT_EQ(s.records[0].params().at("simulated_by"),
            "conditions backend_versions[llama-server]: b10587-benchfleet-sim (SIMULATED)");
}

TEST(SeriesFolderReadTest, BadLineOfRunsJsonlSkipsOnlyItself) {
  const std::string path = testing::MakeTempDir("synth") + "/runs.jsonl";
  WriteFile(path, "{\"run_id\": \"11111111-1111-4111-8111-111111111111\"}\n{not json\n"
                  "{\"run_id\": \"22222222-2222-4222-8222-222222222222\"}\n");
  ReadResult r = ReadOk({path});
  EXPECT_EQ(r.records.size(), 2u);
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0].line, 2u);
}

TEST(ReadMeasurementFilesTest, MissingPathIsSkippedAndTheRestKept) {
  const std::string missing = testing::MakeTempDir("synth") + "/nope.json";
  ReadResult r = ReadOk({missing, Fixture("comfyui/server_log.txt")});
  EXPECT_EQ(r.records.size(), 8u);
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0].path, missing);
  EXPECT_EQ(r.skipped[0].line, 0u);
  EXPECT_EQ(r.skipped[0].reason, "no such file or directory");
}

TEST(ReadMeasurementFilesTest, NothingReadableIsInvalidArgument) {
  const std::string dir = testing::MakeTempDir("synth");
  WriteFile(dir + "/junk.txt", "hello\nworld\n");
  WriteFile(dir + "/empty.log", "");
  auto result = ReadMeasurementFiles(Env::Default(), {dir + "/missing", dir + "/junk.txt", dir + "/empty.log"});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("no records in " + dir + "/missing, " + dir + "/junk.txt, " + dir + "/empty.log ("));
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("junk.txt: unrecognised format"));
}

TEST(ReadMeasurementFilesTest, MalformedLlamaBenchJsonIsSkippedWithItsLine) {
  const std::string path = testing::MakeTempDir("synth") + "/bench.json";
  WriteFile(path, "[\n  {\"avg_ts\": 1,\n  \"samples_ts\": [1 2]}\n]\n");
  auto result = ReadMeasurementFiles(Env::Default(), {path, Fixture("llama-bench/llama-bench.json")});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->skipped.size(), 1u);
  EXPECT_EQ(result->skipped[0].line, 3u);
  EXPECT_THAT(result->skipped[0].reason, HasSubstr("malformed llama-bench JSON"));
}

TEST(ReadMeasurementFilesTest, RereadingGivesIdenticalRunIds) {
  const std::vector<std::string> paths = {
      Fixture("llama-bench/llama-bench.json"), Fixture("llama-bench/llama-bench.jsonl"),
      Fixture("llama-bench/llama-bench.csv"), Fixture("comfyui/server_log.txt"),
      Fixture("llama-server/startup.log"), Fixture("llama-server/startup_verbose_lv4.log")};
  ReadResult a = ReadOk(paths);
  ReadResult b = ReadOk(paths);
  ASSERT_EQ(a.records.size(), 6u + 6u + 6u + 8u + 7u + 1u);
  ASSERT_EQ(a.records.size(), b.records.size());
  std::set<std::string> ids;
  for (size_t i = 0; i < a.records.size(); ++i) {
    EXPECT_EQ(a.records[i].run_id(), b.records[i].run_id());
    EXPECT_TRUE(IsUuid(a.records[i].run_id()));
    ids.insert(a.records[i].run_id());
  }
  EXPECT_EQ(ids.size(), a.records.size());
}

}  // namespace
}  // namespace benchfleet::synthesis
