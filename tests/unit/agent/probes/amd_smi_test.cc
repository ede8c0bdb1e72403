// amd-smi, rocm-smi's successor: its parsers on the documented-format fixtures of
// tests/fixtures/probes/amd/ and on garbage, and AmdProbe falling back to it when rocm-smi does
// not answer (conditions, readings, MI250X throttling inferred from the clock, CONTENDED).
#include "agent/probes/amd_smi.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "agent/probes/device_sampler.h"
#include "agent/probes/rocm_smi.h"
#include "tests/unit/agent/probes/fake_tools.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using testing::Fixture;
using testing::Printed;
using testing::ScriptedRunner;

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr char kStatic[] = "amd-smi static --asic --board --vbios --driver --vram --json";
constexpr char kMetric[] = "amd-smi metric --mem-usage --usage --power --clock --temperature --json";
constexpr char kProcess[] = "amd-smi process --json";

TEST(AmdSmiParseTest, StaticOfTwoMi250xGcdsInTheGpuDataShape) {
  auto gpus = ParseAmdSmiStatic(Fixture("probes/amd/amd-smi-static-mi250x.json"));
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 2u);
  const AmdSmiGpu& gpu = (*gpus)[1];
  EXPECT_EQ(gpu.index, "1");
  EXPECT_EQ(gpu.name, "AMD Instinct MI250X");
  EXPECT_EQ(gpu.driver, "6.3.6");
  EXPECT_EQ(gpu.vbios, "022.040.003.043.000001");
  EXPECT_EQ(gpu.vram_total_bytes, 65520 * kMiB);  // amd-smi's "MB" is MiB: the same 68702699520 B as rocm-smi
  EXPECT_EQ(gpu.vram_total_bytes, 68702699520u);

  // Without a market name: the board's product name; without a VBIOS version: its part number.
  auto bare = ParseAmdSmiStatic(
      R"([{"gpu": 0, "asic": {"market_name": "N/A"}, "board": {"product_name": "Instinct MI210"},
          "vbios": {"version": "N/A", "part_number": "113-D67301-063"}, "vram": {"size": "65520 MB"}}])");
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(bare->at(0).name, "Instinct MI210");
  EXPECT_EQ(bare->at(0).vbios, "113-D67301-063");
  EXPECT_EQ(bare->at(0).driver, "");
  EXPECT_EQ(bare->at(0).vram_total_bytes, 65520 * kMiB);
}

TEST(AmdSmiParseTest, MetricOfAnMi250xUnderLoadInTheListShape) {
  std::vector<std::optional<uint64_t>> totals;
  auto samples = ParseAmdSmiMetric(Fixture("probes/amd/amd-smi-metric-mi250x-load.json"), &totals);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 2u);
  const DeviceSample& busy = (*samples)[0];
  EXPECT_EQ(busy.device, "0");
  EXPECT_EQ(busy.memory_used_bytes, 50176 * kMiB);
  EXPECT_EQ(busy.memory_used_bytes, 52613349376u);  // rocm-smi's figure for the same load
  EXPECT_EQ(busy.utilization_percent, 100.0);
  EXPECT_EQ(busy.power_watts, 498.0);
  EXPECT_EQ(busy.temperature_celsius, 97.0);  // hotspot (junction) before edge, as with rocm-smi
  EXPECT_EQ(busy.sm_clock_mhz, 1210.0);
  EXPECT_EQ(busy.max_sm_clock_mhz, 1700.0);
  EXPECT_EQ(busy.throttle_reasons, std::nullopt);  // MI250X: no throttle counters
  const DeviceSample& idle = (*samples)[1];
  EXPECT_EQ(idle.memory_used_bytes, 10 * kMiB);
  EXPECT_EQ(idle.power_watts, std::nullopt);  // "N/A"
  EXPECT_EQ(idle.sm_clock_mhz, 800.0);
  EXPECT_EQ(totals, (std::vector<std::optional<uint64_t>>{68702699520u, 68702699520u}));
}

TEST(AmdSmiParseTest, MetricOfRocm60WithItsOlderClockKeysAndBareFigures) {
  auto samples = ParseAmdSmiMetric(R"([{"gpu": 0,
      "clock": {"gfx": {"cur_clk": {"value": 1650, "unit": "MHz"}, "max_clk": {"value": 1700, "unit": "MHz"}}},
      "power": {"average_socket_power": {"value": 300, "unit": "W"}},
      "temperature": {"edge": {"value": 50, "unit": "C"}, "hotspot": "N/A"},
      "usage": {"gfx_activity": {"value": "99", "unit": "%"}},
      "mem_usage": {"used_vram": "1024 MB"}}])");
  ASSERT_TRUE(samples.ok()) << samples.status();
  const DeviceSample& s = samples->at(0);
  EXPECT_EQ(s.sm_clock_mhz, 1650.0);
  EXPECT_EQ(s.max_sm_clock_mhz, 1700.0);
  EXPECT_EQ(s.power_watts, 300.0);
  EXPECT_EQ(s.temperature_celsius, 50.0);
  EXPECT_EQ(s.utilization_percent, 99.0);
  EXPECT_EQ(s.memory_used_bytes, 1024 * kMiB);
}

