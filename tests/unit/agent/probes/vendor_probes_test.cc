#include "agent/probes/vendor_probes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/probes/nvidia_smi.h"
#include "common/conditions_fingerprint.h"
#include "tests/unit/agent/probes/fake_tools.h"

namespace benchfleet::agent {
namespace {

using testing::Fixture;
using testing::Printed;
using testing::ScriptedRunner;

const std::string kInfo = std::string("nvidia-smi --query-gpu=") + kNvidiaInfoFields + " --format=csv,noheader,nounits";
const std::string kSample =
    std::string("nvidia-smi --query-gpu=") + kNvidiaSampleFields + " --format=csv,noheader,nounits";

class HostOnly : public ConditionsProbe {
 public:
  absl::Status Probe(v1::MachineConditions* c) override {
    c->set_hostname("gpu-01");
    return absl::OkStatus();
  }
};

TEST(VendorProbesTest, TheH200GoesIntoTheConditionsAndItsFingerprint) {
  ScriptedRunner runner;
  runner.Answer(kInfo, Printed(Fixture("probes/nvidia/query-gpu-info.csv")));
  SimulatedClock clock;
  HostOnly host;
  std::vector<ProbeNote> notes;
  auto with_gpu = CaptureConditions(host, NewVendorProbes(&runner, &clock), {}, clock, &notes);
  ASSERT_TRUE(with_gpu.ok()) << with_gpu.status();
  ASSERT_EQ(with_gpu->accelerators_size(), 1);
  EXPECT_EQ(with_gpu->accelerators(0).name(), "NVIDIA H200");
  EXPECT_EQ(with_gpu->fingerprint(), ConditionsFingerprint(*with_gpu));
  // The AMD probe found no rocm-smi: a note, and the capture goes on.
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].probe, "amd");
  EXPECT_EQ(notes[0].reason, "rocm-smi: not found on PATH; amd-smi: not found on PATH");

  ScriptedRunner nothing;
  std::vector<ProbeNote> none_notes;
  auto without = CaptureConditions(host, NewVendorProbes(&nothing, &clock), {}, clock, &none_notes);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(without->accelerators_size(), 0);
  EXPECT_NE(without->fingerprint(), with_gpu->fingerprint());
  ASSERT_EQ(none_notes.size(), 2u);
  EXPECT_EQ(none_notes[0].reason, "nvidia-smi: not found on PATH");
}

TEST(VendorProbesTest, TheNotesAreStoredInTheConditionsButNotFingerprinted) {
  ScriptedRunner runner;
  runner.Answer(kInfo, Printed(Fixture("probes/nvidia/query-gpu-info.csv")));
  SimulatedClock clock;
  HostOnly host;
  auto conditions = CaptureConditions(host, NewVendorProbes(&runner, &clock), {}, clock);
  ASSERT_TRUE(conditions.ok()) << conditions.status();
  ASSERT_EQ(conditions->probe_notes_size(), 1);
  EXPECT_EQ(conditions->probe_notes(0).probe(), "amd");
  EXPECT_EQ(conditions->probe_notes(0).reason(), "rocm-smi: not found on PATH; amd-smi: not found on PATH");
  v1::MachineConditions without_notes = *conditions;
  without_notes.clear_probe_notes();
  EXPECT_EQ(conditions->fingerprint(), ConditionsFingerprint(without_notes));
}

TEST(VendorProbesTest, FindsTheMonitorWhoseToolAnswers) {
  ScriptedRunner nvidia;
  nvidia.Answer(kSample, Printed(Fixture("probes/nvidia/query-gpu-sample-idle.csv")));
  auto found = FindDeviceMonitor(&nvidia, Env::Default());
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ((*found)->vendor(), "nvidia");

  ScriptedRunner amd;
  amd.Answer("rocm-smi --showmeminfo vram --showpower --showtemp --showclocks --showuse --showclkfrq --json",
             Printed(Fixture("probes/amd/rocm-smi-mi250x-load.json")));
  found = FindDeviceMonitor(&amd, Env::Default());
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ((*found)->vendor(), "amd");

  // No GPU tool: the host's CPU load (this test machine has /proc).
  ScriptedRunner none;
  found = FindDeviceMonitor(&none, Env::Default());
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ((*found)->vendor(), "cpu");

  // Not even /proc.
  class NoProc : public EnvWrapper {
   public:
    NoProc() : EnvWrapper(Env::Default()) {}
    absl::StatusOr<std::string> ReadFile(const std::string& path) override {
      return absl::NotFoundError(path + ": no such file");
    }
  } no_proc;
  found = FindDeviceMonitor(&none, &no_proc);
  EXPECT_EQ(found.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(found.status().message(),
            "no device to sample: nvidia: nvidia-smi: not found on PATH; amd: rocm-smi: not found on PATH; amd-smi: "
            "not found on PATH; cpu: "
            "/proc/stat: no such file");
}

TEST(VendorProbesTest, WithoutCpuLoadOnlyTheAcceleratorsToolsAreMonitors) {
  ScriptedRunner nvidia;
  nvidia.Answer(kSample, Printed(Fixture("probes/nvidia/query-gpu-sample-idle.csv")));
  auto found = FindDeviceMonitor(&nvidia, Env::Default(), /*with_cpu_load=*/false);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ((*found)->vendor(), "nvidia");

  // This machine has /proc, but the CPU load is not asked for: nothing to sample.
  ScriptedRunner none;
  found = FindDeviceMonitor(&none, Env::Default(), /*with_cpu_load=*/false);
  EXPECT_EQ(found.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(found.status().message(),
            "no device to sample: nvidia: nvidia-smi: not found on PATH; amd: rocm-smi: not found on PATH; amd-smi: "
            "not found on PATH");
}

}  // namespace
}  // namespace benchfleet::agent
