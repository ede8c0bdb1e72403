#include "agent/backends/llama_server/log_memory_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/agent/llama_server/replay_server.h"

namespace benchfleet::agent::llama_server {
namespace {

using ::benchfleet::agent::testing::Fixture;

struct Figure {
  v1::MemoryKind kind;
  std::string scope;
  uint64_t bytes;
  std::string source;
  bool operator==(const Figure&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Figure& f) {
  return os << "{" << v1::MemoryKind_Name(f.kind) << ", " << f.scope << ", " << f.bytes << ", " << f.source << "}";
}

std::vector<Figure> Figures(std::string_view log) {
  std::vector<Figure> out;
  for (const v1::MemoryFigure& f : LogMemoryFigures(ParseLogMemory(log), llama_cpp::ParseLogReport(log))) {
    out.push_back({f.kind(), f.scope(), f.bytes(), f.source()});
  }
  return out;
}

constexpr uint64_t kMiB = 1048576;

TEST(LogMemoryParserTest, ReadsTheCapturedCpuLogAtVerbosity4) {
  const LogMemory memory = ParseLogMemory(Fixture("startup_verbose_lv4.log"));
  ASSERT_EQ(memory.buffers.size(), 4u);
  EXPECT_EQ(memory.buffers[0].name, "CPU_Mapped");
  EXPECT_EQ(memory.buffers[0].klass, "model");
  EXPECT_DOUBLE_EQ(memory.buffers[0].mib, 7.97);
  EXPECT_EQ(memory.buffers[0].bytes, 8357151u);  // 7.97 * 1048576 = 8357150.72
  EXPECT_EQ(memory.buffers[0].line, 116);
  EXPECT_EQ(memory.buffers[1].name, "CPU");
  EXPECT_EQ(memory.buffers[1].klass, "output");
  EXPECT_EQ(memory.buffers[1].bytes, 513802u);  // 0.49 MiB = 513802.24
  EXPECT_EQ(memory.buffers[1].line, 132);
  EXPECT_EQ(memory.buffers[2].klass, "KV");
  EXPECT_EQ(memory.buffers[2].bytes, 125829u);  // 0.12 MiB = 125829.12
  EXPECT_EQ(memory.buffers[2].line, 133);
  EXPECT_EQ(memory.buffers[3].klass, "compute");
  EXPECT_EQ(memory.buffers[3].bytes, 660603u);  // 0.63 MiB = 660602.88
  EXPECT_EQ(memory.buffers[3].line, 148);

  // The table printed while fitting the parameters (line 22-23); the one printed at exit (line
  // 212) was cut off after its header and is ignored.
  ASSERT_EQ(memory.breakdown.size(), 1u);
  const BreakdownRow& host = memory.breakdown[0];
  EXPECT_EQ(host.name, "Host");
  EXPECT_FALSE(host.device_row);
  EXPECT_EQ(host.self_mib, 8);
  EXPECT_EQ(host.model_mib, 7);
  EXPECT_EQ(host.context_mib, 0);
  EXPECT_EQ(host.compute_mib, 0);
  EXPECT_EQ(host.line, 23);

  EXPECT_THAT(Figures(Fixture("startup_verbose_lv4.log")),
              ::testing::ElementsAre(
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "CPU_Mapped model", 8357151, "llama-server log line 116"},
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "CPU output", 513802, "llama-server log line 132"},
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "CPU KV", 125829, "llama-server log line 133"},
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "CPU compute", 660603, "llama-server log line 148"},
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "Host self", 8 * kMiB,
                         "llama-server log line 23 (memory breakdown [MiB])"}));
}

TEST(LogMemoryParserTest, TheDefaultVerbosityLogHasNoBufferLines) {
  const LogMemory memory = ParseLogMemory(Fixture("startup.log"));
  EXPECT_TRUE(memory.buffers.empty());
}

