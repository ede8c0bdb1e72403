// The simulator's stderr log line by line against the real server's logs: replaying the
// session behind startup.log gives the same lines (timings aside), and -lv 4 adds the same
// lines as startup_verbose_lv4.log, buffer sizes and memory table included; with layers on a
// GPU the device's buffers appear in llama.cpp's format.
#include <signal.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/sim/sim_test_support.h"

namespace benchfleet::sim::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const char kBuildLine[] =
    "I cmn  common_param: common_params_print_info: build 10587 (benchfleet-sim (SIMULATED)) with ";

// Lines whose numbers are measured (times, rates) or belong to the machine (threads, ports,
// memory): compared with their digits masked. All other lines must be identical.
bool Measured(const std::string& line) {
  for (const char* marker : {" time = ", "n_threads", "listening on", "threads for HTTP", "- CPU     :",
                             "host memory", "system memory", "context_length", "n_ctx_train", "n_ctx_orig_yarn",
                             "- Host ", "t_last = "}) {
    if (line.find(marker) != std::string::npos) return true;
  }
  return false;
}

// Compares the simulator's log messages with a capture's, line by line.
void ExpectSameLog(const std::vector<std::string>& got, const std::vector<std::string>& want) {
  const size_t n = std::min(got.size(), want.size());
  for (size_t i = 0; i < n; i++) {
    if (want[i].find("- CPU     :") != std::string::npos) continue;  // the machine's CPU name
    if (Measured(want[i])) {
      EXPECT_EQ(DigitsOut(got[i]), DigitsOut(want[i])) << "line " << i + 1;
    } else {
      EXPECT_EQ(got[i], want[i]) << "line " << i + 1;
    }
  }
}

// Drops the build line (the captures' names a commit, the simulator's says SIMULATED).
std::vector<std::string> WithoutBuildLine(std::vector<std::string> lines) {
  std::vector<std::string> out;
  for (std::string& l : lines) {
    if (l.rfind("I cmn  common_param: common_params_print_info: build ", 0) != 0) out.push_back(std::move(l));
  }
  return out;
}

TEST(LogTest, ReplayingTheCapturedSessionLogsTheCapturedLines) {
  Sim sim({"-c", "256", "-ngl", "0", "--metrics", "--slots", "--sim-gpu-device", "none", "--sim-load-ms", "20",
           "--sim-cpu-tps", "400"});
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  // Two monitoring calls before the first generation: the capture's first task is number 2.
  ASSERT_EQ(sim.Get("/slots").status, 200);
  ASSERT_EQ(sim.Get("/metrics").status, 200);
  for (int i = 0; i < 5; i++) ASSERT_EQ(sim.Post("/completion", CaptureRequest(24)).status, 200);
  const std::string longer = Json{{"prompt", PromptOfTokens(37)}, {"n_predict", 24}, {"cache_prompt", false}}.dump();
  for (int i = 0; i < 2; i++) ASSERT_EQ(sim.Post("/completion", longer).status, 200);
  ASSERT_EQ(sim.Post("/completion", R"({"prompt":"Explain in one sentenc",)").status, 500);
  ASSERT_EQ(sim.Post("/completion", Json{{"prompt", PromptOfTokens(1491)}, {"n_predict", 24}}.dump()).status, 400);
  sim.process().Signal(SIGTERM);
  ASSERT_EQ(sim.WaitExit(), 0);

  const std::vector<std::string> all = LogMessages(sim.log());
  ASSERT_GE(all.size(), 4u);
  // The one line the real server prints only at -lv 4: the simulator always says what it is.
  EXPECT_EQ(all[3].rfind(kBuildLine, 0), 0u) << all[3];
  const std::vector<std::string> got = WithoutBuildLine(all);
  const std::vector<std::string> want = LogMessages(Fixture("startup.log"));
  EXPECT_EQ(got.size(), want.size());
  ExpectSameLog(got, want);
  EXPECT_THAT(sim.log(), Not(HasSubstr("buffer size")));
}

