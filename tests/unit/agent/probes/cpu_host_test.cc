#include "agent/probes/cpu_host.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "agent/probes/linux_probe.h"
#include "agent/probes/process_tree.h"
#include "tests/unit/agent/probes/fake_tools.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using ::testing::HasSubstr;
using testing::Fixture;
using testing::Printed;
using testing::ScriptedRunner;

TEST(LscpuTest, FlatOutputOfOlderUtilLinux) {
  auto facts = ParseLscpuJson(Fixture("probes/cpu/lscpu-flat.json"));
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->architecture, "x86_64");
  EXPECT_EQ(facts->model_name, "Intel(R) Xeon(R) Platinum 8275CL CPU @ 3.00GHz");
  EXPECT_EQ(facts->cpus, 96u);
  EXPECT_EQ(facts->sockets, 2u);
  EXPECT_EQ(facts->cores_per_socket, 24u);
  EXPECT_EQ(facts->threads_per_core, 2u);
  EXPECT_EQ(facts->numa_nodes, 2u);
}

TEST(LscpuTest, NestedOutputOfTheH200Host) {
  auto facts = ParseLscpuJson(Fixture("probes/cpu/lscpu-nested.json"));
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->architecture, "x86_64");
  EXPECT_EQ(facts->model_name, "Intel(R) Xeon(R) Processor");
  EXPECT_EQ(facts->cpus, 16u);
  EXPECT_EQ(facts->sockets, 1u);
  EXPECT_EQ(facts->cores_per_socket, 16u);
  EXPECT_EQ(facts->threads_per_core, 1u);
  EXPECT_EQ(facts->numa_nodes, 1u);
}

TEST(LscpuTest, GarbageGivesAReason) {
  EXPECT_EQ(ParseLscpuJson("").status().message(), "lscpu -J: the output is not {\"lscpu\": [...]}");
  // Plain lscpu (the real capture) is not JSON.
  EXPECT_EQ(ParseLscpuJson(Fixture("nvidia-smi/lscpu.txt")).status().message(),
            "lscpu -J: the output is not {\"lscpu\": [...]}");
  const std::string full = Fixture("probes/cpu/lscpu-nested.json");
  EXPECT_EQ(ParseLscpuJson(full.substr(0, 200)).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseLscpuJson(R"({"lscpu": [{"field": "Flags:", "data": "fpu"}]})").status().message(),
            "lscpu -J: neither Architecture nor CPU(s) in the output");
  auto odd = ParseLscpuJson(R"({"lscpu": [{"field": "CPU(s):", "data": "many"}, {"field": 1, "data": 2}, 3,
                                          {"field": "Architecture:", "data": "aarch64"}]})");
  ASSERT_TRUE(odd.ok()) << odd.status();
  EXPECT_EQ(odd->cpus, std::nullopt);
  EXPECT_EQ(odd->architecture, "aarch64");
}

