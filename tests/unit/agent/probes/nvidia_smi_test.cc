#include "agent/probes/nvidia_smi.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/agent/probes/fake_tools.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using ::testing::HasSubstr;
using testing::Fixture;
using testing::Printed;
using testing::ScriptedRunner;

constexpr uint64_t kMiB = 1024 * 1024;

TEST(NvidiaSmiParseTest, InfoOfTheH200) {
  auto gpus = ParseNvidiaGpuInfo(Fixture("probes/nvidia/query-gpu-info.csv"));
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 1u);
  const NvidiaGpuInfo& gpu = (*gpus)[0];
  EXPECT_EQ(gpu.index, "0");
  EXPECT_EQ(gpu.name, "NVIDIA H200");
  EXPECT_EQ(gpu.uuid, "GPU-d5afe954-131a-15b3-8507-5643efcdfb20");
  EXPECT_EQ(gpu.driver, "580.159.04");
  EXPECT_EQ(gpu.memory_bytes, 143771 * kMiB);
  EXPECT_EQ(gpu.power_limit_watts, 700.0);
  EXPECT_EQ(gpu.max_sm_clock_mhz, 1980.0);
  EXPECT_EQ(gpu.max_memory_clock_mhz, 3201.0);
  EXPECT_EQ(gpu.pci_bus_id, "00000000:00:06.0");
  EXPECT_EQ(gpu.vbios, "96.00.A5.00.1A");

  v1::Accelerator accelerator;
  FillAccelerator(gpu, &accelerator);
  EXPECT_EQ(accelerator.vendor(), "nvidia");
  EXPECT_EQ(accelerator.memory_bytes(), 143771 * kMiB);
  EXPECT_EQ(accelerator.attributes().at("power_limit_watts"), "700");
  EXPECT_EQ(accelerator.attributes().at("max_sm_clock_mhz"), "1980");
  EXPECT_EQ(accelerator.attributes().at("uuid"), "GPU-d5afe954-131a-15b3-8507-5643efcdfb20");
}

// Found by the nvidia_smi fuzz target: a whole number beyond int64_t was converted to print it
// (undefined behaviour). It prints as a double.
TEST(NvidiaSmiParseTest, HugeFiguresPrintAsDoubles) {
  NvidiaGpuInfo gpu;
  gpu.max_sm_clock_mhz = 1980;
  gpu.max_memory_clock_mhz = 3.2e21;
  v1::Accelerator accelerator;
  FillAccelerator(gpu, &accelerator);
  EXPECT_EQ(accelerator.attributes().at("max_sm_clock_mhz"), "1980");
  EXPECT_EQ(accelerator.attributes().at("max_memory_clock_mhz"), "3.2e+21");
}

TEST(NvidiaSmiParseTest, IdleSampleOfTheH200) {
  auto samples = ParseNvidiaSamples(Fixture("probes/nvidia/query-gpu-sample-idle.csv"));
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 1u);
  const DeviceSample& s = (*samples)[0];
  EXPECT_EQ(s.device, "0");
  EXPECT_EQ(s.utilization_percent, 0.0);
  EXPECT_EQ(s.memory_used_bytes, 0u);
  EXPECT_EQ(s.power_watts, 78.38);
  EXPECT_EQ(s.temperature_celsius, 34.0);
  EXPECT_EQ(s.sm_clock_mhz, 345.0);
  EXPECT_EQ(s.max_sm_clock_mhz, 1980.0);
  EXPECT_EQ(s.throttle_reasons, 0x1u);
  EXPECT_EQ(NvidiaReasonNames(0x1), "gpu_idle");
}

TEST(NvidiaSmiParseTest, PlaceholdersLeaveFiguresEmpty) {
  auto samples = ParseNvidiaSamples(Fixture("probes/nvidia/query-gpu-sample-throttled.csv"));
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 3u);
  EXPECT_EQ((*samples)[0].throttle_reasons, 0x4u);
  EXPECT_EQ((*samples)[1].throttle_reasons, 0x60u);
  EXPECT_EQ(NvidiaReasonNames(0x60), "sw_thermal_slowdown,hw_thermal_slowdown");
  EXPECT_EQ(NvidiaReasonNames(0x1000), "0x1000");
  const DeviceSample& na = (*samples)[2];
  EXPECT_EQ(na.device, "2");
  EXPECT_EQ(na.utilization_percent, std::nullopt);
  EXPECT_EQ(na.memory_used_bytes, std::nullopt);
  EXPECT_EQ(na.power_watts, std::nullopt);
  EXPECT_EQ(na.temperature_celsius, 40.0);
  EXPECT_EQ(na.throttle_reasons, std::nullopt);
}

