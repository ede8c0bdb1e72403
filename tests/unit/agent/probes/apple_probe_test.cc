#include "agent/probes/apple_probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/probes/device_sampler.h"
#include "tests/unit/agent/probes/fake_tools.h"

namespace benchfleet::agent {
namespace {

using testing::Fixture;
using testing::Printed;
using testing::ScriptedRunner;

constexpr char kSysctl[] = "sysctl -n machdep.cpu.brand_string hw.memsize hw.ncpu";
constexpr char kProfiler[] = "system_profiler SPHardwareDataType SPDisplaysDataType -json";

TEST(AppleParseTest, Sysctl) {
  auto facts = ParseSysctlFacts(Fixture("probes/apple/sysctl-m1pro.txt"));
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->cpu_brand, "Apple M1 Pro");
  EXPECT_EQ(facts->memory_bytes, 17179869184u);
  EXPECT_EQ(facts->logical_cpus, 10u);
  EXPECT_EQ(ParseSysctlFacts("").status().message(),
            "sysctl -n machdep.cpu.brand_string hw.memsize hw.ncpu: expected brand, bytes and count on 3 lines, got 0 "
            "lines");
  EXPECT_EQ(ParseSysctlFacts("Apple M1 Pro\n17179869184\n").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseSysctlFacts("Apple M1 Pro\nlots\n10\n").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseSysctlFacts("sysctl: unknown oid 'machdep.cpu.brand_string'\n").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(AppleParseTest, SystemProfiler) {
  auto hardware = ParseSystemProfilerJson(Fixture("probes/apple/system-profiler-m1pro.json"));
  ASSERT_TRUE(hardware.ok()) << hardware.status();
  EXPECT_EQ(hardware->chip, "Apple M1 Pro");
  EXPECT_EQ(hardware->model, "MacBookPro18,3");
  EXPECT_EQ(hardware->gpu_name, "Apple M1 Pro");
  EXPECT_EQ(hardware->gpu_cores, 16u);
  EXPECT_EQ(hardware->metal_family, "spdisplays_metal3");
  const std::string full = Fixture("probes/apple/system-profiler-m1pro.json");
  EXPECT_EQ(ParseSystemProfilerJson(full.substr(0, full.size() / 2)).status().message(),
            "system_profiler -json: the output is not a JSON object");
  EXPECT_EQ(ParseSystemProfilerJson("").status().message(), "system_profiler -json: the output is not a JSON object");
  EXPECT_EQ(ParseSystemProfilerJson(R"({"SPDisplaysDataType": [], "SPHardwareDataType": 3})").status().message(),
            "system_profiler -json: neither chip_type nor sppci_model in the output");
  auto no_cores = ParseSystemProfilerJson(R"({"SPDisplaysDataType": [{"sppci_model": "X", "sppci_cores": 16}]})");
  ASSERT_TRUE(no_cores.ok()) << no_cores.status();
  EXPECT_EQ(no_cores->gpu_cores, std::nullopt);  // a number, not the string system_profiler writes
}

TEST(AppleParseTest, PmsetTherm) {
  auto none = ParsePmsetTherm(Fixture("probes/apple/pmset-therm-none.txt"));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->Slowdown(), "");
  auto limited = ParsePmsetTherm(Fixture("probes/apple/pmset-therm-limited.txt"));
  ASSERT_TRUE(limited.ok()) << limited.status();
  EXPECT_EQ(limited->thermal_warning_level, 1);
  EXPECT_EQ(limited->performance_warning_level, 0);
  EXPECT_EQ(limited->cpu_speed_limit, 80);
  EXPECT_EQ(limited->Slowdown(), "CPU_Speed_Limit 80, thermal warning level 1");
  EXPECT_EQ(ParsePmsetTherm("").status().message(), "pmset -g therm: no line of the expected form");
  EXPECT_EQ(ParsePmsetTherm("Usage: pmset <options>\n").status().message(),
            "pmset -g therm: no line of the expected form");
}

TEST(AppleProbeTest, TheGpuSharesTheHostMemory) {
  ScriptedRunner runner;
  runner.Answer(kSysctl, Printed(Fixture("probes/apple/sysctl-m1pro.txt")));
  runner.Answer(kProfiler, Printed(Fixture("probes/apple/system-profiler-m1pro.json")));
  SimulatedClock clock;
  AppleProbe probe(&runner, &clock);
  v1::MachineConditions conditions;
  ASSERT_TRUE(probe.Probe(&conditions).ok());
  EXPECT_TRUE(probe.notes().empty());
  EXPECT_EQ(conditions.cpu_model(), "Apple M1 Pro");
  EXPECT_EQ(conditions.logical_cores(), 10u);
  ASSERT_EQ(conditions.accelerators_size(), 1);
  const v1::Accelerator& gpu = conditions.accelerators(0);
  EXPECT_EQ(gpu.name(), "Apple M1 Pro");
  EXPECT_EQ(gpu.vendor(), "apple");
  EXPECT_EQ(gpu.memory_bytes(), 17179869184u);
  EXPECT_EQ(gpu.attributes().at("gpu_cores"), "16");
  EXPECT_EQ(gpu.attributes().at("memory"), "unified (host memory)");
}

TEST(AppleProbeTest, MissingToolsAreNotes) {
  ScriptedRunner runner;
  SimulatedClock clock;
  AppleProbe probe(&runner, &clock);
  v1::MachineConditions conditions;
  ASSERT_TRUE(probe.Probe(&conditions).ok());
  EXPECT_EQ(conditions.accelerators_size(), 0);
  ASSERT_EQ(probe.notes().size(), 2u);
  EXPECT_EQ(probe.notes()[0].reason, "sysctl: not found on PATH");
  EXPECT_EQ(probe.notes()[1].reason, "system_profiler: not found on PATH");
  EXPECT_EQ(probe.Read().status().message(), "pmset: not found on PATH");
}

TEST(AppleProbeTest, ThermalLimitDuringARunIsThrottledWithoutEnergy) {
  ScriptedRunner runner;
  runner.Answer("pmset -g therm", Printed(Fixture("probes/apple/pmset-therm-limited.txt")));
  SimulatedClock clock;
  AppleProbe probe(&runner, &clock);
  std::vector<DeviceReading> readings;
  for (int i = 0; i < 3; ++i) {
    auto reading = probe.Read();
    ASSERT_TRUE(reading.ok()) << reading.status();
    readings.push_back(*reading);
    clock.Advance(absl::Seconds(1));
  }
  v1::RunRecord record;
  AnnotateOptions options;
  options.vendor = "apple";
  AnnotateRun(readings, {readings.front().at, readings.back().at}, options, &record);
  ASSERT_EQ(record.flags_size(), 1);
  EXPECT_EQ(record.flags(0).code(), "THROTTLED");
  EXPECT_EQ(record.flags(0).reason(), "apple:0 CPU_Speed_Limit 80, thermal warning level 1 in 3 of 3 samples");
  for (const v1::Metric& metric : record.metrics()) EXPECT_NE(metric.name(), kEnergyMetric);
  EXPECT_EQ(record.memory_size(), 0);
}

}  // namespace
}  // namespace benchfleet::agent