TEST(LoadAvgTest, ParsesAndRefusesGarbage) {
  auto load = ParseLoadAvg(Fixture("probes/cpu/loadavg.txt"));
  ASSERT_TRUE(load.ok()) << load.status();
  EXPECT_EQ(load->one_minute, 0.52);
  EXPECT_EQ(load->runnable, 2u);
  EXPECT_EQ(load->total, 1234u);
  EXPECT_EQ(ParseLoadAvg("").status().message(), "/proc/loadavg: not 'load1 load5 load15 runnable/total last_pid': ''");
  EXPECT_EQ(ParseLoadAvg("0.52 0.58 0.59 2-1234 5678").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseLoadAvg("0.52 0.58").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CpuListTest, Counts) {
  EXPECT_EQ(CountCpuList("0-15,32-47\n"), 32u);
  EXPECT_EQ(CountCpuList("0"), 1u);
  EXPECT_EQ(CountCpuList("0-1,3"), 3u);
  EXPECT_EQ(CountCpuList(""), std::nullopt);
  EXPECT_EQ(CountCpuList("5-2"), std::nullopt);
  EXPECT_EQ(CountCpuList("a-b"), std::nullopt);
}

TEST(CpuHostProbeTest, ReadsItsFilesAndTheTool) {
  testing::ScopedTempDir root;
  std::filesystem::create_directories(root.path() + "/sys/devices/system/cpu/cpu0/cpufreq");
  std::filesystem::create_directories(root.path() + "/sys/devices/system/node");
  std::ofstream(root.path() + "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") << "performance\n";
  std::ofstream(root.path() + "/sys/devices/system/node/online") << "0-1\n";
  ScriptedRunner runner;
  runner.Answer("lscpu -J", Printed(Fixture("probes/cpu/lscpu-flat.json")));
  CpuHostFacts facts = ProbeCpuHost(Env::Default(), &runner, root.path());
  EXPECT_EQ(facts.governor, "performance");
  EXPECT_EQ(facts.numa_nodes, 2u);
  EXPECT_EQ(facts.lscpu.cpus, 96u);
  EXPECT_TRUE(facts.notes.empty());
}

TEST(CpuHostProbeTest, TheLinuxProbeStoresTheHostAttributesAndItsNotes) {
  testing::ScopedTempDir root;
  std::filesystem::create_directories(root.path() + "/sys/devices/system/cpu/cpu0/cpufreq");
  std::filesystem::create_directories(root.path() + "/proc");
  std::ofstream(root.path() + "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") << "performance\n";
  std::ofstream(root.path() + "/proc/cpuinfo") << "processor\t: 0\n";  // no model: lscpu names it
  ScriptedRunner runner;
  runner.Answer("lscpu -J", Printed(Fixture("probes/cpu/lscpu-flat.json")));
  LinuxProbe probe(Env::Default(), root.path(), &runner);
  v1::MachineConditions conditions;
  ASSERT_TRUE(probe.Probe(&conditions).ok());
  EXPECT_EQ(conditions.cpu_model(), "Intel(R) Xeon(R) Platinum 8275CL CPU @ 3.00GHz");
  // No /sys/devices/system/node under the root: lscpu's NUMA count, and no note for it.
  const std::map<std::string, std::string> expected = {{"cpufreq_governor", "performance"},
                                                       {"numa_nodes", "2"},
                                                       {"sockets", "2"},
                                                       {"cores_per_socket", "24"},
                                                       {"threads_per_core", "2"}};
  const std::map<std::string, std::string> stored(conditions.host_attributes().begin(),
                                                   conditions.host_attributes().end());
  EXPECT_EQ(stored, expected);
  EXPECT_TRUE(probe.notes().empty());
  EXPECT_EQ(runner.calls, (std::vector<std::string>{"lscpu -J"}));

  // Without the tool: no attribute from lscpu, and the notes say why.
  ScriptedRunner none;
  LinuxProbe bare(Env::Default(), root.path(), &none);
  v1::MachineConditions without;
  ASSERT_TRUE(bare.Probe(&without).ok());
  EXPECT_EQ(without.host_attributes_size(), 1);
  EXPECT_EQ(without.host_attributes().at("cpufreq_governor"), "performance");
  ASSERT_EQ(bare.notes().size(), 2u);
  EXPECT_EQ(bare.notes()[0].probe, "cpu");
  EXPECT_EQ(bare.notes()[0].reason, "lscpu: not found on PATH");
  EXPECT_THAT(bare.notes()[1].reason, HasSubstr("no NUMA nodes: "));
}

TEST(CpuHostProbeTest, WhatIsMissingIsANote) {
  testing::ScopedTempDir root;
  ScriptedRunner runner;
  runner.Answer("lscpu -J", Printed("lscpu: unrecognized option '-J'\n", 1));
  CpuHostFacts facts = ProbeCpuHost(Env::Default(), &runner, root.path());
  EXPECT_EQ(facts.governor, "");
  EXPECT_EQ(facts.numa_nodes, std::nullopt);
  ASSERT_EQ(facts.notes.size(), 3u);
  EXPECT_EQ(facts.notes[0].reason, "lscpu -J exited with code 1: lscpu: unrecognized option '-J'");
  EXPECT_THAT(facts.notes[1].reason, HasSubstr("no cpufreq governor: "));
  EXPECT_THAT(facts.notes[2].reason, HasSubstr("no NUMA nodes: "));
}

TEST(ProcessTreeTest, ParentOfAStatLine) {
  EXPECT_EQ(ParseProcStatParent(Fixture("probes/cpu/proc-pid-stat.txt")), 4242);
  EXPECT_EQ(ParseProcStatParent(""), std::nullopt);
  EXPECT_EQ(ParseProcStatParent("12 (x) S"), std::nullopt);
  EXPECT_EQ(ParseProcStatParent("12 (x) S abc"), std::nullopt);
}

TEST(ProcessTreeTest, WalksAFakeProcTree) {
  testing::ScopedTempDir root;
  for (auto [pid, parent] : {std::pair{100, 1}, {200, 100}, {300, 200}, {400, 1}}) {
    std::filesystem::create_directories(root.path() + "/proc/" + std::to_string(pid));
    std::ofstream(root.path() + "/proc/" + std::to_string(pid) + "/stat")
        << pid << " (p " << pid << ") S " << parent << " 0 0\n";
  }
  EXPECT_TRUE(IsInProcessTree(Env::Default(), 300, 100, root.path()));
  EXPECT_TRUE(IsInProcessTree(Env::Default(), 100, 100, root.path()));
  EXPECT_FALSE(IsInProcessTree(Env::Default(), 400, 100, root.path()));
  EXPECT_FALSE(IsInProcessTree(Env::Default(), 999, 100, root.path()));  // not there
}

TEST(ProcessTreeTest, ThisProcessIsOurs) {
  auto own = OwnProcessTree(Env::Default());
  EXPECT_TRUE(own(::getpid()));
  EXPECT_FALSE(own(1));
}

}  // namespace
}  // namespace benchfleet::agent