TEST(NvidiaSmiParseTest, ComputeApps) {
  auto apps = ParseNvidiaComputeApps(Fixture("probes/nvidia/query-compute-apps.csv"));
  ASSERT_TRUE(apps.ok()) << apps.status();
  ASSERT_EQ(apps->size(), 2u);
  EXPECT_EQ((*apps)[0].pid, 4242);
  EXPECT_EQ((*apps)[0].name, "/usr/bin/python3");
  EXPECT_EQ((*apps)[0].used_bytes, 20480 * kMiB);
  EXPECT_EQ((*apps)[1].pid, 4321);
  EXPECT_EQ((*apps)[1].name, "");
  EXPECT_EQ((*apps)[1].used_bytes, std::nullopt);
  // The real capture: the header of --format=csv only (no process), which names the column
  // used_gpu_memory although the query said used_memory.
  auto none = ParseNvidiaComputeApps(Fixture("nvidia-smi/query-apps.csv"));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
  EXPECT_TRUE(ParseNvidiaComputeApps("").value().empty());
  auto with_units = ParseNvidiaComputeApps("pid, process_name, used_gpu_memory [MiB]\n77, llama-server, 812 MiB\n");
  ASSERT_TRUE(with_units.ok()) << with_units.status();
  EXPECT_EQ(with_units->at(0).used_bytes, 812 * kMiB);
}