TEST(LogTest, VerbosityFourAddsTheCapturedLines) {
  Sim sim({"-c", "256", "-ngl", "0", "--metrics", "--slots", "--sim-gpu-device", "none", "-lv", "4",
           "--sim-load-ms", "20", "--sim-cpu-tps", "400"});
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  ASSERT_EQ(sim.Post("/completion", CaptureRequest(24, 42, /*stream=*/true)).status, 200);
  ASSERT_TRUE(sim.WaitLog("all slots are idle\n", std::chrono::seconds(5)));
  sim.process().Signal(SIGTERM);
  ASSERT_EQ(sim.WaitExit(), 0);

  const std::vector<std::string> got = WithoutBuildLine(LogMessages(sim.log()));
  const std::vector<std::string> want = WithoutBuildLine(LogMessages(Fixture("startup_verbose_lv4.log")));
  // The capture ends in the middle of the exit-time memory table: the simulator prints its row.
  ASSERT_EQ(got.size(), want.size() + 1);
  ExpectSameLog(got, want);
  EXPECT_EQ(got.back(),
            "I common_memory_breakdown_print: |   - Host               |                    8 =     7 +       0 +     "
            "  0                |");
  // The lines the agent reads memory from, exactly.
  const std::string log = sim.log();
  for (const char* line : {
           " I load_tensors:   CPU_Mapped model buffer size =     7.97 MiB\n",
           " I llama_context:        CPU  output buffer size =     0.49 MiB\n",
           " I llama_kv_cache:        CPU KV buffer size =     0.12 MiB\n",
           " I llama_kv_cache: size =    0.12 MiB (   256 cells,   2 layers,  4/1 seqs), K (f16):    0.06 MiB, V (f16):    "
           "0.06 MiB\n",
           " I sched_reserve:        CPU compute buffer size =     0.63 MiB\n",
           " I common_memory_breakdown_print: | memory breakdown [MiB] | total   free    self   model   context   compute  "
           "  unaccounted |\n",
           " I common_memory_breakdown_print: |   - Host               |                    8 =     7 +       0 +       0  "
           "              |\n",
       }) {
    EXPECT_THAT(log, HasSubstr(line));
  }
}

TEST(LogTest, OffloadedLayersLogTheDeviceBuffers) {
  Sim sim({"-c", "256", "-ngl", "99", "-lv", "4", "--sim-load-ms", "20"});
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  sim.process().Signal(SIGTERM);
  ASSERT_EQ(sim.WaitExit(), 0);
  const std::string log = sim.log();
  for (const char* line : {
           " I cmn  common_param:   - CUDA0   : NVIDIA GeForce RTX 4090 (24564 MiB, 24080 MiB free)\n",
           " I common_memory_breakdown_print: | memory breakdown [MiB] | total    free    self   model   context   "
           "compute    unaccounted |\n",
           " I common_memory_breakdown_print: |   - CUDA0 (RTX 4090)   | 24564 = 24080 + (   4 =     4 +       0 +     "
           "  0) +         479 |\n",
           " I common_params_fit_impl: projected to use 4 MiB of device memory vs. 24080 MiB of free device memory\n",
           " I llama_prepare_model_devices: using device CUDA0 (NVIDIA GeForce RTX 4090) (0000:01:00.0) - 24080 MiB "
           "free\n",
           " I load_tensors: offloading output layer to GPU\n",
           " I load_tensors: offloading 1 repeating layers to GPU\n",
           " I load_tensors: offloaded 3/3 layers to GPU\n",
           " I load_tensors:   CPU_Mapped model buffer size =     3.91 MiB\n",
           " I load_tensors:        CUDA0 model buffer size =     4.06 MiB\n",
           " I llama_context:  CUDA_Host  output buffer size =     0.49 MiB\n",
           " I llama_kv_cache:      CUDA0 KV buffer size =     0.12 MiB\n",
           " I sched_reserve:      CUDA0 compute buffer size =     0.63 MiB\n",
           " I sched_reserve:  CUDA_Host compute buffer size =     0.12 MiB\n",
           " I common_memory_breakdown_print: |   - CUDA0 (RTX 4090)   | 24564 = 24075 + (   4 =     4 +       0 +     "
           "  0) +         484 |\n",
       }) {
    EXPECT_THAT(log, HasSubstr(line));
  }
  EXPECT_THAT(log, Not(HasSubstr("warning: no usable GPU found")));
  EXPECT_THAT(log, Not(HasSubstr("CPU KV buffer")));
}

TEST(LogTest, OtherDevicesNameTheirBuffers) {
  Sim rocm({"-c", "256", "-ngl", "99", "-lv", "4", "--sim-load-ms", "10", "--sim-gpu-device", "ROCm0"});
  Sim metal({"-c", "256", "-ngl", "99", "-lv", "4", "--sim-load-ms", "10", "--sim-gpu-device", "Metal"});
  ASSERT_TRUE(rocm.WaitLog("model loaded"));
  ASSERT_TRUE(metal.WaitLog("model loaded"));
  EXPECT_THAT(rocm.log(), HasSubstr(" I load_tensors:        ROCm0 model buffer size =     4.06 MiB\n"));
  EXPECT_THAT(rocm.log(), HasSubstr(" I sched_reserve:  ROCm_Host compute buffer size =     0.12 MiB\n"));
  EXPECT_THAT(metal.log(), HasSubstr(" I load_tensors:        Metal model buffer size =     4.06 MiB\n"));
  EXPECT_THAT(metal.log(), HasSubstr(" I llama_kv_cache:      Metal KV buffer size =     0.12 MiB\n"));
  EXPECT_THAT(metal.log(), HasSubstr(" I sched_reserve:        CPU compute buffer size =     0.12 MiB\n"));
}

}  // namespace
}  // namespace benchfleet::sim::testing