// Lines as llama.cpp prints them on CUDA (format "%s: %12s model buffer size = %8.2f MiB").
constexpr char kCudaLog[] =
    "0.00.034.900 I llama_prepare_model_devices: using device CUDA0 (NVIDIA GeForce RTX 4090) (0000:01:00.0) - 23725 MiB free\n"
    "0.00.059.223 I load_tensors: loading model tensors, this can take a while... (load_mode = mmap)\n"
    "0.00.812.118 I load_tensors: offloading 36 repeating layers to GPU\n"
    "0.00.812.120 I load_tensors: offloaded 37/37 layers to GPU\n"
    "0.00.812.311 I load_tensors:        CUDA0 model buffer size =  1918.35 MiB\n"
    "0.00.812.312 I load_tensors:   CPU_Mapped model buffer size =   166.92 MiB\n"
    "0.00.901.002 I llama_context:  CUDA_Host  output buffer size =     0.58 MiB\n"
    "0.00.901.030 I llama_kv_cache:      CUDA0 KV buffer size =   144.00 MiB\n"
    "0.00.901.031 I llama_kv_cache: size =  144.00 MiB (  4096 cells,  36 layers,  1/1 seqs), K (f16):   72.00 MiB, V (f16):   72.00 MiB\n"
    "0.00.950.448 I sched_reserve:      CUDA0 compute buffer size =   300.75 MiB\n"
    "0.00.950.449 I sched_reserve:  CUDA_Host compute buffer size =    12.01 MiB\n"
    "0.09.102.776 W ~llama_context: CUDA_Host compute buffer size of 39.1719 MiB, does not match expectation of 15.3535 MiB\n";

TEST(LogMemoryParserTest, ReadsCudaLines) {
  EXPECT_THAT(
      Figures(kCudaLog),
      ::testing::ElementsAre(
          Figure{v1::MEMORY_KIND_DEVICE_BUFFER, "CUDA0 model", 2011535770, "llama-server log line 5"},
          Figure{v1::MEMORY_KIND_HOST_BUFFER, "CPU_Mapped model", 175028306, "llama-server log line 6"},
          Figure{v1::MEMORY_KIND_HOST_BUFFER, "CUDA_Host output", 608174, "llama-server log line 7"},
          Figure{v1::MEMORY_KIND_DEVICE_BUFFER, "CUDA0 KV", 144 * kMiB, "llama-server log line 8"},
          Figure{v1::MEMORY_KIND_DEVICE_BUFFER, "CUDA0 compute", 315359232, "llama-server log line 10"},
          Figure{v1::MEMORY_KIND_HOST_BUFFER, "CUDA_Host compute", 12593398, "llama-server log line 11"}));
}

TEST(LogMemoryParserTest, ReadsMetalAndRocmLinesWithoutTimestamps) {
  // The devices as older Metal and HIP builds announce them; then their buffers are device memory.
  EXPECT_THAT(Figures("ggml_metal_init: found device: Apple M1 Pro\n"
                      "load_tensors: Metal_Mapped model buffer size =  1918.36 MiB\n"
                      "load_tensors:   CPU_Mapped model buffer size =   166.92 MiB\n"
                      "llama_kv_cache:      Metal KV buffer size =   144.00 MiB\n"
                      "sched_reserve:      Metal compute buffer size =   300.75 MiB\n"
                      "ggml_cuda_init: found 1 ROCm devices:\n"
                      "  Device 0: AMD Instinct MI250X, gfx90a:sramecc+:xnack- (0x90a), VMM: no, Wave Size: 64\n"
                      "load_tensors:        ROCm0 model buffer size =    10.00 MiB\r\n"),
              ::testing::ElementsAre(
                  Figure{v1::MEMORY_KIND_DEVICE_BUFFER, "Metal_Mapped model", 2011546255, "llama-server log line 2"},
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "CPU_Mapped model", 175028306, "llama-server log line 3"},
                  Figure{v1::MEMORY_KIND_DEVICE_BUFFER, "Metal KV", 144 * kMiB, "llama-server log line 4"},
                  Figure{v1::MEMORY_KIND_DEVICE_BUFFER, "Metal compute", 315359232, "llama-server log line 5"},
                  Figure{v1::MEMORY_KIND_DEVICE_BUFFER, "ROCm0 model", 10 * kMiB, "llama-server log line 8"}));
}

TEST(LogMemoryParserTest, ABufferOfADeviceTheLogDoesNotNameIsUnknownNeverDevice) {
  EXPECT_THAT(Figures("load_tensors: Metal_Mapped model buffer size =  1918.36 MiB\n"
                      "load_tensors:   CPU_Mapped model buffer size =   166.92 MiB\n"),
              ::testing::ElementsAre(
                  Figure{v1::MEMORY_KIND_BUFFER_UNKNOWN, "Metal_Mapped model", 2011546255, "llama-server log line 1"},
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "CPU_Mapped model", 175028306, "llama-server log line 2"}));
}

