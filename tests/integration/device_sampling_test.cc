// `benchfleet-agent run` with device sampling, end to end: a fake nvidia-smi (a shell script
// answering with the captures of tests/fixtures/probes/nvidia/) first on the agent's PATH, a
// llama-server series against the simulator written to a series folder (no coordinator). With
// --device-sampling auto the records carry the sampler's DEVICE_USED memory and device metrics;
// with off they carry none; with with_cpu_load and no accelerator tool answering, the host's CPU
// load. No PostgreSQL.
#include <signal.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "benchfleet/v1/conditions.pb.h"
#include "benchfleet/v1/record.pb.h"
#include "common/env.h"
#include "common/proto_json.h"
#include "common/series_folder.h"
#include "gtest/gtest.h"
#include "tests/integration/fleet.h"

namespace benchfleet::testing {
namespace {

constexpr char kNvidiaSmiSource[] = "nvidia-smi --query-gpu=memory.used";
// One GPU busy with our run: 20480 MiB used, throttle reasons none.
constexpr char kBusySample[] = "0, 35, 20480, 310.25, 52, 1980, 1980, 0x0000000000000000";
constexpr uint64_t kBusyBytes = uint64_t{20480} << 20;

std::string Fixture(const std::string& relative) {
  return ReadAll(std::string(BENCHFLEET_SOURCE_DIR) + "/tests/fixtures/" + relative);
}

class DeviceSamplingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = MakeTempDir("device-sampling");
    const std::string bin = work_ + "/bin";
    ::mkdir(bin.c_str(), 0755);
    // The device's facts from the real H200 capture; samples as above; no compute process.
    std::string info = Fixture("probes/nvidia/query-gpu-info.csv");
    ASSERT_FALSE(info.empty());
    if (info.back() != '\n') info += '\n';
    std::ofstream(bin + "/nvidia-smi") << "#!/bin/sh\n"
                                       << "case \"$1\" in\n"
                                       << "  --query-gpu=index,name,*) cat <<'EOF'\n"
                                       << info << "EOF\n  ;;\n"
                                       << "  --query-gpu=*) echo '" << kBusySample << "' ;;\n"
                                       << "  --query-compute-apps=*) ;;\n"
                                       << "  *) echo \"fake nvidia-smi: $*\" >&2; exit 2 ;;\n"
                                       << "esac\n";
    ::chmod((bin + "/nvidia-smi").c_str(), 0755);
    path_ = absl::StrCat(bin, ":", std::getenv("PATH") != nullptr ? std::getenv("PATH") : "/usr/bin:/bin");

    model_ = work_ + "/models/qwen2.5-3b-instruct-q4_k_m.gguf";
    ::mkdir((work_ + "/models").c_str(), 0755);
    std::ofstream(model_) << "GGUF simulated model file";
    config_ = work_ + "/agent.yaml";
    std::ofstream(config_) << "state_dir: " << work_ << "/state\n"
                           << "allow:\n  backends: [llama-server]\n"
                           << "  executables: [" << BinaryPath("llama-server-sim") << "]\n"
                           << "  model_dirs: [" << work_ << "/models]\n";
    spec_ = work_ + "/spec.yaml";
    std::ofstream(spec_) << "series: sampled\n"
                         << "task: llama-qwen2.5-3b-q4km\n"
                         << "backend: llama-server\n"
                         << "llama-server:\n"
                         << "  binary: " << BinaryPath("llama-server-sim") << "\n"
                         << "  model: " << model_ << "\n"
                         << "  args: [-c, '256', --sim-load-ms, '50']\n"
                         << "  modes:\n    gpu: [-ngl, '99']\n"
                         << "  prompt: Explain in one sentence what a GPU is.\n"
                         << "  n_predict: 8\n"
                         << "  seed: 42\n"
                         << "  health_timeout: 10s\n"
                         << "  request_timeout: 5s\n"
                         << "  stop_grace: 2s\n"
                         << "runs:\n  cold: 1\n  warm: 1\n";
  }

