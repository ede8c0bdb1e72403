// The llama-server backend end to end against tests/sim's llama-server-sim (a stand-in with
// llama-server's command line, HTTP protocol and -lv 4 log): the same series on the "GPU" and the
// "CPU" of one machine, and the simulator's fault modes. Real time, real processes; a second or
// two. Built only when the simulator target exists.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/backends/services.h"
#include "agent/backends/llama_server/llama_server_backend.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

double Metric(const v1::RunRecord& record, const std::string& name) {
  for (const v1::Metric& m : record.metrics()) {
    if (m.name() == name) return m.value();
  }
  return -1;
}

std::vector<std::string> MemoryScopes(const v1::RunRecord& record) {
  std::vector<std::string> scopes;
  for (const v1::MemoryFigure& f : record.memory()) {
    scopes.push_back(absl::StrCat(v1::MemoryKind_Name(f.kind()), " ", f.scope()));
  }
  return scopes;
}

class LlamaServerSimTest : public ::testing::Test {
 protected:
  LlamaServerSimTest() {
    Env::Default()->CreateDirs(dir_.path() + "/models").IgnoreError();
    std::ofstream(model_) << "GGUF";
    AllowConfig allow;
    allow.executables = {LLAMA_SERVER_SIM};
    allow.model_dirs = {dir_.path() + "/models"};
    allow_ = std::make_unique<AllowList>(allow, "agent.yaml");
    context_.env = Env::Default();
    context_.services = services_.services();
    context_.allow = allow_.get();
    context_.work_dir = dir_.path() + "/work";
  }

  std::unique_ptr<Backend> Make(const std::string& extra) {
    const std::string section = absl::StrCat(
        "binary: ", LLAMA_SERVER_SIM, "\nmodel: ", model_,
        "\nargs: [-c, 256, --sim-load-ms, 50, --sim-gpu-tps, 400, --sim-cpu-tps, 100]\n"
        "prompt: Explain in one sentence what a GPU is.\nn_predict: 8\nstop_grace: 5s\nhealth_timeout: 20s\n",
        extra);
    absl::StatusOr<std::unique_ptr<Backend>> backend = NewLlamaServerBackend(YAML::Load(section), context_);
    EXPECT_TRUE(backend.ok()) << backend.status();
    return backend.ok() ? std::move(*backend) : nullptr;
  }

  static v1::RunRecord Run(BackendSession& session, v1::Phase phase, uint32_t call_index) {
    v1::RunRecord record;
    RunInput input;
    input.phase = phase;
    input.call_index = call_index;
    input.repetition = 1;
    session.Run(input, &record);
    return record;
  }

  testing::ScopedTempDir dir_;
  const std::string model_ = dir_.path() + "/models/tiny.gguf";
  std::unique_ptr<AllowList> allow_;
  AgentServices services_{Env::Default()};
  BackendContext context_;
};