namespace benchfleet::agent {
namespace {

TEST(LinuxProbeLscpuTest, TheCpuModelComesFromLscpuWhenCpuinfoNamesNone) {
  testing::ScopedTempDir root;
  std::filesystem::create_directories(root.path() + "/proc");
  std::ofstream(root.path() + "/proc/cpuinfo") << "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n";
  ScriptedRunner runner;
  runner.Answer("lscpu -J", Printed(R"({"lscpu": [{"field": "Architecture:", "data": "aarch64"},
                                                   {"field": "Model name:", "data": "Neoverse-N1"}]})"));
  LinuxProbe probe(Env::Default(), root.path(), &runner);
  v1::MachineConditions conditions;
  ASSERT_TRUE(probe.Probe(&conditions).ok());
  EXPECT_EQ(conditions.cpu_model(), "Neoverse-N1");
  // Without a runner lscpu is not asked; with a model in cpuinfo, it is (for host_attributes)
  // but the model stays cpuinfo's.
  LinuxProbe without(Env::Default(), root.path());
  v1::MachineConditions bare;
  ASSERT_TRUE(without.Probe(&bare).ok());
  EXPECT_EQ(bare.cpu_model(), "");
  std::ofstream(root.path() + "/proc/cpuinfo") << "model name\t: AMD EPYC 7763 64-Core Processor\n";
  runner.calls.clear();
  v1::MachineConditions x86;
  ASSERT_TRUE(probe.Probe(&x86).ok());
  EXPECT_EQ(x86.cpu_model(), "AMD EPYC 7763 64-Core Processor");
  EXPECT_EQ(runner.calls, (std::vector<std::string>{"lscpu -J"}));
}

}  // namespace
}  // namespace benchfleet::agent