  // Runs the series with --device-sampling mode into work_/series-MODE; returns the exit code.
  int Run(const std::string& mode) {
    Subprocess agent({BinaryPath("benchfleet-agent"), "run", spec_, "--config", config_, "--out",
                      Folder(mode), "--device-sampling", mode},
                     {{"PATH", path_}}, work_ + "/run-" + mode + ".log");
    if (!PollUntil([&] { return !agent.running(); }, absl::Seconds(60))) agent.Signal(SIGKILL);
    return agent.Wait();
  }

  std::string Folder(const std::string& mode) const { return work_ + "/series-" + mode; }
  std::string Log(const std::string& mode) const { return ReadAll(work_ + "/run-" + mode + ".log"); }

  std::vector<v1::RunRecord> Records(const std::string& mode) const {
    std::vector<v1::RunRecord> records;
    auto read = ReadRecords(Env::Default(), Folder(mode));
    EXPECT_TRUE(read.ok()) << read.status();
    if (read.ok()) {
      for (auto& sourced : *read) records.push_back(std::move(sourced.record));
    }
    return records;
  }

  v1::MachineConditions Conditions(const std::string& mode) const {
    v1::MachineConditions conditions;
    const std::string json = ReadAll(Folder(mode) + "/conditions.json");
    auto s = JsonToMessage(json, &conditions);
    EXPECT_TRUE(s.ok()) << s << "\n" << json;
    return conditions;
  }

  std::string work_;
  std::string path_;
  std::string model_;
  std::string config_;
  std::string spec_;
};

const v1::Metric* FindMetric(const v1::RunRecord& record, const std::string& name) {
  for (const auto& m : record.metrics()) {
    if (m.name() == name) return &m;
  }
  return nullptr;
}

void ExpectAcceleratorsFromTheFakeTool(const v1::MachineConditions& conditions) {
  ASSERT_EQ(conditions.accelerators_size(), 1) << conditions.DebugString();
  EXPECT_EQ(conditions.accelerators(0).name(), "NVIDIA H200");
  EXPECT_EQ(conditions.accelerators(0).vendor(), "nvidia");
  EXPECT_EQ(conditions.accelerators(0).driver(), "580.159.04");
  EXPECT_EQ(conditions.accelerators(0).memory_bytes(), uint64_t{143771} << 20);
  for (const auto& note : conditions.probe_notes()) EXPECT_NE(note.probe(), "nvidia") << note.reason();
}

TEST_F(DeviceSamplingTest, AutoAddsTheFakeGpusMemoryAndMetricsToEveryRun) {
  ASSERT_EQ(Run("auto"), 0) << Log("auto");
  EXPECT_TRUE(absl::StrContains(Log("auto"), "device sampling: nvidia (nvidia-smi --query-gpu=memory.used)"))
      << Log("auto");
  ExpectAcceleratorsFromTheFakeTool(Conditions("auto"));
  const auto records = Records("auto");
  ASSERT_EQ(records.size(), 2u);
  for (const auto& record : records) {
    const v1::Metric* samples = FindMetric(record, "device_samples");
    ASSERT_NE(samples, nullptr) << record.DebugString();
    EXPECT_GE(samples->value(), 2);  // right before and right after the run, at least
    EXPECT_EQ(samples->unit(), "samples");
    int device_used = 0;
    for (const auto& figure : record.memory()) {
      if (figure.kind() != v1::MEMORY_KIND_DEVICE_USED) continue;
      ++device_used;
      EXPECT_EQ(figure.scope(), "nvidia:0");
      EXPECT_EQ(figure.bytes(), kBusyBytes);
      EXPECT_EQ(figure.source(), absl::StrCat(kNvidiaSmiSource, ", peak of ", samples->value(), " samples"));
    }
    EXPECT_EQ(device_used, 1) << record.DebugString();
    const v1::Metric* peak = FindMetric(record, "device_memory_used_bytes_peak");
    ASSERT_NE(peak, nullptr) << record.DebugString();
    EXPECT_EQ(peak->value(), static_cast<double>(kBusyBytes));
    EXPECT_EQ(peak->unit(), "bytes");
    const v1::Metric* power = FindMetric(record, "device_power_watts_mean");
    ASSERT_NE(power, nullptr) << record.DebugString();
    EXPECT_DOUBLE_EQ(power->value(), 310.25);
    for (const auto& flag : record.flags()) {
      EXPECT_NE(flag.code(), "THROTTLED") << flag.reason();
      EXPECT_NE(flag.code(), "CONTENDED") << flag.reason();
    }
  }
}

