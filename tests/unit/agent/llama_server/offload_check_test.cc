// ReadOffloadRequest and JudgeOffload (offload_check.h): what a mode asks for against what the
// server's log says it did (the CPU-only capture, and the GPU fixtures written from llama.cpp's
// source: tests/fixtures/llama-server/README.md).
#include "agent/backends/llama_server/offload_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/agent/llama_server/replay_server.h"

namespace benchfleet::agent::llama_server {
namespace {

using ::benchfleet::agent::testing::Fixture;
using Kind = OffloadRequest::Kind;

TEST(OffloadCheckTest, ReadsWhatTheArgumentsAsk) {
  EXPECT_EQ(ReadOffloadRequest({}).kind, Kind::kNotGiven);
  EXPECT_EQ(ReadOffloadRequest({"-c", "4096"}).kind, Kind::kNotGiven);
  const OffloadRequest n99 = ReadOffloadRequest({"-ngl", "99"});
  EXPECT_EQ(n99.kind, Kind::kLayers);
  EXPECT_EQ(n99.layers, 99);
  EXPECT_EQ(n99.argument, "-ngl 99");
  EXPECT_EQ(ReadOffloadRequest({"--gpu-layers", "0"}).kind, Kind::kNone);
  EXPECT_EQ(ReadOffloadRequest({"--n-gpu-layers", "all"}).kind, Kind::kAll);
  EXPECT_EQ(ReadOffloadRequest({"-ngl", "auto"}).kind, Kind::kAll);
  EXPECT_EQ(ReadOffloadRequest({"-ngl", "-1"}).kind, Kind::kAll);
  // The last one wins, as in llama.cpp's parser.
  EXPECT_EQ(ReadOffloadRequest({"-ngl", "99", "-ngl", "0"}).kind, Kind::kNone);
  const OffloadRequest none = ReadOffloadRequest({"-ngl", "99", "--device", "none"});
  EXPECT_EQ(none.kind, Kind::kNone);
  EXPECT_EQ(none.argument, "--device none");
}

TEST(OffloadCheckTest, AGpuModeOnTheCapturedCpuOnlyServerFailsWithTheServersWords) {
  const llama_cpp::LogReport report = llama_cpp::ParseLogReport(Fixture("startup_verbose_lv4.log"));
  const OffloadVerdict verdict = JudgeOffload("gpu", ReadOffloadRequest({"-ngl", "99"}), report, false, false);
  EXPECT_EQ(verdict.open_error.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(verdict.open_error.message(),
            "mode gpu asks llama-server to offload layers to a GPU (-ngl 99), but the server offloaded none: "
            "\"warning: no usable GPU found, --gpu-layers option will be ignored\" (its log, line 1). Its runs "
            "would measure the CPU under the name gpu; list the mode in llama-server.allow_no_offload to run it "
            "anyway (flagged NO_OFFLOAD)");
  EXPECT_FALSE(verdict.flag.has_value());
  EXPECT_EQ(verdict.devices, "none (warning: no usable GPU found, --gpu-layers option will be ignored)");
  EXPECT_EQ(verdict.offloaded_layers, "0/0");
}

TEST(OffloadCheckTest, AllowedToRunWithoutAGpuTheRunsAreFlaggedNoOffload) {
  const llama_cpp::LogReport report = llama_cpp::ParseLogReport(Fixture("startup_verbose_lv4.log"));
  const OffloadVerdict verdict = JudgeOffload("gpu", ReadOffloadRequest({"-ngl", "99"}), report, true, false);
  EXPECT_TRUE(verdict.open_error.ok());
  ASSERT_TRUE(verdict.flag.has_value());
  EXPECT_EQ(verdict.flag->code(), "NO_OFFLOAD");
  EXPECT_EQ(verdict.flag->reason(),
            "mode gpu asks for GPU offload (-ngl 99) but llama-server offloaded no layer: \"warning: no usable GPU "
            "found, --gpu-layers option will be ignored\" (its log, line 1); it ran on the CPU (allowed by "
            "llama-server.allow_no_offload)");
}

TEST(OffloadCheckTest, ACpuModeOnACpuOnlyServerIsFine) {
  const llama_cpp::LogReport report = llama_cpp::ParseLogReport(Fixture("startup_verbose_lv4.log"));
  for (const std::vector<std::string>& args : {std::vector<std::string>{"-ngl", "0"}, std::vector<std::string>{}}) {
    const OffloadVerdict verdict = JudgeOffload("cpu", ReadOffloadRequest(args), report, false, false);
    EXPECT_TRUE(verdict.open_error.ok());
    EXPECT_FALSE(verdict.flag.has_value());
  }
}

TEST(OffloadCheckTest, AFullOffloadOnAnA100PassesAndSaysWhere) {
  const llama_cpp::LogReport report = llama_cpp::ParseLogReport(Fixture("gpu_cuda_a100_lv4.log"));
  const OffloadVerdict verdict = JudgeOffload("gpu", ReadOffloadRequest({"-ngl", "99"}), report, false, false);
  EXPECT_TRUE(verdict.open_error.ok());
  EXPECT_FALSE(verdict.flag.has_value());
  EXPECT_EQ(verdict.devices, "CUDA0 (NVIDIA A100-SXM4-80GB)");
  EXPECT_EQ(verdict.offloaded_layers, "37/37");
}

TEST(OffloadCheckTest, FewerLayersThanAskedIsPartialOffloadUnlessAccepted) {
  const llama_cpp::LogReport report = llama_cpp::ParseLogReport(Fixture("gpu_cuda_fit_partial_lv4.log"));
  const OffloadVerdict verdict = JudgeOffload("gpu", ReadOffloadRequest({}), report, false, false);
  EXPECT_TRUE(verdict.open_error.ok());
  ASSERT_TRUE(verdict.flag.has_value());
  EXPECT_EQ(verdict.flag->code(), "PARTIAL_OFFLOAD");
  EXPECT_EQ(verdict.flag->reason(),
            "llama-server offloaded 20/33 layers to GPU (its log, line 23), fewer than mode gpu asks (no offload "
            "argument: llama.cpp's default, every layer that fits: 33); not accepted by "
            "llama-server.allow_partial_offload");
  EXPECT_EQ(verdict.offloaded_layers, "20/33");
  EXPECT_FALSE(JudgeOffload("gpu", ReadOffloadRequest({}), report, false, true).flag.has_value());
  // Asking for 20 layers and getting 20 is what was asked.
  EXPECT_FALSE(JudgeOffload("gpu", ReadOffloadRequest({"-ngl", "20"}), report, false, false).flag.has_value());
}

TEST(OffloadCheckTest, AGpuBuildThatOffloadedNothingIsNoOffload) {
  const llama_cpp::LogReport report = llama_cpp::ParseLogReport(
      "llama_prepare_model_devices: using device CUDA0 (NVIDIA A100-SXM4-80GB) - 80562 MiB free\n"
      "load_tensors: offloading 0 repeating layers to GPU\n"
      "load_tensors: offloaded 0/37 layers to GPU\n");
  const OffloadVerdict failed = JudgeOffload("gpu", ReadOffloadRequest({"-ngl", "all"}), report, false, false);
  EXPECT_EQ(failed.open_error.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(failed.open_error.message()),
              ::testing::HasSubstr("the server offloaded none: \"offloaded 0/37 layers to GPU\" (its log, line 3)"));
  // -ngl 0 on a GPU build asks for nothing: no verdict.
  const OffloadVerdict cpu = JudgeOffload("cpu", ReadOffloadRequest({"-ngl", "0"}), report, false, false);
  EXPECT_TRUE(cpu.open_error.ok());
  EXPECT_FALSE(cpu.flag.has_value());
  EXPECT_EQ(cpu.devices, "CUDA0 (NVIDIA A100-SXM4-80GB)");
  EXPECT_EQ(cpu.offloaded_layers, "0/37");
}

}  // namespace
}  // namespace benchfleet::agent::llama_server
