// The llama-server backend's lifecycle and records, against a stand-in server process and the
// replayed captures. Failures are in llama_server_errors_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <string>

#include "absl/strings/str_replace.h"
#include "agent/backends/llama_server/llama_server_backend.h"
#include "common/hashing.h"
#include "tests/unit/agent/llama_server/backend_test_fixture.h"

namespace benchfleet::agent::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::StartsWith;

constexpr char kContentSha256[] = "fde6613c7ec84a5a874e19a92bb85fa0b6781066684b5d8429be49a5793db832";
constexpr char kPrompt[] = "Explain in one sentence what a GPU is.";
constexpr uint64_t kMiB = 1048576;

std::map<std::string, std::string> Params(const v1::RunRecord& record) {
  return {record.params().begin(), record.params().end()};
}

std::vector<std::string> MetricNames(const v1::RunRecord& record) {
  std::vector<std::string> names;
  for (const v1::Metric& m : record.metrics()) names.push_back(absl::StrCat(m.name(), " [", m.unit(), "]"));
  return names;
}

double MetricValue(const v1::RunRecord& record, const std::string& name) {
  for (const v1::Metric& m : record.metrics()) {
    if (m.name() == name) return m.value();
  }
  return -1;
}

TEST_F(LlamaServerBackendTest, DescribesItself) {
  absl::StatusOr<std::unique_ptr<Backend>> backend = Make(LaunchedSection());
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_EQ((*backend)->name(), "llama-server");
  ASSERT_NE(MainFigure((*backend)->figures()), nullptr);
  EXPECT_EQ(MainFigure((*backend)->figures())->name, "predicted_per_second");
  EXPECT_THAT((*backend)->matrix_axes(), ElementsAre("mode", "n_predict"));
  EXPECT_THAT((*backend)->default_axis_values("mode"), ElementsAre("gpu", "cpu"));
  EXPECT_TRUE((*backend)->default_axis_values("n_predict").empty());

  absl::StatusOr<std::unique_ptr<Backend>> external = Make(UrlSection());
  ASSERT_TRUE(external.ok()) << external.status();
  EXPECT_THAT((*external)->default_axis_values("mode"), ElementsAre("external"));
}