TEST(AmdSmiParseTest, Processes) {
  auto processes = ParseAmdSmiProcess(Fixture("probes/amd/amd-smi-process.json"));
  ASSERT_TRUE(processes.ok()) << processes.status();
  ASSERT_EQ(processes->size(), 2u);  // GPU 1's "No running processes detected" is none
  EXPECT_EQ((*processes)[0].pid, 2183);
  EXPECT_EQ((*processes)[0].name, "python3");
  EXPECT_EQ((*processes)[0].used_bytes, 52601995264u);  // vram_mem, not mem_usage (which adds GTT and CPU)
  EXPECT_EQ((*processes)[1].pid, 2290);
  EXPECT_EQ((*processes)[1].name, "rocm-bandwidth-test");
  EXPECT_EQ((*processes)[1].used_bytes, 1073741824u);

  auto none = ParseAmdSmiProcess(Fixture("probes/amd/amd-smi-process-none.json"));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());

  // Without the process_info wrapper, a pid as a string, only mem_usage, in MB.
  auto flat = ParseAmdSmiProcess(R"([{"gpu": 0, "process_list": [{"name": "ollama", "pid": "77",
                                     "mem_usage": {"value": 2048, "unit": "MB"}}]}])");
  ASSERT_TRUE(flat.ok()) << flat.status();
  ASSERT_EQ(flat->size(), 1u);
  EXPECT_EQ(flat->at(0).pid, 77);
  EXPECT_EQ(flat->at(0).used_bytes, 2048 * kMiB);
}

TEST(AmdSmiParseTest, GarbageGivesAReasonNeverACrash) {
  EXPECT_EQ(ParseAmdSmiStatic("").status().message(), "amd-smi static --json: the output is not JSON");
  const std::string full = Fixture("probes/amd/amd-smi-static-mi250x.json");
  EXPECT_EQ(ParseAmdSmiStatic(full.substr(0, full.size() / 2)).status().message(),
            "amd-smi static --json: the output is not JSON");
  EXPECT_EQ(ParseAmdSmiStatic("{}").status().message(), "amd-smi static --json: no \"gpu_data\" list in the output");
  EXPECT_EQ(ParseAmdSmiStatic(R"({"gpu_data": 5})").status().message(),
            "amd-smi static --json: the GPU list is not a JSON array");
  EXPECT_EQ(ParseAmdSmiStatic("[1, 2, {\"asic\": {}}]").status().message(), "amd-smi static --json: no GPU in the output");
  EXPECT_EQ(ParseAmdSmiMetric("ERROR:root:Unable to detect any GPU devices").status().message(),
            "amd-smi metric --json: the output is not JSON");
  EXPECT_EQ(ParseAmdSmiMetric("[]").status().code(), absl::StatusCode::kInvalidArgument);
  // Wrong types and unknown units leave the figures empty.
  auto odd = ParseAmdSmiMetric(R"([{"gpu": 0, "mem_usage": {"used_vram": {"value": 5, "unit": "parsecs"}},
      "usage": {"gfx_activity": [1]}, "power": {"socket_power": {"unit": "W"}}, "clock": {"gfx_0": 7}}])");
  ASSERT_TRUE(odd.ok()) << odd.status();
  EXPECT_EQ(odd->at(0).memory_used_bytes, std::nullopt);
  EXPECT_EQ(odd->at(0).utilization_percent, std::nullopt);
  EXPECT_EQ(odd->at(0).power_watts, std::nullopt);
  EXPECT_EQ(odd->at(0).sm_clock_mhz, std::nullopt);
  EXPECT_EQ(ParseAmdSmiProcess("").status().message(), "amd-smi process --json: the output is not JSON");
  EXPECT_EQ(ParseAmdSmiProcess("{}").status().message(), "amd-smi process --json: no list of GPUs in the output");
  EXPECT_EQ(ParseAmdSmiProcess(R"([{"gpu": 0, "process_list": [{"process_info": {"pid": "abc"}}]}])").status().message(),
            "amd-smi process --json: not a pid: \"abc\"");
  EXPECT_EQ(ParseAmdSmiProcess(R"([{"gpu": 0, "process_list": [{"process_info": {"pid": -4}}]}])").status().message(),
            "amd-smi process --json: not a pid: -4");
  EXPECT_EQ(ParseAmdSmiProcess(R"([{"gpu": 0, "process_list": [{"process_info": {"pid": 2147483648}}]}])")
                .status()
                .message(),
            "amd-smi process --json: not a pid: 2147483648");
  EXPECT_EQ(ParseAmdSmiProcess(R"([{"gpu": 0, "process_list": [{"process_info": {"pid": 1.5}}]}])").status().message(),
            "amd-smi process --json: not a pid: 1.5");
  // A figure beyond 64 bits is no figure.
  auto huge = ParseAmdSmiMetric(R"([{"gpu": 0, "mem_usage": {"used_vram": {"value": 1e300, "unit": "GB"}}}])");
  ASSERT_TRUE(huge.ok()) << huge.status();
  EXPECT_EQ(huge->at(0).memory_used_bytes, std::nullopt);
}

