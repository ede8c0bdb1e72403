#include "agent/probes/conditions_probe.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "agent/probes/linux_probe.h"
#include "common/conditions_fingerprint.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using testing::ScopedTempDir;

TEST(ConditionsProbeTest, ThisMachineHasTheBasicFacts) {
  auto conditions = CaptureMachineConditions(Env::Default(), {{"class", "ci"}});
  ASSERT_TRUE(conditions.ok()) << conditions.status();
  EXPECT_FALSE(conditions->hostname().empty());
  EXPECT_FALSE(conditions->kernel().empty());
  EXPECT_FALSE(conditions->os_name().empty());
  EXPECT_FALSE(conditions->architecture().empty());
  EXPECT_GT(conditions->logical_cores(), 0u);
  EXPECT_GT(conditions->memory_bytes(), 0u);
  EXPECT_EQ(conditions->labels().at("class"), "ci");
  EXPECT_EQ(conditions->fingerprint(), ConditionsFingerprint(*conditions));
  EXPECT_EQ(conditions->fingerprint().size(), 64u);
}

// A probe with fixed facts, so the capture is deterministic.
class FixedProbe : public ConditionsProbe {
 public:
  absl::Status Probe(v1::MachineConditions* c) override {
    c->set_hostname("gpu-01");
    c->set_kernel("6.1.0-18-amd64");
    c->set_logical_cores(32);
    return absl::OkStatus();
  }
};

TEST(ConditionsProbeTest, FingerprintChangesWithALabelButNotWithTime) {
  FixedProbe probe;
  SimulatedClock clock;
  auto a = CaptureConditions(probe, {}, {{"class", "a100"}}, clock);
  clock.Advance(absl::Hours(5));
  auto b = CaptureConditions(probe, {}, {{"class", "a100"}}, clock);
  auto c = CaptureConditions(probe, {}, {{"class", "h100"}}, clock);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->capture_time().seconds(), 1767225600);
  EXPECT_EQ(b->capture_time().seconds(), 1767225600 + 5 * 3600);
  EXPECT_EQ(a->fingerprint(), b->fingerprint());
  EXPECT_NE(a->fingerprint(), c->fingerprint());
  EXPECT_EQ(a->agent_version(), "0.1.0");
}

TEST(LinuxProbeTest, ReadsItsFilesUnderTheRoot) {
  ScopedTempDir root;
  std::filesystem::create_directories(root.path() + "/etc");
  std::filesystem::create_directories(root.path() + "/proc");
  std::ofstream(root.path() + "/etc/os-release") << "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"
                                                    "NAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nID=debian\n";
  std::ofstream(root.path() + "/proc/cpuinfo") << "processor\t: 0\nvendor_id\t: AuthenticAMD\n"
                                                  "model name\t: AMD EPYC 7763 64-Core Processor\n";
  std::ofstream(root.path() + "/proc/meminfo") << "MemTotal:       16384256 kB\nMemFree:  1 kB\n";
  LinuxProbe probe(Env::Default(), root.path());
  v1::MachineConditions conditions;
  ASSERT_TRUE(probe.Probe(&conditions).ok());
  EXPECT_EQ(conditions.os_name(), "Debian GNU/Linux");
  EXPECT_EQ(conditions.os_version(), "12");
  EXPECT_EQ(conditions.cpu_model(), "AMD EPYC 7763 64-Core Processor");
  EXPECT_EQ(conditions.memory_bytes(), 16384256ull * 1024);
}

TEST(LinuxProbeTest, ParsersHandleOtherShapes) {
  EXPECT_EQ(ParseOsRelease("NAME=Ubuntu\nVERSION_ID='22.04'\n").version, "22.04");
  EXPECT_EQ(ParseOsRelease("# comment\nNAME=\"Fedora \\\"Linux\\\"\"\n").name, "Fedora \"Linux\"");
  EXPECT_EQ(ParseCpuModel("processor : 0\nBogoMIPS : 50\nModel : Raspberry Pi 4 Model B Rev 1.4\n"),
            "Raspberry Pi 4 Model B Rev 1.4");
  EXPECT_EQ(ParseCpuModel("processor : 0\n"), "");
  EXPECT_EQ(ParseMemTotalBytes("MemFree: 5 kB\n"), 0u);
}

}  // namespace
}  // namespace benchfleet::agent