TEST_F(LlamaServerBackendTest, RegisteredFactoryChecksTheAllowList) {
  absl::StatusOr<std::unique_ptr<Backend>> backend = NewLlamaServerBackend(
      YAML::Load("binary: /usr/bin/llama-server\nmodel: /models/m.gguf\nprompt: hi\n"), context_);
  EXPECT_EQ(backend.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(backend.status().message(),
            "executable /usr/bin/llama-server is not in this agent's allow-list (allow.executables in "
            "/etc/benchfleet/agent.yaml)");
}

// The replayed server is the captured CPU-only build, so the cpu mode: a gpu mode on it fails
// (AGpuModeOnTheCapturedCpuOnlyServerFails).
// What the captured CPU-only server says it found.
constexpr char kNoGpu[] = "none (warning: no usable GPU found, --gpu-layers option will be ignored)";

// The replayed server is the captured CPU-only build, so the cpu mode: a gpu mode on it fails
// (AGpuModeOnTheCapturedCpuOnlyServerFails).
TEST_F(LlamaServerBackendTest, StartsTheServerRunsACompletionAndStopsIt) {
  ServeHealthyServer();
  absl::StatusOr<std::unique_ptr<Backend>> backend = Make(LaunchedSection());
  ASSERT_TRUE(backend.ok()) << backend.status();
  std::string log_tail;
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({{"mode", "cpu"}}, &log_tail);
  ASSERT_TRUE(session.ok()) << session.status() << "\n" << log_tail;
  const pid_t pid = ServerPid();

  // Started with the agent's arguments, then the spec's, then the mode's.
  EXPECT_EQ(ReadText(args_file_), absl::StrCat("-m\n", model_, "\n--host\n127.0.0.1\n--port\n", server_.port(),
                                               "\n-lv\n4\n-c\n256\n-ngl\n0\n"));
  // /health answered 503 twice: two polls 250 ms apart on the Env's clock.
  EXPECT_EQ(server_.count("GET /health"), 3);
  EXPECT_EQ(clock_.slept(), absl::Milliseconds(500));

  const SessionInfo& info = (*session)->info();
  EXPECT_EQ(info.backend_version, "b10587-3f545becc");
  EXPECT_FALSE(info.simulated);
  EXPECT_EQ(info.params, (std::map<std::string, std::string>{
                             {"devices", kNoGpu},
                             {"model_path", "tiny.gguf"},
                             {"modes_switchable", "true"},
                             {"n_ctx", "256"},
                             {"offloaded_layers", "0/0"},
                             {"server_args", absl::StrCat("-m ", model_, " -lv 4 -c 256 -ngl 0")},
                             {"server_verbosity", "4"},
                             {"total_slots", "4"},
                         }));
  // What the server found, for the series' conditions.
  EXPECT_EQ(info.conditions, (std::map<std::string, std::string>{{"devices", kNoGpu}}));
  const std::string log_path = work_dir_ + "/llama-server-cpu.log";
  EXPECT_EQ(ReadText(log_path), Fixture("startup_verbose_lv4.log"));

  const v1::RunRecord record = RunOnce(**session);
  EXPECT_EQ(record.status().code(), v1::RunStatus::CODE_OK) << record.status().message();
  EXPECT_EQ(record.backend(), "llama-server");
  EXPECT_EQ(record.mode(), "cpu");
  EXPECT_EQ(Params(record), (std::map<std::string, std::string>{
                                {"cache_prompt", "false"},
                                {"devices", kNoGpu},
                                {"model_path", "tiny.gguf"},
                                // What decides the content, as JSON with sorted keys (agent/README.md).
                                {"inputs_sha256", Sha256Hex(R"({"backend":"llama-server","n_predict":24,"prompt":")"
                                                            "Explain in one sentence what a GPU is."
                                                            R"(","seed":42,"temperature":0})")},
                                {"modes_switchable", "true"},
                                {"n_ctx", "256"},
                                {"n_predict", "24"},
                                {"offloaded_layers", "0/0"},
                                {"prompt_sha256", Sha256Hex(kPrompt)},
                                {"seed", "42"},
                                {"server_args", absl::StrCat("-m ", model_, " -lv 4 -c 256 -ngl 0")},
                                {"server_verbosity", "4"},
                                {"stop_type", "limit"},
                                {"stream", "false"},
                                {"temperature", "0"},
                                {"total_slots", "4"},
                            }));
  EXPECT_THAT(MetricNames(record),
              ElementsAre("cache_n [tokens]", "prompt_n [tokens]", "prompt_seconds [s]",
                          "prompt_per_token_seconds [s/token]", "prompt_per_second [tokens/s]",
                          "predicted_n [tokens]", "predicted_seconds [s]", "predicted_per_token_seconds [s/token]",
                          "predicted_per_second [tokens/s]", "tokens_predicted [tokens]",
                          "tokens_evaluated [tokens]", "tokens_cached [tokens]"));
  EXPECT_DOUBLE_EQ(MetricValue(record, "predicted_per_second"), 3979.9273230662743);
  EXPECT_DOUBLE_EQ(MetricValue(record, "prompt_seconds"), 0.004366);
  ASSERT_EQ(record.outputs_size(), 1);
  EXPECT_EQ(record.outputs(0).kind(), "text");
  EXPECT_EQ(record.outputs(0).name(), "content");
  EXPECT_EQ(record.outputs(0).sha256(), kContentSha256);
  EXPECT_EQ(record.outputs(0).size_bytes(), 145u);
  EXPECT_EQ(record.flags_size(), 0);
  // One clock step between the two monotonic readings around the request.
  EXPECT_EQ(record.wall_duration().seconds(), 0);
  EXPECT_EQ(record.wall_duration().nanos(), 1000000);

  ASSERT_EQ(record.memory_size(), 6);
  EXPECT_EQ(record.memory(0).kind(), v1::MEMORY_KIND_PROCESS_PEAK_RSS);
  EXPECT_EQ(record.memory(0).scope(), "llama-server");
  EXPECT_EQ(record.memory(0).source(),
            absl::StrCat("/proc/", pid, "/status VmHWM since a /proc/", pid, "/clear_refs reset before the run"));
  EXPECT_GT(record.memory(0).bytes(), 0u);
  EXPECT_EQ(record.memory(1).kind(), v1::MEMORY_KIND_HOST_BUFFER);
  EXPECT_EQ(record.memory(1).scope(), "CPU_Mapped model");
  EXPECT_EQ(record.memory(1).bytes(), 8357151u);
  EXPECT_EQ(record.memory(1).source(), "llama-server log line 116");
  EXPECT_EQ(record.memory(3).scope(), "CPU KV");
  EXPECT_EQ(record.memory(4).scope(), "CPU compute");
  EXPECT_EQ(record.memory(5).scope(), "Host self");
  EXPECT_EQ(record.memory(5).bytes(), 8 * kMiB);
  for (const v1::MemoryFigure& figure : record.memory()) {
    EXPECT_NE(figure.kind(), v1::MEMORY_KIND_DEVICE_USED);
  }

  // The request the server got.
  const std::vector<ReceivedRequest> requests = server_.requests();
  ASSERT_EQ(requests.back().method_and_path, "POST /completion");
  EXPECT_EQ(requests.back().body,
            R"({"cache_prompt":false,"n_predict":24,"prompt":"Explain in one sentence what a GPU is.","seed":42,)"
            R"("stream":false,"temperature":0})");

  // A warm run is the same call again.
  const v1::RunRecord warm = RunOnce(**session, v1::PHASE_WARM, 1);
  EXPECT_EQ(warm.status().code(), v1::RunStatus::CODE_OK);
  EXPECT_TRUE((*session)->alive());

  EXPECT_TRUE((*session)->Close().ok());
  EXPECT_FALSE((*session)->alive());
  EXPECT_EQ(::kill(pid, 0), -1);  // stopped and reaped
  EXPECT_EQ(logs_.back(), "llama-server cpu stopped (killed by signal 15 (SIGTERM))");
  EXPECT_TRUE((*session)->Close().ok());
  EXPECT_THAT(logs_.front(), StartsWith(absl::StrCat("llama-server cpu: starting ", standin_, " -m ")));
}