// rocm-smi is gone (ROCm 7 hosts ship amd-smi only): the probe uses amd-smi throughout.
TEST(AmdProbeTest, WithoutRocmSmiAmdSmiGivesTheConditionsAndTheReadings) {
  ScriptedRunner runner;
  runner.Answer(kStatic, Printed(Fixture("probes/amd/amd-smi-static-mi250x.json")));
  runner.Answer(kMetric, Printed(Fixture("probes/amd/amd-smi-metric-mi250x-load.json")));
  runner.Answer(kProcess, Printed(Fixture("probes/amd/amd-smi-process.json")));
  SimulatedClock clock;
  AmdProbe probe(&runner, &clock);
  v1::MachineConditions conditions;
  ASSERT_TRUE(probe.Probe(&conditions).ok());
  ASSERT_EQ(conditions.accelerators_size(), 2);
  EXPECT_EQ(conditions.accelerators(0).name(), "AMD Instinct MI250X");
  EXPECT_EQ(conditions.accelerators(0).vendor(), "amd");
  EXPECT_EQ(conditions.accelerators(0).driver(), "6.3.6");
  EXPECT_EQ(conditions.accelerators(0).index(), "0");
  EXPECT_EQ(conditions.accelerators(0).memory_bytes(), 68702699520u);
  EXPECT_EQ(conditions.accelerators(0).attributes().at("vbios"), "022.040.003.043.000001");
  EXPECT_TRUE(probe.notes().empty());
  EXPECT_EQ(probe.memory_source(), "amd-smi metric --mem-usage (mem_usage.used_vram)");

  std::vector<DeviceReading> readings;
  for (int i = 0; i < 3; ++i) {
    auto reading = probe.Read();
    ASSERT_TRUE(reading.ok()) << reading.status();
    ASSERT_EQ(reading->devices.size(), 2u);
    EXPECT_TRUE(reading->problems.empty());
    readings.push_back(std::move(*reading));
    clock.Advance(absl::Seconds(1));
  }
  // rocm-smi was tried once, at the Probe; every later call went straight to amd-smi.
  EXPECT_EQ(std::count(runner.calls.begin(), runner.calls.end(), kMetric), 3);
  EXPECT_EQ(std::count_if(runner.calls.begin(), runner.calls.end(),
                          [](const std::string& c) { return c.rfind("rocm-smi", 0) == 0; }),
            1);

  // The sampler's verdicts on these readings: MI250X throttling from the clock against its maximum
  // (no counters), and the two other processes make the run CONTENDED.
  AnnotateOptions options;
  options.vendor = probe.vendor();
  options.memory_source = probe.memory_source();
  v1::RunRecord record;
  AnnotateRun(readings, {absl::ZeroDuration(), absl::Seconds(2)}, options, &record);
  std::map<std::string, std::string> flags;
  for (const v1::Flag& flag : record.flags()) flags[flag.code()] = flag.reason();
  EXPECT_EQ(flags[kThrottledFlag],
            "amd:0 clock down to 1210 MHz, below 90% of its maximum 1700 MHz at >= 80% utilisation, in 3 of 3 samples");
  EXPECT_EQ(flags[kContendedFlag],
            "other processes on the amd device(s) during the run: pid 2183 python3 (50165 MiB), pid 2290 "
            "rocm-bandwidth-test (1024 MiB)");
  ASSERT_EQ(record.memory_size(), 2);
  EXPECT_EQ(record.memory(0).kind(), v1::MEMORY_KIND_DEVICE_USED);
  EXPECT_EQ(record.memory(0).scope(), "amd:0");
  EXPECT_EQ(record.memory(0).bytes(), 52613349376u);
  EXPECT_EQ(record.memory(0).source(), "amd-smi metric --mem-usage (mem_usage.used_vram), peak of 3 samples");
  for (const v1::Metric& metric : record.metrics()) {
    EXPECT_NE(metric.name(), kEnergyMetric) << "GCD 1 reports no power: no energy figure at all";
  }
}