TEST(LogMemoryParserTest, TheAmxBuffersOfACpuOnlyXeonAreHostMemory) {
  // The case: a Xeon with AMX prints an AMX model buffer and an AMX breakdown row.
  EXPECT_THAT(Figures(Fixture("cpu_amx_xeon_lv4.log")),
              ::testing::ElementsAre(
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "CPU_Mapped model", 4099932, "llama-server log line 11"},
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "AMX model", 4257219, "llama-server log line 12"},
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "CPU KV", 125829, "llama-server log line 13"},
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "CPU compute", 660603, "llama-server log line 14"},
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "Host self", 8 * kMiB,
                         "llama-server log line 9 (memory breakdown [MiB])"},
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "AMX self", 4 * kMiB,
                         "llama-server log line 10 (memory breakdown [MiB])"}));
}

TEST(LogMemoryParserTest, ReadsTheA100FixturesDeviceAndHostBuffers) {
  EXPECT_THAT(Figures(Fixture("gpu_cuda_a100_lv4.log")),
              ::testing::ElementsAre(
                  Figure{v1::MEMORY_KIND_DEVICE_BUFFER, "CUDA0 model", 2011535770, "llama-server log line 21"},
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "CPU_Mapped model", 175028306, "llama-server log line 22"},
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "CUDA_Host output", 608174, "llama-server log line 23"},
                  Figure{v1::MEMORY_KIND_DEVICE_BUFFER, "CUDA0 KV", 144 * kMiB, "llama-server log line 24"},
                  Figure{v1::MEMORY_KIND_DEVICE_BUFFER, "CUDA0 compute", 315359232, "llama-server log line 25"},
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "CUDA_Host compute", 12593398, "llama-server log line 26"},
                  Figure{v1::MEMORY_KIND_DEVICE_BUFFER, "CUDA0 self", 2362 * kMiB,
                         "llama-server log line 12 (memory breakdown [MiB])"},
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "Host self", 179 * kMiB,
                         "llama-server log line 13 (memory breakdown [MiB])"}));
}

TEST(LogMemoryParserTest, SumsBuffersOfTheSameNameAndClass) {
  // A model split in two files is mapped as two CPU_Mapped buffers.
  EXPECT_THAT(Figures("load_tensors:   CPU_Mapped model buffer size =  3800.00 MiB\n"
                      "load_tensors:   CPU_Mapped model buffer size =  1200.50 MiB\n"),
              ::testing::ElementsAre(Figure{v1::MEMORY_KIND_HOST_BUFFER, "CPU_Mapped model",
                                            3800 * kMiB + 1200 * kMiB + kMiB / 2, "llama-server log lines 1, 2"}));
}

TEST(LogMemoryParserTest, OlderBuildsWithoutABufferClassAreModelBuffers) {
  EXPECT_THAT(Figures("llm_load_tensors:        CUDA0 buffer size =  1918.35 MiB\n"
                      "llama_kv_cache_init:      CUDA0 KV buffer size =   144.00 MiB\n"
                      "llama_new_context_with_model:      CUDA0 compute buffer size =   300.75 MiB\n"
                      "some_function:        CUDA0 buffer size =  1.00 MiB\n"),
              ::testing::ElementsAre(
                  // No device line in this log: the buffers are nobody's known device.
                  Figure{v1::MEMORY_KIND_BUFFER_UNKNOWN, "CUDA0 model", 2011535770, "llama-server log line 1"},
                  Figure{v1::MEMORY_KIND_BUFFER_UNKNOWN, "CUDA0 KV", 144 * kMiB, "llama-server log line 2"},
                  Figure{v1::MEMORY_KIND_BUFFER_UNKNOWN, "CUDA0 compute", 315359232, "llama-server log line 3"}));
}