TEST_F(LlamaServerSimTest, GpuAndCpuModesOfOneMachine) {
  std::unique_ptr<Backend> backend = Make("stream: true\nmodes:\n  gpu: [-ngl, 99]\n  cpu: [-ngl, 0]\n");
  ASSERT_NE(backend, nullptr);
  std::map<std::string, double> throughput;
  for (const std::string& mode : backend->default_axis_values("mode")) {
    std::string log_tail;
    absl::StatusOr<std::unique_ptr<BackendSession>> session = backend->Open({{"mode", mode}}, &log_tail);
    ASSERT_TRUE(session.ok()) << session.status() << "\n" << log_tail;
    EXPECT_TRUE((*session)->info().simulated);
    EXPECT_THAT((*session)->info().backend_version, HasSubstr("SIMULATED"));
    EXPECT_EQ((*session)->info().params.at("server_verbosity"), "4");
    EXPECT_EQ((*session)->info().params.at("n_ctx"), "256");

    const v1::RunRecord cold = Run(**session, v1::PHASE_COLD, 1);
    ASSERT_EQ(cold.status().code(), v1::RunStatus::CODE_OK) << cold.status().message();
    const v1::RunRecord warm = Run(**session, v1::PHASE_WARM, 1);
    ASSERT_EQ(warm.status().code(), v1::RunStatus::CODE_OK) << warm.status().message();
    // Same seed and prompt: the same text on both runs and in both modes.
    EXPECT_EQ(cold.outputs(0).sha256(), warm.outputs(0).sha256());
    EXPECT_EQ(Metric(warm, "tokens_predicted"), 8);
    EXPECT_GT(Metric(warm, "time_to_first_token_seconds"), 0);
    EXPECT_LT(Metric(warm, "time_to_first_token_seconds"),
              warm.wall_duration().seconds() + warm.wall_duration().nanos() / 1e9);
    EXPECT_EQ(warm.memory(0).kind(), v1::MEMORY_KIND_PROCESS_PEAK_RSS);
    EXPECT_GT(warm.memory(0).bytes(), 0u);
    if (mode == "gpu") {
      EXPECT_THAT(MemoryScopes(warm),
                  ElementsAre("MEMORY_KIND_PROCESS_PEAK_RSS llama-server", "MEMORY_KIND_HOST_BUFFER CPU_Mapped model",
                              "MEMORY_KIND_DEVICE_BUFFER CUDA0 model", "MEMORY_KIND_HOST_BUFFER CUDA_Host output",
                              "MEMORY_KIND_DEVICE_BUFFER CUDA0 KV", "MEMORY_KIND_DEVICE_BUFFER CUDA0 compute",
                              "MEMORY_KIND_HOST_BUFFER CUDA_Host compute", "MEMORY_KIND_DEVICE_BUFFER CUDA0 self",
                              "MEMORY_KIND_HOST_BUFFER Host self"));
    } else {
      EXPECT_THAT(MemoryScopes(warm),
                  ElementsAre("MEMORY_KIND_PROCESS_PEAK_RSS llama-server", "MEMORY_KIND_HOST_BUFFER CPU_Mapped model",
                              "MEMORY_KIND_HOST_BUFFER CPU output", "MEMORY_KIND_HOST_BUFFER CPU KV",
                              "MEMORY_KIND_HOST_BUFFER CPU compute", "MEMORY_KIND_HOST_BUFFER Host self"));
    }
    // What the server said it ran on, on every record and for the conditions.
    EXPECT_EQ((*session)->info().params.at("devices"), "CUDA0 (NVIDIA GeForce RTX 4090)");
    EXPECT_EQ((*session)->info().conditions.at("devices"), "CUDA0 (NVIDIA GeForce RTX 4090)");
    EXPECT_EQ((*session)->info().params.at("offloaded_layers"), mode == "gpu" ? "3/3" : "0/3");
    EXPECT_EQ(warm.flags_size(), 0);
    throughput[mode] = Metric(warm, "predicted_per_second");
    EXPECT_TRUE((*session)->Close().ok());
  }
  // The offload is what changes the figure.
  EXPECT_GT(throughput["gpu"], throughput["cpu"]);
}

TEST_F(LlamaServerSimTest, AGpuModeOnAServerWithoutAGpuFailsWithTheServersWords) {
  std::unique_ptr<Backend> backend =
      Make("modes:\n  gpu: [-ngl, 99, --sim-gpu-device, none]\n  cpu: [-ngl, 0, --sim-gpu-device, none]\n");
  ASSERT_NE(backend, nullptr);
  std::string log_tail;
  absl::StatusOr<std::unique_ptr<BackendSession>> gpu = backend->Open({{"mode", "gpu"}}, &log_tail);
  EXPECT_EQ(gpu.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(gpu.status().message()),
              StartsWith("mode gpu asks llama-server to offload layers to a GPU (-ngl 99), but the server offloaded "
                         "none: \"warning: no usable GPU found, --gpu-layers option will be ignored\" (its log, line 1)"));
  EXPECT_THAT(log_tail, HasSubstr("cleaning up before exit"));  // stopped: the log's last lines

  absl::StatusOr<std::unique_ptr<BackendSession>> cpu = backend->Open({{"mode", "cpu"}}, nullptr);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ((*cpu)->info().params.at("devices"),
            "none (warning: no usable GPU found, --gpu-layers option will be ignored)");
  EXPECT_EQ((*cpu)->info().params.at("offloaded_layers"), "0/0");
  const v1::RunRecord run = Run(**cpu, v1::PHASE_COLD, 1);
  EXPECT_EQ(run.status().code(), v1::RunStatus::CODE_OK);
  EXPECT_EQ(run.flags_size(), 0);
  EXPECT_THAT(MemoryScopes(run),
              ElementsAre("MEMORY_KIND_PROCESS_PEAK_RSS llama-server", "MEMORY_KIND_HOST_BUFFER CPU_Mapped model",
                          "MEMORY_KIND_HOST_BUFFER CPU output", "MEMORY_KIND_HOST_BUFFER CPU KV",
                          "MEMORY_KIND_HOST_BUFFER CPU compute", "MEMORY_KIND_HOST_BUFFER Host self"));
}

TEST_F(LlamaServerSimTest, AllowedToRunWithoutAGpuItsRunsAreFlaggedNoOffload) {
  std::unique_ptr<Backend> backend =
      Make("modes:\n  gpu: [-ngl, 99, --sim-gpu-device, none]\nallow_no_offload: [gpu]\n");
  ASSERT_NE(backend, nullptr);
  absl::StatusOr<std::unique_ptr<BackendSession>> gpu = backend->Open({{"mode", "gpu"}}, nullptr);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  const v1::RunRecord run = Run(**gpu, v1::PHASE_COLD, 1);
  EXPECT_EQ(run.status().code(), v1::RunStatus::CODE_OK);
  ASSERT_EQ(run.flags_size(), 1);
  EXPECT_EQ(run.flags(0).code(), "NO_OFFLOAD");
  EXPECT_THAT(run.flags(0).reason(), HasSubstr("\"warning: no usable GPU found, --gpu-layers option will be ignored\""));
}