TEST(AmdProbeTest, RocmSmiFirstWhenItAnswers) {
  ScriptedRunner runner;
  runner.Answer("rocm-smi --showproductname --showdriverversion --showvbios --showmeminfo vram --json",
                Printed(Fixture("probes/amd/rocm-smi-mi250x.json")));
  runner.Answer(kStatic, Printed(Fixture("probes/amd/amd-smi-static-mi250x.json")));
  SimulatedClock clock;
  AmdProbe probe(&runner, &clock);
  v1::MachineConditions conditions;
  ASSERT_TRUE(probe.Probe(&conditions).ok());
  EXPECT_EQ(conditions.accelerators(0).name(), "AMD INSTINCT MI250X");  // rocm-smi's spelling
  EXPECT_EQ(runner.calls.size(), 1u);
  EXPECT_EQ(probe.memory_source(), "rocm-smi --showmeminfo vram (VRAM Total Used Memory)");
}

TEST(AmdProbeTest, UnexpectedOutputLeavesTheFieldsEmptyWithBothReasons) {
  ScriptedRunner runner;
  runner.Answer(kStatic, Printed("ERROR:root:Unable to detect any GPU devices, check amdgpu version and module status"));
  CommandOutput failed = Printed("", 1);
  failed.stderr_text = "AMDSMI_STATUS_DRIVER_NOT_LOADED\n";
  runner.Answer(kMetric, failed);
  SimulatedClock clock;
  AmdProbe probe(&runner, &clock);
  v1::MachineConditions conditions;
  ASSERT_TRUE(probe.Probe(&conditions).ok());
  EXPECT_EQ(conditions.accelerators_size(), 0);
  ASSERT_EQ(probe.notes().size(), 1u);
  EXPECT_EQ(probe.notes()[0].probe, "amd");
  EXPECT_EQ(probe.notes()[0].reason, "rocm-smi: not found on PATH; amd-smi static --json: the output is not JSON");
  auto reading = probe.Read();
  EXPECT_EQ(reading.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(reading.status().message(),
            std::string("rocm-smi: not found on PATH; ") +
                DescribeFailure({"amd-smi", "metric", "--mem-usage", "--usage", "--power", "--clock", "--temperature",
                                 "--json"},
                                failed));

  // A process list that cannot be read is a problem of the reading, not a failed reading.
  ScriptedRunner partial;
  partial.Answer(kMetric, Printed(Fixture("probes/amd/amd-smi-metric-mi250x-load.json")));
  partial.Answer(kProcess, Printed("not json"));
  AmdProbe reader(&partial, &clock);
  auto read = reader.Read();
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->devices.size(), 2u);
  EXPECT_EQ(read->problems, std::vector<std::string>{"amd-smi process --json: the output is not JSON"});
}

// The real runner on a fake amd-smi (a shell script) alone on the search path.
TEST(AmdProbeTest, AFakeAmdSmiRunForReal) {
  testing::ScopedTempDir dir;
  testing::WriteTool(dir.path(), "amd-smi",
                     "case \"$1\" in\n"
                     "  static) cat '" + testing::FixturePath("probes/amd/amd-smi-static-mi250x.json") + "' ;;\n"
                     "  metric) cat '" + testing::FixturePath("probes/amd/amd-smi-metric-mi250x-load.json") + "' ;;\n"
                     "  process) cat '" + testing::FixturePath("probes/amd/amd-smi-process-none.json") + "' ;;\n"
                     "  *) exit 2 ;;\n"
                     "esac\n");
  auto runner = NewPosixCommandRunner(dir.path().c_str());
  SimulatedClock clock;
  AmdProbe probe(runner.get(), &clock);
  v1::MachineConditions conditions;
  ASSERT_TRUE(probe.Probe(&conditions).ok());
  ASSERT_EQ(conditions.accelerators_size(), 2);
  EXPECT_TRUE(probe.notes().empty());
  auto reading = probe.Read();
  ASSERT_TRUE(reading.ok()) << reading.status();
  EXPECT_EQ(reading->devices.at(0).sm_clock_mhz, 1210.0);
  EXPECT_TRUE(reading->processes.empty());
  EXPECT_TRUE(reading->problems.empty());
}

}  // namespace
}  // namespace benchfleet::agent