TEST_F(DeviceSamplingTest, OffAddsNothingButTheConditionsStillNameTheGpu) {
  ASSERT_EQ(Run("off"), 0) << Log("off");
  EXPECT_TRUE(absl::StrContains(Log("off"), "device sampling: off")) << Log("off");
  // Conditions are probed whatever the sampling: the fake nvidia-smi still names its GPU.
  ExpectAcceleratorsFromTheFakeTool(Conditions("off"));
  const auto records = Records("off");
  ASSERT_EQ(records.size(), 2u);
  for (const auto& record : records) {
    for (const auto& figure : record.memory()) {
      EXPECT_FALSE(absl::StartsWith(figure.source(), kNvidiaSmiSource)) << record.DebugString();
      EXPECT_NE(figure.scope(), "nvidia:0") << record.DebugString();
    }
    for (const auto& metric : record.metrics()) {
      EXPECT_FALSE(absl::StartsWith(metric.name(), "device_")) << metric.name();
    }
    for (const auto& flag : record.flags()) {
      EXPECT_NE(flag.code(), "THROTTLED") << flag.reason();
      EXPECT_NE(flag.code(), "CONTENDED") << flag.reason();
    }
  }
}

// with_cpu_load on a host where no accelerator tool answers (fakes of all three, failing, first on
// PATH so a real one on this machine is never reached): the host's CPU load is sampled instead.
TEST_F(DeviceSamplingTest, WithCpuLoadSamplesTheHostsCpusWhenNoAcceleratorToolAnswers) {
  const std::string bin = work_ + "/bin-failing";
  ::mkdir(bin.c_str(), 0755);
  for (const char* tool : {"nvidia-smi", "rocm-smi", "amd-smi"}) {
    std::ofstream(bin + "/" + tool) << "#!/bin/sh\necho \"" << tool << ": no device (fake)\" >&2\nexit 9\n";
    ::chmod((bin + "/" + tool).c_str(), 0755);
  }
  path_ = absl::StrCat(bin, ":", std::getenv("PATH") != nullptr ? std::getenv("PATH") : "/usr/bin:/bin");
  ASSERT_EQ(Run("with_cpu_load"), 0) << Log("with_cpu_load");
  EXPECT_TRUE(absl::StrContains(Log("with_cpu_load"), "device sampling: cpu (/proc/stat)")) << Log("with_cpu_load");
  EXPECT_EQ(Conditions("with_cpu_load").accelerators_size(), 0);
  const auto records = Records("with_cpu_load");
  ASSERT_EQ(records.size(), 2u);
  for (const auto& record : records) {
    const v1::Metric* samples = FindMetric(record, "device_samples");
    ASSERT_NE(samples, nullptr) << record.DebugString();
    EXPECT_GE(samples->value(), 2);
    // The first reading has no interval yet; every later one gives the CPUs' busy share.
    const v1::Metric* busy = FindMetric(record, "device_utilization_percent_mean");
    ASSERT_NE(busy, nullptr) << record.DebugString();
    EXPECT_EQ(busy->unit(), "%");
    EXPECT_GE(busy->value(), 0);
    EXPECT_LE(busy->value(), 100);
    for (const auto& figure : record.memory()) EXPECT_NE(figure.kind(), v1::MEMORY_KIND_DEVICE_USED);
    EXPECT_EQ(FindMetric(record, "device_energy_joules"), nullptr);  // no power figure: no energy at all
  }
}

}  // namespace
}  // namespace benchfleet::testing