TEST_F(LlamaServerSimTest, APartialOffloadByTheFitStepIsFlaggedUnlessAccepted) {
  for (const bool accepted : {false, true}) {
    std::unique_ptr<Backend> backend =
        Make(absl::StrCat("modes:\n  gpu: [--sim-fit-gpu-layers, '1']\n", accepted ? "allow_partial_offload: [gpu]\n" : ""));
    ASSERT_NE(backend, nullptr);
    absl::StatusOr<std::unique_ptr<BackendSession>> gpu = backend->Open({{"mode", "gpu"}}, nullptr);
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    EXPECT_EQ((*gpu)->info().params.at("offloaded_layers"), "1/3");
    const v1::RunRecord run = Run(**gpu, v1::PHASE_COLD, 1);
    EXPECT_EQ(run.status().code(), v1::RunStatus::CODE_OK);
    if (accepted) {
      EXPECT_EQ(run.flags_size(), 0);
    } else {
      ASSERT_EQ(run.flags_size(), 1);
      EXPECT_EQ(run.flags(0).code(), "PARTIAL_OFFLOAD");
      EXPECT_THAT(run.flags(0).reason(), StartsWith("llama-server offloaded 1/3 layers to GPU (its log, line "));
    }
  }
}

TEST_F(LlamaServerSimTest, FaultsOfTheSimulator) {
  std::unique_ptr<Backend> backend = Make(
      "request_timeout: 1s\n"
      "modes:\n"
      "  load-fails: [--sim-fail, exit-during-load]\n"
      "  dies: [--sim-fail, die-on-request, '2']\n"
      "  cached: [--sim-fail, cache-hit-on-request, '1']\n"
      "  broken: [--sim-fail, garbage-on-request, '1']\n"
      "  hangs: [--sim-fail, hang-on-request, '1']\n");
  ASSERT_NE(backend, nullptr);

  std::string log_tail;
  absl::StatusOr<std::unique_ptr<BackendSession>> load_fails = backend->Open({{"mode", "load-fails"}}, &log_tail);
  EXPECT_EQ(load_fails.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(load_fails.status().message()), StartsWith("llama-server exited while loading (exit code 1)"));
  EXPECT_THAT(log_tail, HasSubstr("exiting due to model loading error"));

  absl::StatusOr<std::unique_ptr<BackendSession>> dies = backend->Open({{"mode", "dies"}}, nullptr);
  ASSERT_TRUE(dies.ok()) << dies.status();
  EXPECT_EQ(Run(**dies, v1::PHASE_COLD, 1).status().code(), v1::RunStatus::CODE_OK);
  const v1::RunRecord died = Run(**dies, v1::PHASE_WARM, 1);
  EXPECT_EQ(died.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_THAT(died.status().message(), StartsWith("llama-server exited during the run (killed by signal 6 (SIGABRT)): "));
  EXPECT_FALSE((*dies)->alive());

  absl::StatusOr<std::unique_ptr<BackendSession>> cached = backend->Open({{"mode", "cached"}}, nullptr);
  ASSERT_TRUE(cached.ok()) << cached.status();
  const v1::RunRecord hit = Run(**cached, v1::PHASE_COLD, 1);
  EXPECT_EQ(hit.status().code(), v1::RunStatus::CODE_OK);
  ASSERT_EQ(hit.flags_size(), 1);
  EXPECT_EQ(hit.flags(0).code(), "PROMPT_CACHE_USED");

  absl::StatusOr<std::unique_ptr<BackendSession>> broken = backend->Open({{"mode", "broken"}}, nullptr);
  ASSERT_TRUE(broken.ok()) << broken.status();
  const v1::RunRecord garbage = Run(**broken, v1::PHASE_COLD, 1);
  EXPECT_THAT(garbage.status().message(), StartsWith("llama-server answered 200 with a body that is not a completion: "));
  EXPECT_EQ(Run(**broken, v1::PHASE_WARM, 1).status().code(), v1::RunStatus::CODE_OK);

  absl::StatusOr<std::unique_ptr<BackendSession>> hangs = backend->Open({{"mode", "hangs"}}, nullptr);
  ASSERT_TRUE(hangs.ok()) << hangs.status();
  const v1::RunRecord hung = Run(**hangs, v1::PHASE_COLD, 1);
  EXPECT_THAT(hung.status().message(), HasSubstr(": no complete answer within 1s"));
  EXPECT_FALSE((*hangs)->alive());
  EXPECT_TRUE((*hangs)->Close().ok());
}

}  // namespace
}  // namespace benchfleet::agent
