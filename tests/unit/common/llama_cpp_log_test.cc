// ParseLogReport and ClassifyBuffer (common/llama_cpp_log.h) on the real capture of a CPU-only
// llama-server and on the GPU fixtures written from llama.cpp's source (tests/fixtures/llama-server/README.md).
#include "common/llama_cpp_log.h"
#include "common/simulated.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/agent/llama_server/replay_server.h"

namespace benchfleet::llama_cpp {
namespace {

using ::benchfleet::agent::testing::Fixture;

std::vector<std::string> Names(const std::vector<LogDevice>& devices) {
  std::vector<std::string> out;
  for (const LogDevice& d : devices) out.push_back(d.name);
  return out;
}

TEST(LlamaCppLogTest, TheCapturedCpuOnlyServerSaysItHasNoUsableGpu) {
  const LogReport report = ParseLogReport(Fixture("startup_verbose_lv4.log"));
  EXPECT_EQ(report.no_gpu_warning, "warning: no usable GPU found, --gpu-layers option will be ignored");
  EXPECT_EQ(report.no_gpu_line, 1);
  EXPECT_EQ(report.build, "10587 (3f545becc) with GNU 12.2.0 for Linux x86_64");
  EXPECT_EQ(report.build_line, 4);
  ASSERT_EQ(report.found.size(), 1u);
  EXPECT_EQ(report.found[0].name, "CPU");
  EXPECT_EQ(report.found[0].description, "AMD EPYC");
  EXPECT_FALSE(report.found[0].gpu);
  EXPECT_EQ(report.found[0].free_mib, 24105);
  EXPECT_EQ(report.found[0].line, 7);
  EXPECT_TRUE(report.used.empty());
  EXPECT_FALSE(report.offload.has_value());
  EXPECT_TRUE(report.no_usable_gpu());
  EXPECT_EQ(DevicesText(report), "none (warning: no usable GPU found, --gpu-layers option will be ignored)");
  EXPECT_EQ(OffloadedLayersText(report), "0/0");
  EXPECT_FALSE(SaysSimulated(report.build));
}

TEST(LlamaCppLogTest, TheDefaultVerbosityCaptureHasTheWarningButNoBuildLine) {
  const LogReport report = ParseLogReport(Fixture("startup.log"));
  EXPECT_EQ(report.no_gpu_line, 1);
  EXPECT_EQ(report.build, "");
  EXPECT_TRUE(report.found.empty());
  EXPECT_TRUE(report.no_usable_gpu());
}

TEST(LlamaCppLogTest, ReadsACudaServersDevicesAndOffload) {
  const LogReport report = ParseLogReport(Fixture("gpu_cuda_a100_lv4.log"));
  EXPECT_EQ(report.no_gpu_warning, "");
  EXPECT_THAT(Names(report.found), ::testing::ElementsAre("CUDA0", "CPU"));
  EXPECT_EQ(report.found[0].description, "NVIDIA A100-SXM4-80GB");  // from ggml_cuda_init, line 2
  EXPECT_EQ(report.found[0].line, 2);
  ASSERT_EQ(report.used.size(), 1u);
  EXPECT_EQ(report.used[0].name, "CUDA0");
  EXPECT_EQ(report.used[0].description, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(report.used[0].free_mib, 80562);
  EXPECT_EQ(report.used[0].line, 16);
  ASSERT_TRUE(report.offload.has_value());
  EXPECT_EQ(report.offload->offloaded, 37);
  EXPECT_EQ(report.offload->total, 37);
  EXPECT_EQ(report.offload->line, 20);
  EXPECT_FALSE(report.no_usable_gpu());
  EXPECT_EQ(DevicesText(report), "CUDA0 (NVIDIA A100-SXM4-80GB)");
  EXPECT_EQ(OffloadedLayersText(report), "37/37");
}

TEST(LlamaCppLogTest, ReadsAPartialOffloadByTheFitStep) {
  const LogReport report = ParseLogReport(Fixture("gpu_cuda_fit_partial_lv4.log"));
  ASSERT_TRUE(report.offload.has_value());
  EXPECT_EQ(report.offload->offloaded, 20);
  EXPECT_EQ(report.offload->total, 33);
  EXPECT_EQ(OffloadedLayersText(report), "20/33");
  EXPECT_EQ(DevicesText(report), "CUDA0 (NVIDIA GeForce RTX 3060)");
}

TEST(LlamaCppLogTest, ReadsMetalRocmVulkanAndSyclDevices) {
  EXPECT_EQ(DevicesText(ParseLogReport(Fixture("gpu_metal_m1pro_lv4.log"))), "MTL0 (Apple M1 Pro)");
  EXPECT_EQ(DevicesText(ParseLogReport(Fixture("gpu_rocm_mi250x_lv4.log"))),
            "ROCm0 (AMD Instinct MI250X); ROCm1 (AMD Instinct MI250X)");
  // ggml-vulkan.cpp's and ggml-sycl.cpp's device lines (written from their source).
  const LogReport vulkan = ParseLogReport(
      "ggml_vulkan: Found 1 Vulkan devices:\n"
      "ggml_vulkan: 0 = NVIDIA GeForce RTX 3080 Ti (NVIDIA) | uma: 0 | fp16: 1 | bf16: 0 | warp size: 32 | "
      "shared memory: 49152 | int dot: 1 | matrix cores: KHR_coopmat\n");
  EXPECT_EQ(DevicesText(vulkan), "Vulkan0 (NVIDIA GeForce RTX 3080 Ti)");
  const LogReport sycl = ParseLogReport(
      "Found 2 SYCL devices:\n"
      "|  |                   |                                       |       |Max    |        |Max  |Global |\n"
      "|ID|        Device Type|                                   Name|Version|units  |group   |group|size   |\n"
      "|--|-------------------|---------------------------------------|-------|-------|--------|-----|-------|\n"
      "| 0| [level_zero:gpu:0]|                Intel Arc A770 Graphics|  12.55|    512|    1024|   32| 16225M|\n"
      "| 1|     [opencl:cpu:0]|          Intel(R) Core(TM) i9-13900K  |    3.0|     32|    8192|   64| 67108M|\n");
  EXPECT_EQ(DevicesText(sycl), "SYCL0 (Intel Arc A770 Graphics)");
  EXPECT_THAT(Names(sycl.found), ::testing::ElementsAre("SYCL0", "SYCL1"));
}

TEST(LlamaCppLogTest, SkippedDuplicateDevicesAreNotUsed) {
  const LogReport report = ParseLogReport(
      "llama_model_load_from_file_impl: skipping device Vulkan0 (NVIDIA A10) with id 0000:81:00.0 - already using "
      "device CUDA0 (NVIDIA A10) with the same id\n"
      "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA A10) - 22039 MiB free\n");
  EXPECT_THAT(Names(report.used), ::testing::ElementsAre("CUDA0"));
  EXPECT_EQ(report.used[0].line, 2);
}

TEST(LlamaCppLogTest, TheSimulatorsBuildLineSaysSimulated) {
  const LogReport report = ParseLogReport(
      "0.00.000.010 I cmn  common_param: common_params_print_info: build 10587 (benchfleet-sim (SIMULATED)) with "
      "GNU 12.2.0 for Linux x86_64\n");
  EXPECT_TRUE(SaysSimulated(report.build));
}

TEST(LlamaCppLogTest, ABufferIsADevicesOnlyWhenTheServerReportedThatGpu) {
  const LogReport cuda = ParseLogReport(Fixture("gpu_cuda_a100_lv4.log"));
  EXPECT_EQ(ClassifyBuffer("CUDA0", cuda), v1::MEMORY_KIND_DEVICE_BUFFER);
  EXPECT_EQ(ClassifyBuffer("CUDA_Split", cuda), v1::MEMORY_KIND_DEVICE_BUFFER);
  EXPECT_EQ(ClassifyBuffer("CUDA_Host", cuda), v1::MEMORY_KIND_HOST_BUFFER);
  EXPECT_EQ(ClassifyBuffer("CPU_Mapped", cuda), v1::MEMORY_KIND_HOST_BUFFER);
  EXPECT_EQ(ClassifyBuffer("Host", cuda), v1::MEMORY_KIND_HOST_BUFFER);
  // A CPU-type backend's extra buffers, whatever their name: host memory.
  EXPECT_EQ(ClassifyBuffer("AMX", cuda), v1::MEMORY_KIND_HOST_BUFFER);
  EXPECT_EQ(ClassifyBuffer("CPU_REPACK", cuda), v1::MEMORY_KIND_HOST_BUFFER);
  // A GPU backend's buffer of a device the server did not report: whose it is, is not known.
  EXPECT_EQ(ClassifyBuffer("ROCm0", cuda), v1::MEMORY_KIND_BUFFER_UNKNOWN);

  const LogReport metal = ParseLogReport(Fixture("gpu_metal_m1pro_lv4.log"));
  EXPECT_EQ(ClassifyBuffer("MTL0", metal), v1::MEMORY_KIND_DEVICE_BUFFER);
  EXPECT_EQ(ClassifyBuffer("MTL0_Mapped", metal), v1::MEMORY_KIND_DEVICE_BUFFER);
  EXPECT_EQ(ClassifyBuffer("Metal_Mapped", metal), v1::MEMORY_KIND_DEVICE_BUFFER);

  // The CPU-only Xeon: nothing is a device, AMX included.
  const LogReport xeon = ParseLogReport(Fixture("cpu_amx_xeon_lv4.log"));
  EXPECT_EQ(ClassifyBuffer("AMX", xeon), v1::MEMORY_KIND_HOST_BUFFER);
  EXPECT_EQ(ClassifyBuffer("CUDA0", xeon), v1::MEMORY_KIND_BUFFER_UNKNOWN);

  // A log that names no device: host names are host memory, anything else unknown, never device.
  const LogReport silent = ParseLogReport("load_tensors:        CUDA0 model buffer size =  1918.35 MiB\n");
  EXPECT_FALSE(silent.reports_devices());
  EXPECT_EQ(ClassifyBuffer("CUDA0", silent), v1::MEMORY_KIND_BUFFER_UNKNOWN);
  EXPECT_EQ(ClassifyBuffer("AMX", silent), v1::MEMORY_KIND_BUFFER_UNKNOWN);
  EXPECT_EQ(ClassifyBuffer("CPU", silent), v1::MEMORY_KIND_HOST_BUFFER);
  EXPECT_EQ(ClassifyBuffer("CUDA_Host", silent), v1::MEMORY_KIND_HOST_BUFFER);
  // A breakdown row with total/free columns is a device llama.cpp uses, even in such a log.
  EXPECT_EQ(ClassifyBuffer("CUDA0", silent, /*device_row=*/true), v1::MEMORY_KIND_DEVICE_BUFFER);
}

}  // namespace
}  // namespace benchfleet::llama_cpp