TEST_F(LlamaServerBackendTest, AGpuModeOnTheCapturedCpuOnlyServerFails) {
  ServeHealthyServer();
  absl::StatusOr<std::unique_ptr<Backend>> backend = Make(LaunchedSection());
  ASSERT_TRUE(backend.ok()) << backend.status();
  std::string log_tail;
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({{"mode", "gpu"}}, &log_tail);
  EXPECT_EQ(session.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(session.status().message(),
            "mode gpu asks llama-server to offload layers to a GPU (-ngl 99), but the server offloaded none: "
            "\"warning: no usable GPU found, --gpu-layers option will be ignored\" (its log, line 1). Its runs "
            "would measure the CPU under the name gpu; list the mode in llama-server.allow_no_offload to run it "
            "anyway (flagged NO_OFFLOAD)");
  EXPECT_EQ(log_tail, *LogTail(work_dir_ + "/llama-server-gpu.log", 30));
  EXPECT_EQ(server_.count("POST /completion"), 0);
}

TEST_F(LlamaServerBackendTest, AllowedToRunWithoutAGpuEveryRunIsFlaggedNoOffload) {
  ServeHealthyServer();
  absl::StatusOr<std::unique_ptr<Backend>> backend = Make(LaunchedSection("allow_no_offload: [gpu]\n"));
  ASSERT_TRUE(backend.ok()) << backend.status();
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({{"mode", "gpu"}}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  for (const v1::RunRecord& record : {RunOnce(**session), RunOnce(**session, v1::PHASE_WARM, 1)}) {
    EXPECT_EQ(record.status().code(), v1::RunStatus::CODE_OK);
    ASSERT_EQ(record.flags_size(), 1);
    EXPECT_EQ(record.flags(0).code(), "NO_OFFLOAD");
    EXPECT_EQ(record.flags(0).reason(),
              "mode gpu asks for GPU offload (-ngl 99) but llama-server offloaded no layer: \"warning: no usable GPU "
              "found, --gpu-layers option will be ignored\" (its log, line 1); it ran on the CPU (allowed by "
              "llama-server.allow_no_offload)");
  }
  EXPECT_EQ(logs_[1],
            "llama-server gpu: NO_OFFLOAD: mode gpu asks for GPU offload (-ngl 99) but llama-server offloaded no "
            "layer: \"warning: no usable GPU found, --gpu-layers option will be ignored\" (its log, line 1); it ran "
            "on the CPU (allowed by llama-server.allow_no_offload)");
}

TEST_F(LlamaServerBackendTest, StreamingRecordsTheTimeToFirstToken) {
  ServeHealthyServer("completion_stream.txt");
  absl::StatusOr<std::unique_ptr<Backend>> backend = Make(LaunchedSection("stream: true\n"));
  ASSERT_TRUE(backend.ok()) << backend.status();
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({{"mode", "cpu"}}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_EQ(ReadText(args_file_), absl::StrCat("-m\n", model_, "\n--host\n127.0.0.1\n--port\n", server_.port(),
                                               "\n-lv\n4\n-c\n256\n-ngl\n0\n"));

  const v1::RunRecord record = RunOnce(**session);
  ASSERT_EQ(record.status().code(), v1::RunStatus::CODE_OK) << record.status().message();
  EXPECT_EQ(record.mode(), "cpu");
  EXPECT_EQ(record.params().at("stream"), "true");
  EXPECT_EQ(record.outputs(0).sha256(), kContentSha256);
  EXPECT_DOUBLE_EQ(MetricValue(record, "predicted_per_second"), 3794.7533410328333);
  // Readings: start (t), first token (t + 1 step), end (t + 2 steps).
  EXPECT_EQ(record.metrics(record.metrics_size() - 1).name(), "time_to_first_token_seconds");
  EXPECT_EQ(record.metrics(record.metrics_size() - 1).unit(), "s");
  EXPECT_DOUBLE_EQ(MetricValue(record, "time_to_first_token_seconds"), 0.001);
  EXPECT_EQ(record.wall_duration().nanos(), 2000000);
  EXPECT_THAT(server_.requests().back().body, ::testing::HasSubstr(R"("stream":true)"));
}

TEST_F(LlamaServerBackendTest, PromptCacheUsedIsFlagged) {
  ServeHealthyServer();
  const std::string body = ReplyFromCapture(Fixture("completion_1.txt")).body;
  server_.On("POST /completion", {JsonReply(200, absl::StrReplaceAll(body, {{R"("cache_n":0)", R"("cache_n":5)"}}))});
  absl::StatusOr<std::unique_ptr<Backend>> backend = Make(LaunchedSection());
  ASSERT_TRUE(backend.ok()) << backend.status();
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({{"mode", "cpu"}}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  const v1::RunRecord record = RunOnce(**session, v1::PHASE_WARM, 2);
  EXPECT_EQ(record.status().code(), v1::RunStatus::CODE_OK);
  ASSERT_EQ(record.flags_size(), 1);
  EXPECT_EQ(record.flags(0).code(), "PROMPT_CACHE_USED");
  EXPECT_EQ(record.flags(0).reason(),
            "timings.cache_n = 5: the server reused cached prompt tokens although the request set cache_prompt: false");
  EXPECT_EQ(MetricValue(record, "cache_n"), 5);
}

TEST_F(LlamaServerBackendTest, MatrixValuesChooseModeAndNPredict) {
  ServeHealthyServer();
  // The replayed server has no GPU: the gpu mode may run (flagged NO_OFFLOAD) for this test.
  absl::StatusOr<std::unique_ptr<Backend>> backend = Make(LaunchedSection("allow_no_offload: [gpu]\n"));
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_EQ((*backend)->Open({{"mode", "tpu"}}, nullptr).status().message(),
            "unknown mode tpu (the modes of llama-server.modes: gpu, cpu)");
  EXPECT_EQ((*backend)->Open({{"mode", "gpu"}, {"n_predict", "abc"}}, nullptr).status().message(),
            "matrix value n_predict=abc is not a positive integer");

  absl::StatusOr<std::unique_ptr<BackendSession>> session =
      (*backend)->Open({{"mode", "gpu"}, {"n_predict", "64"}}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  const v1::RunRecord record = RunOnce(**session);
  EXPECT_EQ(record.params().at("n_predict"), "64");
  EXPECT_THAT(server_.requests().back().body, ::testing::HasSubstr(R"("n_predict":64)"));
  EXPECT_TRUE((*session)->Close().ok());

  // The same mode started again writes a log of its own.
  std::remove(ready_file_.c_str());
  absl::StatusOr<std::unique_ptr<BackendSession>> again = (*backend)->Open({}, nullptr);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(RunOnce(**again).mode(), "gpu");  // the first mode when the matrix has none
  EXPECT_TRUE(Env::Default()->FileExists(work_dir_ + "/llama-server-gpu.2.log"));
}

TEST_F(LlamaServerBackendTest, ServerGivenByUrl) {
  ServeHealthyServer("completion_1.txt", /*standin=*/false);
  absl::StatusOr<std::unique_ptr<Backend>> backend = Make(UrlSection());
  ASSERT_TRUE(backend.ok()) << backend.status();
  absl::StatusOr<std::unique_ptr<BackendSession>> gpu = (*backend)->Open({{"mode", "gpu"}}, nullptr);
  EXPECT_EQ(gpu.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(gpu.status().message(),
            "mode gpu cannot be used: the server given by url is not started by the agent, so its modes cannot be "
            "switched (its one mode is \"external\")");

  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({{"mode", "external"}}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_EQ((*session)->info().params, (std::map<std::string, std::string>{
                                           {"model_path", "tiny.gguf"},
                                           {"modes_switchable", "false"},
                                           {"n_ctx", "256"},
                                           {"total_slots", "4"},
                                       }));
  const v1::RunRecord record = RunOnce(**session);
  EXPECT_EQ(record.status().code(), v1::RunStatus::CODE_OK);
  EXPECT_EQ(record.mode(), "external");
  EXPECT_EQ(record.params().at("modes_switchable"), "false");
  EXPECT_EQ(record.memory_size(), 0);  // no process and no log of ours
  EXPECT_TRUE((*session)->Close().ok());
}

TEST_F(LlamaServerBackendTest, ASimulatorIsMarkedSimulated) {
  ServeHealthyServer("completion_1.txt", /*standin=*/false);
  const std::string props = ReplyFromCapture(Fixture("props.txt")).body;
  server_.On("GET /props", {JsonReply(200, absl::StrReplaceAll(props, {{"b10587-3f545becc", "b10587-SIMULATED"}}))});
  absl::StatusOr<std::unique_ptr<Backend>> backend = Make(UrlSection());
  ASSERT_TRUE(backend.ok()) << backend.status();
  absl::StatusOr<std::unique_ptr<BackendSession>> session = (*backend)->Open({}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_EQ((*session)->info().backend_version, "b10587-SIMULATED");
  EXPECT_TRUE((*session)->info().simulated);
}

}  // namespace
}  // namespace benchfleet::agent::testing