TEST(NvidiaSmiParseTest, GarbageGivesAReasonNeverACrash) {
  EXPECT_EQ(ParseNvidiaGpuInfo("").status().message(), "nvidia-smi --query-gpu: no GPU line in the output");
  EXPECT_EQ(ParseNvidiaGpuInfo("0, NVIDIA H200, GPU-d5af").status().message(),
            "nvidia-smi --query-gpu line 1 has 3 fields, expected 10: '0, NVIDIA H200, GPU-d5af'");
  // The real 12-column capture is not the info query.
  EXPECT_THAT(ParseNvidiaGpuInfo(Fixture("nvidia-smi/query-gpu.csv")).status().message(),
              HasSubstr("line 1 has 12 fields, expected 10"));
  EXPECT_THAT(ParseNvidiaSamples(Fixture("nvidia-smi/query-gpu.csv")).status().message(),
              HasSubstr("line 1 has 12 fields, expected 8"));
  EXPECT_EQ(ParseNvidiaGpuInfo("[N/A], [N/A], a, b, c, d, e, f, g, h").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseNvidiaSamples("GPU, 1, 2, 3, 4, 5, 6, 7").status().message(),
            "nvidia-smi --query-gpu (sample): not a GPU index: 'GPU'");
  // What nvidia-smi prints when the driver is not loaded.
  EXPECT_THAT(ParseNvidiaSamples("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                                 "Make sure that the latest NVIDIA driver is installed and running.\n")
                  .status()
                  .message(),
              HasSubstr("line 1 has 1 field, expected 8"));
  EXPECT_THAT(ParseNvidiaComputeApps("4242, python").status().message(),
              HasSubstr("line 1 is not 'pid, process_name, used_memory'"));
  EXPECT_THAT(ParseNvidiaComputeApps("-5, python, 1").status().message(), HasSubstr("line 1 is not"));
  EXPECT_THAT(ParseNvidiaComputeApps(std::string("\0\xff\xfe", 3)).status().message(), HasSubstr("line 1 is not"));
  // Found by the nvidia_smi fuzz target: a pid beyond int64_t was converted (undefined behaviour).
  EXPECT_THAT(ParseNvidiaComputeApps(std::string(54, '3') + ", python, 1").status().message(),
              HasSubstr("line 1 is not"));
  EXPECT_THAT(ParseNvidiaComputeApps("2147483648, python, 1").status().message(), HasSubstr("line 1 is not"));
  EXPECT_EQ(ParseNvidiaComputeApps("2147483647, python, 1").value().at(0).pid, 2147483647);
}

TEST(NvidiaProbeTest, FillsTheConditionsFromTheTool) {
  ScriptedRunner runner;
  runner.Answer(std::string("nvidia-smi --query-gpu=") + kNvidiaInfoFields + " --format=csv,noheader,nounits",
                Printed(Fixture("probes/nvidia/query-gpu-info.csv")));
  SimulatedClock clock;
  NvidiaProbe probe(&runner, &clock);
  v1::MachineConditions conditions;
  ASSERT_TRUE(probe.Probe(&conditions).ok());
  ASSERT_EQ(conditions.accelerators_size(), 1);
  EXPECT_EQ(conditions.accelerators(0).name(), "NVIDIA H200");
  EXPECT_EQ(conditions.accelerators(0).driver(), "580.159.04");
  EXPECT_TRUE(probe.notes().empty());
}

TEST(NvidiaProbeTest, AMissingToolOrBadOutputIsANote) {
  ScriptedRunner missing;
  SimulatedClock clock;
  NvidiaProbe probe(&missing, &clock);
  v1::MachineConditions conditions;
  ASSERT_TRUE(probe.Probe(&conditions).ok());
  EXPECT_EQ(conditions.accelerators_size(), 0);
  ASSERT_EQ(probe.notes().size(), 1u);
  EXPECT_EQ(probe.notes()[0].probe, "nvidia");
  EXPECT_EQ(probe.notes()[0].reason, "nvidia-smi: not found on PATH");

  ScriptedRunner failing;
  const std::string info = std::string("nvidia-smi --query-gpu=") + kNvidiaInfoFields + " --format=csv,noheader,nounits";
  failing.Answer(info, Printed("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", 9));
  NvidiaProbe failed(&failing, &clock);
  ASSERT_TRUE(failed.Probe(&conditions).ok());
  EXPECT_EQ(conditions.accelerators_size(), 0);
  ASSERT_EQ(failed.notes().size(), 1u);
  EXPECT_EQ(failed.notes()[0].reason,
            info + " exited with code 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.");

  ScriptedRunner garbage;
  garbage.Answer(info, Printed("0, NVIDIA H200\n"));
  NvidiaProbe odd(&garbage, &clock);
  ASSERT_TRUE(odd.Probe(&conditions).ok());
  EXPECT_EQ(conditions.accelerators_size(), 0);
  EXPECT_EQ(odd.notes().at(0).reason, "nvidia-smi --query-gpu line 1 has 2 fields, expected 10: '0, NVIDIA H200'");
}

// A fake nvidia-smi on a search path of its own, run for real: the old driver that knows only
// clocks_throttle_reasons, so the probe falls back to the legacy field list.
TEST(NvidiaProbeTest, ReadsAFakeToolForRealAndFallsBackToTheLegacyFieldName) {
  testing::ScopedTempDir dir;
  testing::WriteTool(dir.path(), "nvidia-smi",
                     "case \"$1\" in\n"
                     "  *clocks_event_reasons*) echo 'Field \"clocks_event_reasons.active\" is not a valid field to "
                     "query.'; exit 2;;\n"
                     "  --query-gpu=index,utilization*) cat '" + testing::FixturePath("probes/nvidia/query-gpu-sample-throttled.csv") + "';;\n"
                     "  --query-compute-apps*) cat '" + testing::FixturePath("probes/nvidia/query-compute-apps.csv") + "';;\n"
                     "  *) exit 3;;\n"
                     "esac\n");
  auto runner = NewPosixCommandRunner(dir.path().c_str());
  SimulatedClock clock;
  NvidiaProbe probe(runner.get(), &clock);
  auto reading = probe.Read();
  ASSERT_TRUE(reading.ok()) << reading.status();
  ASSERT_EQ(reading->devices.size(), 3u);
  EXPECT_EQ(reading->devices[1].throttle_reasons, 0x60u);
  ASSERT_EQ(reading->processes.size(), 2u);
  EXPECT_EQ(reading->processes[0].pid, 4242);
  EXPECT_TRUE(reading->problems.empty());
  EXPECT_EQ(reading->at, clock.Monotonic());
  // The conditions query is not scripted: exit 3 is a note, not a crash.
  v1::MachineConditions conditions;
  ASSERT_TRUE(probe.Probe(&conditions).ok());
  EXPECT_THAT(probe.notes().at(0).reason, HasSubstr("exited with code 3"));
}

}  // namespace
}  // namespace benchfleet::agent
