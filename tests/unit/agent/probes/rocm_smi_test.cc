#include "agent/probes/rocm_smi.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/agent/probes/fake_tools.h"

namespace benchfleet::agent {
namespace {

using ::testing::HasSubstr;
using testing::Fixture;
using testing::Printed;
using testing::ScriptedRunner;

TEST(RocmSmiParseTest, TwoGcdsOfAnIdleMi250x) {
  auto cards = ParseRocmSmiJson(Fixture("probes/amd/rocm-smi-mi250x.json"));
  ASSERT_TRUE(cards.ok()) << cards.status();
  ASSERT_EQ(cards->size(), 2u);
  const RocmCard& card = (*cards)[0];
  EXPECT_EQ(card.index, "0");
  EXPECT_EQ(card.name, "AMD INSTINCT MI250X");
  EXPECT_EQ(card.driver, "6.3.6");  // from "system"
  EXPECT_EQ(card.vbios, "113-D65209-073");
  EXPECT_EQ(card.vram_total_bytes, 68702699520u);
  EXPECT_EQ(card.sample.memory_used_bytes, 11071488u);
  EXPECT_EQ(card.sample.power_watts, 92.0);
  EXPECT_EQ(card.sample.temperature_celsius, 41.0);  // junction before edge
  EXPECT_EQ(card.sample.sm_clock_mhz, 800.0);
  EXPECT_EQ(card.sample.utilization_percent, 0.0);
  EXPECT_EQ(card.sample.max_sm_clock_mhz, std::nullopt);  // no --showclkfrq in this output
  EXPECT_EQ(card.sample.throttle_reasons, std::nullopt);
  EXPECT_EQ((*cards)[1].sample.power_watts, std::nullopt);  // "N/A"
}

TEST(RocmSmiParseTest, MaxClockFromTheDpmLevels) {
  auto cards = ParseRocmSmiJson(Fixture("probes/amd/rocm-smi-mi250x-load.json"));
  ASSERT_TRUE(cards.ok()) << cards.status();
  ASSERT_EQ(cards->size(), 1u);
  EXPECT_EQ((*cards)[0].sample.sm_clock_mhz, 1210.0);
  EXPECT_EQ((*cards)[0].sample.max_sm_clock_mhz, 1700.0);
  EXPECT_EQ((*cards)[0].sample.utilization_percent, 100.0);
  auto ranged = ParseRocmSmiJson(R"({"card3": {"Valid sclk range": "500Mhz - 1700Mhz", "Card series": "X"}})");
  ASSERT_TRUE(ranged.ok()) << ranged.status();
  EXPECT_EQ(ranged->at(0).index, "3");
  EXPECT_EQ(ranged->at(0).sample.max_sm_clock_mhz, 1700.0);
}

TEST(RocmSmiParseTest, Pids) {
  auto pids = ParseRocmSmiPids(Fixture("probes/amd/rocm-smi-showpids.json"));
  ASSERT_TRUE(pids.ok()) << pids.status();
  ASSERT_EQ(pids->size(), 2u);
  EXPECT_EQ((*pids)[0].pid, 2183);
  EXPECT_EQ((*pids)[0].name, "python3");
  EXPECT_EQ((*pids)[0].used_bytes, 52601995264u);
  auto none = ParseRocmSmiPids(Fixture("probes/amd/rocm-smi-showpids-none.json"));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
}

TEST(RocmSmiParseTest, GarbageGivesAReasonNeverACrash) {
  EXPECT_EQ(ParseRocmSmiJson("").status().message(), "rocm-smi --json: the output is not a JSON object");
  const std::string full = Fixture("probes/amd/rocm-smi-mi250x.json");
  EXPECT_EQ(ParseRocmSmiJson(full.substr(0, full.size() / 2)).status().message(),
            "rocm-smi --json: the output is not a JSON object");
  EXPECT_EQ(ParseRocmSmiJson("[1, 2]").status().message(), "rocm-smi --json: the output is not a JSON object");
  EXPECT_EQ(ParseRocmSmiJson(R"({"system": {"Driver version": "6.3.6"}})").status().message(),
            "rocm-smi --json: no card in the output");
  EXPECT_EQ(ParseRocmSmiJson(R"({"cardX": {}, "card0": 5})").status().message(),
            "rocm-smi --json: no card in the output");
  // Wrong types inside a card leave the figures empty.
  auto odd = ParseRocmSmiJson(R"j({"card0": {"GPU use (%)": [1], "VRAM Total Memory (B)": "lots", "Card series": 7}})j");
  ASSERT_TRUE(odd.ok()) << odd.status();
  EXPECT_EQ(odd->at(0).sample.utilization_percent, std::nullopt);
  EXPECT_EQ(odd->at(0).vram_total_bytes, std::nullopt);
  EXPECT_EQ(ParseRocmSmiPids(R"({"system": {"PIDabc": "x, 1, 2, 0, unknown"}})").status().message(),
            "rocm-smi --showpids: not a pid: 'PIDabc'");
  EXPECT_EQ(ParseRocmSmiPids("WARNING: No AMD GPUs specified").status().code(), absl::StatusCode::kInvalidArgument);
  // Found by the rocm_smi fuzz target: a VRAM figure beyond uint64_t was converted (undefined
  // behaviour). It is no figure.
  auto huge = ParseRocmSmiPids(R"({"system": {"PID7": "x, 1, 5.3e76, 0, unknown"}})");
  ASSERT_TRUE(huge.ok()) << huge.status();
  ASSERT_EQ(huge->size(), 1u);
  EXPECT_EQ(huge->at(0).pid, 7);
  EXPECT_EQ(huge->at(0).used_bytes, std::nullopt);
}

TEST(AmdProbeTest, ConditionsAndReadingsThroughTheRunner) {
  ScriptedRunner runner;
  runner.Answer("rocm-smi --showproductname --showdriverversion --showvbios --showmeminfo vram --json",
                Printed(Fixture("probes/amd/rocm-smi-mi250x.json")));
  runner.Answer("rocm-smi --showmeminfo vram --showpower --showtemp --showclocks --showuse --showclkfrq --json",
                Printed(Fixture("probes/amd/rocm-smi-mi250x-load.json")));
  SimulatedClock clock;
  AmdProbe probe(&runner, &clock);
  v1::MachineConditions conditions;
  ASSERT_TRUE(probe.Probe(&conditions).ok());
  ASSERT_EQ(conditions.accelerators_size(), 2);
  EXPECT_EQ(conditions.accelerators(1).name(), "AMD INSTINCT MI250X");
  EXPECT_EQ(conditions.accelerators(1).vendor(), "amd");
  EXPECT_EQ(conditions.accelerators(1).index(), "1");
  EXPECT_EQ(conditions.accelerators(1).memory_bytes(), 68702699520u);
  EXPECT_TRUE(probe.notes().empty());

  auto reading = probe.Read();
  ASSERT_TRUE(reading.ok()) << reading.status();
  ASSERT_EQ(reading->devices.size(), 1u);
  EXPECT_EQ(reading->devices[0].sm_clock_mhz, 1210.0);
  EXPECT_TRUE(reading->processes.empty());
  ASSERT_EQ(reading->problems.size(), 1u);  // --showpids is not scripted
  EXPECT_EQ(reading->problems[0], "rocm-smi: not found on PATH");

  ScriptedRunner missing;
  AmdProbe absent(&missing, &clock);
  ASSERT_TRUE(absent.Probe(&conditions).ok());
  EXPECT_EQ(conditions.accelerators_size(), 2);
  EXPECT_EQ(absent.notes().at(0).reason, "rocm-smi: not found on PATH; amd-smi: not found on PATH");
  EXPECT_EQ(absent.Read().status().message(), "rocm-smi: not found on PATH; amd-smi: not found on PATH");
}

}  // namespace
}  // namespace benchfleet::agent
