// The simulator's pure parts against the real captures: the bodies it builds from the captured
// values must be the captured bytes, the buffer lines and memory table the captured lines.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/sim/llama_server/memory_layout.h"
#include "tests/sim/llama_server/responses.h"
#include "tests/sim/llama_server/sim_options.h"
#include "tests/sim/llama_server/token_model.h"
#include "tests/sim/sim_test_support.h"

namespace benchfleet::sim {
namespace {

using ::testing::ElementsAre;
using testing::Fixture;
using testing::LogMessages;
using testing::ParseCapture;

const char kCapturePrompt[] = "Explain in one sentence what a GPU is.";

// The lines of startup_verbose_lv4.log (without timestamps) that start with `prefix`.
std::vector<std::string> CapturedLines(const std::string& prefix) {
  std::vector<std::string> out;
  for (const std::string& m : LogMessages(Fixture("startup_verbose_lv4.log"))) {
    if (m.rfind("I " + prefix, 0) == 0) out.push_back(m.substr(2));
  }
  return out;
}

// The options of the captures: -c 256 -ngl 0 on a CPU-only build.
SimOptions CaptureOptions() {
  SimOptions o;
  o.model_path = "tiny.gguf";
  o.ctx_size = 256;
  o.n_gpu_layers = 0;
  o.n_gpu_layers_given = true;
  o.sim_gpu_device = "none";
  return o;
}

TEST(TokenModelTest, CountsTheCapturePromptAsTheRealModelDid) {
  const std::vector<int32_t> ids = Tokenize(kCapturePrompt, true);
  EXPECT_EQ(ids.size(), 11u);  // tokens_evaluated in completion_1.txt
  EXPECT_EQ(ids[0], kBosToken);
  EXPECT_EQ(Tokenize("", true), std::vector<int32_t>{kBosToken});
  EXPECT_EQ(Tokenize("abcdefghi  xyz", false).size(), 4u);  // 3 + 1
  EXPECT_EQ(Tokenize("Explain", false), Tokenize("Explain   ", false));
  EXPECT_EQ(DetokenizePrompt(kCapturePrompt, true), "<s> Explain in one sentence what a GPU is.");
}

TEST(TokenModelTest, GeneratesTheSameTextForTheSameSeedAndPrompt) {
  Generator a(42, kCapturePrompt), b(42, kCapturePrompt), c(43, kCapturePrompt), d(42, "Other prompt.");
  std::string ta, tb, tc, td;
  for (int i = 0; i < 24; i++) {
    ta += a.Next(false).text;
    tb += b.Next(false).text;
    tc += c.Next(false).text;
    td += d.Next(false).text;
  }
  EXPECT_EQ(ta, tb);
  EXPECT_NE(ta, tc);
  EXPECT_NE(ta, td);
  Generator e(42, kCapturePrompt);
  std::string te;
  for (int i = 0; i < 8; i++) te += e.Next(false).text;
  EXPECT_EQ(ta.substr(0, te.size()), te);  // n_predict only cuts the same text shorter
}

TEST(TokenModelTest, EndsOnEosOnlyWhenAllowed) {
  Generator g(7, "x");
  const int n = g.natural_length();
  EXPECT_GE(n, 16);
  EXPECT_LE(n, 64);
  for (int i = 0; i < n; i++) EXPECT_NE(g.Next(true).id, kEosToken);
  EXPECT_EQ(g.Next(true).id, kEosToken);
  EXPECT_NE(g.Next(false).id, kEosToken);
}

TEST(ResponsesTest, CompletionBodyIsTheCapturedBytesForTheCapturedValues) {
  const testing::Response capture = ParseCapture(Fixture("completion_1.txt"));
  const Json captured = Json::parse(capture.body);
  CompletionResult r;
  r.content = captured["content"];
  r.id_slot = 3;
  r.model = "tiny.gguf";
  r.tokens_predicted = 24;
  r.tokens_evaluated = 11;
  r.params.seed = 42;
  r.params.temperature = 0;
  r.params.n_predict = 24;
  r.prompt = DetokenizePrompt(kCapturePrompt, true);
  r.stop_type = "limit";
  r.tokens_cached = 34;
  r.timings = Timings{0, 11, 4366, 24, 5779};
  EXPECT_EQ(Dump(CompletionJson(r)), capture.body);
}

TEST(ResponsesTest, StreamChunksAreTheCapturedBytes) {
  const std::string body = ParseCapture(Fixture("completion_stream.txt")).body;
  EXPECT_EQ(body.substr(0, body.find("\n\n") + 2),
            "data: " + Dump(CompletionChunkJson(" Після", 25563, 1, 11)) + "\n\n");
  const std::string last = body.substr(body.rfind("data: ") + 6);
  CompletionResult r;
  r.content = "";
  r.id_slot = 3;
  r.model = "tiny.gguf";
  r.tokens_predicted = 24;
  r.tokens_evaluated = 11;
  r.params.seed = 42;
  r.params.temperature = 0;
  r.params.n_predict = 24;
  r.params.stream = true;
  r.prompt = DetokenizePrompt(kCapturePrompt, true);
  r.stop_type = "limit";
  r.tokens_cached = 34;
  r.timings = Timings{0, 11, 611, 24, 6061};
  EXPECT_EQ(Dump(CompletionJson(r)) + "\n\n", last);
}

TEST(ResponsesTest, OpenAiBodiesAreTheCapturedBytes) {
  const std::string plain = ParseCapture(Fixture("v1_completions.txt")).body;
  CompletionResult r;
  r.content = Json::parse(plain)["choices"][0]["text"];
  r.tokens_predicted = 24;
  r.tokens_evaluated = 11;
  r.stop_type = "limit";
  r.timings = Timings{0, 11, 580, 24, 4751};
  OaiContext c{1795997076, "chatcmpl-wd8Q81bnno9rXHk7LglotAwXiIo5y1ML", "tiny.gguf", "b10587-3f545becc"};
  EXPECT_EQ(Dump(OaiCompletionJson(r, c)), plain);

  const std::string stream = ParseCapture(Fixture("v1_completions_stream.txt")).body;
  OaiContext s{1795997076, "chatcmpl-UoPgqCJJzjSe5f5EXlvX4VEWz28nl28e", "tiny.gguf", "b10587-3f545becc"};
  EXPECT_EQ(stream.substr(0, stream.find("\n\n") + 2), "data: " + Dump(OaiChunkJson(" Після", nullptr, s)) + "\n\n");
  r.content = "";
  r.timings = Timings{0, 11, 616, 24, 5460};
  const std::string tail = "data: " + Dump(OaiChunkJson("", &r, s)) + "\n\ndata: [DONE]\n\n";
  EXPECT_EQ(stream.substr(stream.size() - tail.size()), tail);
}

TEST(ResponsesTest, PropsBodyIsTheCapturedBytesForTheCapturedValues) {
  const std::string body = ParseCapture(Fixture("props.txt")).body;
  PropsInput in;
  in.n_ctx_slot = 256;
  in.total_slots = 4;
  in.model_alias = "tiny.gguf";
  in.model_path = "tiny.gguf";
  in.media_marker = Json::parse(body)["media_marker"];
  in.endpoint_slots = true;
  in.endpoint_props = false;
  in.endpoint_metrics = true;
  in.build_info = "b10587-3f545becc";
  EXPECT_EQ(Dump(PropsJson(in)), body);
}

TEST(ResponsesTest, ErrorBodiesAreTheCapturedBytes) {
  EXPECT_EQ(LoadingBody(), ParseCapture(Fixture("health_loading.txt")).body);
  EXPECT_EQ(Dump(ExceedContextJson(1491, 256)), ParseCapture(Fixture("error_prompt_too_long.txt")).body);
  EXPECT_EQ(Dump(ErrorJson(500,
                           "[json.exception.parse_error.101] parse error at line 1, column 36: syntax error while "
                           "parsing object key - unexpected end of input; expected string literal",
                           "server_error")),
            ParseCapture(Fixture("error_malformed_json.txt")).body);
}

TEST(ResponsesTest, MetricsTextIsTheCapturedBytesForTheCapturedValues) {
  MetricsInput m;
  m.prompt_tokens_total = 129;
  m.prompt_seconds_total = 0.00764;
  m.tokens_predicted_total = 168;
  m.tokens_predicted_seconds_total = 0.03849;
  m.n_decode_total = 168;
  m.n_tokens_max = 60;
  m.prompt_tokens_seconds = 1e3 / 7.64 * 129;
  m.predicted_tokens_seconds = 1e3 / 38.49 * 161;
  m.n_busy_slots_per_decode = 1;
  EXPECT_EQ(MetricsText(m), ParseCapture(Fixture("metrics_after.txt")).body);
}

TEST(ResponsesTest, ReadsRequestFieldsAsFloatsLikeLlamaCpp) {
  const SamplingParams p = ReadSamplingParams(
      Json::parse(R"({"temperature":0.7,"seed":-1,"max_tokens":5,"stop":"x","top_k":"bad"})"), SamplingParams(), true);
  const Json g = GenerationSettings(p);
  EXPECT_EQ(g["temperature"].dump(), "0.699999988079071");
  EXPECT_EQ(g["seed"].get<uint32_t>(), 4294967295u);
  EXPECT_EQ(g["n_predict"].get<int>(), 5);
  EXPECT_EQ(g["max_tokens"].get<int>(), 5);
  EXPECT_EQ(g["stop"].dump(), R"(["x"])");
  EXPECT_EQ(g["top_k"].get<int>(), 40);  // a wrong type keeps the default
}

TEST(MemoryLayoutTest, CpuBuffersAreTheCapturedLines) {
  const MemoryLayout m = ComputeLayout(CaptureOptions());
  EXPECT_EQ(ModelBufferLines(m), CapturedLines("load_tensors:   CPU_Mapped"));
  EXPECT_EQ(std::vector<std::string>{OutputBufferLine(m)}, CapturedLines("llama_context:        CPU  output"));
  std::vector<std::string> kv = CapturedLines("llama_kv_cache:        CPU KV");
  for (const std::string& s : CapturedLines("llama_kv_cache: size")) kv.push_back(s);
  EXPECT_EQ(KvBufferLines(m), kv);
  EXPECT_EQ(ComputeBufferLines(m), CapturedLines("sched_reserve:        CPU compute"));
}

TEST(MemoryLayoutTest, CpuBreakdownTableIsTheCapturedTable) {
  const MemoryLayout m = ComputeLayout(CaptureOptions());
  HostInfo host{"AMD EPYC", 24105 * kMiB};
  const std::vector<std::string> captured = CapturedLines("common_memory_breakdown_print");
  ASSERT_GE(captured.size(), 2u);
  EXPECT_EQ(BreakdownTable(m, false), std::vector<std::string>(captured.begin(), captured.begin() + 2));
  std::vector<std::string> verdict = CapturedLines("common_params_fit_impl: projected");
  verdict.push_back(CapturedLines("common_params_fit_impl: will leave").at(0));
  EXPECT_EQ(FitVerdictLines(m, host), verdict);
}

TEST(MemoryLayoutTest, FullOffloadPutsTheLayersOnTheDevice) {
  SimOptions o = CaptureOptions();
  o.sim_gpu_device = "CUDA0";
  o.n_gpu_layers = 99;
  const MemoryLayout m = ComputeLayout(o);
  EXPECT_THAT(ModelBufferLines(m), ElementsAre("load_tensors: offloading output layer to GPU",
                                               "load_tensors: offloading 1 repeating layers to GPU",
                                               "load_tensors: offloaded 3/3 layers to GPU",
                                               "load_tensors:   CPU_Mapped model buffer size =     3.91 MiB",
                                               "load_tensors:        CUDA0 model buffer size =     4.06 MiB"));
  EXPECT_EQ(OutputBufferLine(m), "llama_context:  CUDA_Host  output buffer size =     0.49 MiB");
  EXPECT_THAT(KvBufferLines(m),
              ElementsAre("llama_kv_cache:      CUDA0 KV buffer size =     0.12 MiB",
                          "llama_kv_cache: size =    0.12 MiB (   256 cells,   2 layers,  4/1 seqs), K (f16):    0.06 "
                          "MiB, V (f16):    0.06 MiB"));
  EXPECT_THAT(ComputeBufferLines(m), ElementsAre("sched_reserve:      CUDA0 compute buffer size =     0.63 MiB",
                                                 "sched_reserve:  CUDA_Host compute buffer size =     0.12 MiB"));
  HostInfo host{"CPU", 24105 * kMiB};
  EXPECT_THAT(
      BreakdownTable(m, true),
      ElementsAre("common_memory_breakdown_print: | memory breakdown [MiB] | total    free    self   model   context   "
                  "compute    unaccounted |",
                  "common_memory_breakdown_print: |   - CUDA0 (RTX 4090)   | 24564 = 24075 + (   4 =     4 +       0 +  "
                  "     0) +         484 |",
                  "common_memory_breakdown_print: |   - Host               |                     4 =     3 +       0 +  "
                  "     0                |"));
  EXPECT_THAT(FitVerdictLines(m, host),
              ElementsAre("common_params_fit_impl: projected to use 4 MiB of device memory vs. 24080 MiB of free "
                          "device memory",
                          "common_params_fit_impl: will leave 24075 >= 1024 MiB of free device memory, no changes "
                          "needed"));
}

TEST(MemoryLayoutTest, ExplicitSlotsSplitTheContext) {
  SimOptions o = CaptureOptions();
  o.ctx_size = 1024;
  o.n_parallel = 2;
  o.cache_type_k = "q8_0";
  const MemoryLayout m = ComputeLayout(o);
  EXPECT_EQ(m.n_ctx_seq, 512u);
  EXPECT_FALSE(m.kv_unified);
  EXPECT_EQ(KvBufferLines(m).back(),
            "llama_kv_cache: size =    0.38 MiB (  1024 cells,   2 layers,  2/2 seqs), K (q8_0):    0.13 MiB, V "
            "(f16):    0.25 MiB");
}

TEST(SimOptionsTest, ParsesLikeLlamaServer) {
  auto parse = [](std::vector<const char*> args, SimOptions* o) {
    args.insert(args.begin(), "llama-server-sim");
    return ParseCommandLine(static_cast<int>(args.size()), args.data(), o);
  };
  SimOptions o;
  ParseResult r = parse({"-m", "x.gguf", "-ngl", "all", "-c", "512", "-fa", "-t", "4", "--sim-fail",
                         "die-on-request", "2", "--sim-throttle", "3:0.55,4:0.53", "-lv", "4", "--metrics"},
                        &o);
  EXPECT_EQ(r.outcome, ParseOutcome::kRun) << r.stderr_text;
  EXPECT_EQ(o.n_gpu_layers, 999);
  EXPECT_EQ(o.ctx_size, 512);
  EXPECT_EQ(o.sim_fail, FailMode::kDieOnRequest);
  EXPECT_EQ(o.sim_fail_n, 2);
  EXPECT_EQ(o.sim_throttle, (std::map<int64_t, double>{{3, 0.55}, {4, 0.53}}));
  EXPECT_EQ(o.verbosity, 4);
  EXPECT_TRUE(o.metrics);

  SimOptions o2;
  r = parse({"-m", "x", "--sim-fail", "hang-on-request:3", "-fa", "on", "--log-verbosity", "2"}, &o2);
  EXPECT_EQ(r.outcome, ParseOutcome::kRun) << r.stderr_text;
  EXPECT_EQ(o2.sim_fail, FailMode::kHangOnRequest);
  EXPECT_EQ(o2.sim_fail_n, 3);
  EXPECT_EQ(o2.verbosity, 2);

  SimOptions o3;
  r = parse({"-m", "x", "--bogus"}, &o3);
  EXPECT_EQ(r.outcome, ParseOutcome::kExitError);
  EXPECT_EQ(r.stderr_text, "error: invalid argument: --bogus\n");

  SimOptions o4;
  r = parse({"-m", "x", "-c", "abc"}, &o4);
  EXPECT_EQ(r.outcome, ParseOutcome::kExitError);
  EXPECT_EQ(r.stderr_text.substr(0, r.stderr_text.find('\n')), "error while handling argument \"-c\": stoi");

  SimOptions o5;
  r = parse({"-m", "x", "-dev", "CUDA1"}, &o5);
  EXPECT_EQ(r.outcome, ParseOutcome::kExitError);
  EXPECT_EQ(r.stderr_text.substr(0, r.stderr_text.find('\n')),
            "error while handling argument \"-dev\": invalid device: CUDA1");

  SimOptions o6;
  r = parse({"-m", "x", "--port"}, &o6);
  EXPECT_EQ(r.stderr_text.substr(0, r.stderr_text.find('\n')),
            "error while handling argument \"--port\": expected value for argument");

  SimOptions o7;
  r = parse({"--sim-fail", "explode"}, &o7);
  EXPECT_EQ(r.outcome, ParseOutcome::kExitError);
  EXPECT_EQ(r.stderr_text.substr(0, r.stderr_text.find('\n')),
            "error while handling argument \"--sim-fail\": unknown failure mode: explode");
}

}  // namespace
}  // namespace benchfleet::sim
