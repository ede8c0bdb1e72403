#include "common/conditions_fingerprint.h"

#include "gtest/gtest.h"

namespace benchfleet {
namespace {

v1::MachineConditions Sample() {
  v1::MachineConditions c;
  c.set_hostname("gpu-01");
  c.set_os_name("Debian GNU/Linux");
  c.set_os_version("12");
  c.set_kernel("6.1.0-18-amd64");
  c.set_architecture("x86_64");
  c.set_cpu_model("AMD EPYC 7763");
  c.set_logical_cores(128);
  c.set_memory_bytes(uint64_t{512} << 30);
  auto* a = c.add_accelerators();
  a->set_name("NVIDIA A100-SXM4-80GB");
  a->set_vendor("nvidia");
  a->set_driver("535.104.05");
  a->set_memory_bytes(uint64_t{80} << 30);
  (*c.mutable_labels())["accelerator"] = "nvidia";
  (*c.mutable_labels())["class"] = "a100";
  (*c.mutable_backend_versions())["llama-server"] = "b4123";
  c.set_agent_version("0.1.0");
  return c;
}

TEST(ConditionsFingerprintTest, IgnoresCaptureTimeAndFingerprint) {
  auto a = Sample();
  auto b = Sample();
  b.mutable_capture_time()->set_seconds(12345);
  b.set_fingerprint("something");
  EXPECT_EQ(ConditionsFingerprint(a), ConditionsFingerprint(b));
  EXPECT_EQ(ConditionsFingerprint(a).size(), 64u);
}

TEST(ConditionsFingerprintTest, ADriverChangeIsNewConditions) {
  auto a = Sample();
  auto b = Sample();
  b.mutable_accelerators(0)->set_driver("550.54.14");
  EXPECT_NE(ConditionsFingerprint(a), ConditionsFingerprint(b));
}

TEST(ConditionsFingerprintTest, ALabelOrBackendVersionChangeIsNewConditions) {
  auto a = Sample();
  auto b = Sample();
  (*b.mutable_labels())["class"] = "h100";
  EXPECT_NE(ConditionsFingerprint(a), ConditionsFingerprint(b));
  auto c = Sample();
  (*c.mutable_backend_versions())["llama-server"] = "b4124";
  EXPECT_NE(ConditionsFingerprint(a), ConditionsFingerprint(c));
}

TEST(ConditionsFingerprintTest, EscapingKeepsDistinctInputsDistinct) {
  v1::MachineConditions a, b;
  (*a.mutable_labels())["k=v"] = "w";
  (*b.mutable_labels())["k"] = "v=w";
  EXPECT_NE(CanonicalConditions(a), CanonicalConditions(b));
}

TEST(ConditionsFingerprintTest, CanonicalFormIsStable) {
  v1::MachineConditions c;
  c.set_hostname("h");
  (*c.mutable_labels())["b"] = "2";
  (*c.mutable_labels())["a"] = "1";
  EXPECT_EQ(CanonicalConditions(c),
            "benchfleet-conditions-v1\nhostname=h\nos_name=\nos_version=\nkernel=\narchitecture=\n"
            "cpu_model=\nlogical_cores=0\nmemory_bytes=0\nlabels.a=1\nlabels.b=2\nagent_version=\n");
}

TEST(ConditionsFingerprintTest, HostAttributesAreSortedLinesAfterAgentVersion) {
  v1::MachineConditions c;
  c.set_hostname("h");
  c.set_agent_version("0.1.0");
  (*c.mutable_host_attributes())["numa_nodes"] = "2";
  (*c.mutable_host_attributes())["cpufreq_governor"] = "performance";
  EXPECT_EQ(CanonicalConditions(c),
            "benchfleet-conditions-v1\nhostname=h\nos_name=\nos_version=\nkernel=\narchitecture=\n"
            "cpu_model=\nlogical_cores=0\nmemory_bytes=0\nagent_version=0.1.0\n"
            "host_attributes.cpufreq_governor=performance\nhost_attributes.numa_nodes=2\n");
}

TEST(ConditionsFingerprintTest, AGovernorChangeIsNewConditions) {
  auto a = Sample();
  (*a.mutable_host_attributes())["cpufreq_governor"] = "performance";
  auto b = Sample();
  (*b.mutable_host_attributes())["cpufreq_governor"] = "powersave";
  EXPECT_NE(ConditionsFingerprint(a), ConditionsFingerprint(b));
  EXPECT_NE(ConditionsFingerprint(a), ConditionsFingerprint(Sample()));
}

TEST(ConditionsFingerprintTest, ProbeNotesAreLeftOut) {
  auto a = Sample();
  auto* note = a.add_probe_notes();
  note->set_probe("nvidia-smi");
  note->set_reason("nvidia-smi: not found on PATH");
  EXPECT_EQ(CanonicalConditions(a), CanonicalConditions(Sample()));
  EXPECT_EQ(ConditionsFingerprint(a), ConditionsFingerprint(Sample()));
}

}  // namespace
}  // namespace benchfleet