TEST(LogMemoryParserTest, SkipsLinesOfOtherShapes) {
  EXPECT_TRUE(ParseLogMemory("llama_kv_cache: size =    0.12 MiB (   256 cells)\n"
                             "~llama_context: CUDA_Host compute buffer size of 39.1719 MiB, does not match\n"
                             "load_tensors: CUDA0 model buffer size = lots MiB\n"
                             "load_tensors: CUDA0 model buffer size = 12.00 GiB\n"
                             "load_tensors: model buffer size = 12.00 MiB\n"
                             "buffer size = 1.00 MiB\n")
                  .buffers.empty());
}

// The table as llama.cpp prints it on a CUDA machine (template "%s: | %s | %s = %s + (%s = %s +
// %s + %s) + %s |" for devices, "%s: | %s | %s   %s    %s = %s + %s + %s    %s |" for the rest).
constexpr char kCudaBreakdown[] =
    "llama_memory_breakdown_print: | memory breakdown [MiB] | total   free     self   model   context   compute    unaccounted |\n"
    "llama_memory_breakdown_print: |   - CUDA0 (RTX 5090)   | 32606 = 1057 + (29365 = 28609 +     397 +     358) +        2183 |\n"
    "llama_memory_breakdown_print: |   - Host               |                 30956 = 30940 +       0 +      16                |\n"
    "llama_memory_breakdown_print: |   - CPU_REPACK         |                   504 =   504 +       0 +       0                |\n"
    "ggml_metal_free: deallocating\n";

TEST(LogMemoryParserTest, ReadsTheBreakdownTableOfADevice) {
  const LogMemory memory = ParseLogMemory(kCudaBreakdown);
  ASSERT_EQ(memory.breakdown.size(), 3u);
  const BreakdownRow& cuda = memory.breakdown[0];
  EXPECT_EQ(cuda.name, "CUDA0");
  EXPECT_EQ(cuda.description, "RTX 5090");
  EXPECT_TRUE(cuda.device_row);
  EXPECT_EQ(cuda.total_mib, 32606);
  EXPECT_EQ(cuda.free_mib, 1057);
  EXPECT_EQ(cuda.self_mib, 29365);
  EXPECT_EQ(cuda.model_mib, 28609);
  EXPECT_EQ(cuda.context_mib, 397);
  EXPECT_EQ(cuda.compute_mib, 358);
  EXPECT_EQ(cuda.unaccounted_mib, 2183);
  EXPECT_EQ(cuda.line, 2);

  EXPECT_THAT(Figures(kCudaBreakdown),
              ::testing::ElementsAre(
                  Figure{v1::MEMORY_KIND_DEVICE_BUFFER, "CUDA0 self", 29365 * kMiB,
                         "llama-server log line 2 (memory breakdown [MiB])"},
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "Host self", 30956 * kMiB,
                         "llama-server log line 3 (memory breakdown [MiB])"},
                  Figure{v1::MEMORY_KIND_HOST_BUFFER, "CPU_REPACK self", 504 * kMiB,
                         "llama-server log line 4 (memory breakdown [MiB])"}));
}

TEST(LogMemoryParserTest, TheLastTableWithRowsWins) {
  const std::string log = std::string(kCudaBreakdown) +
                          "common_memory_breakdown_print: | memory breakdown [MiB] | total free self model context compute unaccounted |\n"
                          "common_memory_breakdown_print: |   - MTL0 (Apple M5)    | 18186 = 10905 + (7280 =  6095 +     786 +     398) +           0 |\n";
  const LogMemory memory = ParseLogMemory(log);
  ASSERT_EQ(memory.breakdown.size(), 1u);
  EXPECT_EQ(memory.breakdown[0].name, "MTL0");
  EXPECT_EQ(memory.breakdown[0].description, "Apple M5");
  EXPECT_EQ(memory.breakdown[0].self_mib, 7280);
  EXPECT_EQ(memory.breakdown[0].line, 7);
}

TEST(LogMemoryParserTest, MibToBytesRoundsToTheNearestByte) {
  EXPECT_EQ(MibToBytes(0), 0u);
  EXPECT_EQ(MibToBytes(-1), 0u);
  EXPECT_EQ(MibToBytes(0.01), 10486u);  // 10485.76
  EXPECT_EQ(MibToBytes(1918.35), 2011535770u);  // 2011535769.6
  EXPECT_EQ(MibToBytes(144), 150994944u);
}

}  // namespace
}  // namespace benchfleet::agent::llama_server
