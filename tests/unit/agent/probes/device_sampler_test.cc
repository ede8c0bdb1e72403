#include "agent/probes/device_sampler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "agent/probes/nvidia_smi.h"
#include "common/proto_time.h"
#include "tests/unit/agent/probes/fake_tools.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using ::testing::HasSubstr;

absl::Duration S(double seconds) { return absl::Milliseconds(seconds * 1000); }

DeviceReading Reading(double at, double watts, std::optional<uint64_t> memory = std::nullopt) {
  DeviceReading reading;
  reading.at = S(at);
  DeviceSample& s = reading.devices.emplace_back();
  s.device = "0";
  s.power_watts = watts;
  s.memory_used_bytes = memory;
  return reading;
}

DeviceProcess Proc(int64_t pid, std::string name, std::optional<uint64_t> bytes = std::nullopt) {
  DeviceProcess process;
  process.pid = pid;
  process.name = std::move(name);
  process.used_bytes = bytes;
  return process;
}

SamplerOptions Sampling(DeviceMonitor* monitor, Clock* clock, absl::Duration period) {
  SamplerOptions options;
  options.monitor = monitor;
  options.clock = clock;
  options.period = period;
  return options;
}

const v1::Metric* FindMetric(const v1::RunRecord& record, const std::string& name) {
  for (const v1::Metric& m : record.metrics()) {
    if (m.name() == name) return &m;
  }
  return nullptr;
}

TEST(IntegrateEnergyTest, TrapezoidClippedToTheWindow) {
  // 100 W at 0 s, 200 W at 2 s, 200 W at 4 s: over [1 s, 3 s] the power is 150..200 then 200.
  std::vector<std::pair<absl::Duration, double>> power = {{S(0), 100}, {S(2), 200}, {S(4), 200}};
  // [1,2]: (150 + 200) / 2 = 175 J; [2,3]: 200 J.
  EXPECT_DOUBLE_EQ(IntegrateEnergy(power, {S(1), S(3)}).value(), 375.0);
  EXPECT_DOUBLE_EQ(IntegrateEnergy(power, {S(0), S(4)}).value(), 300.0 + 400.0);
  EXPECT_DOUBLE_EQ(IntegrateEnergy(power, {S(0.5), S(0.5) + S(0.5)}).value(), 0.5 * (125 + 150) / 2);
}

TEST(IntegrateEnergyTest, NoFigureWithoutCoverage) {
  std::vector<std::pair<absl::Duration, double>> power = {{S(1), 100}, {S(2), 100}};
  EXPECT_EQ(IntegrateEnergy(power, {S(0.5), S(2)}), std::nullopt);  // starts before the first
  EXPECT_EQ(IntegrateEnergy(power, {S(1), S(2.5)}), std::nullopt);   // ends after the last
  EXPECT_EQ(IntegrateEnergy({{S(1), 100}}, {S(1), S(1)}), std::nullopt);
  EXPECT_EQ(IntegrateEnergy(power, {S(2), S(1)}), std::nullopt);
  EXPECT_EQ(IntegrateEnergy({}, {S(1), S(2)}), std::nullopt);
}

TEST(AnnotateRunTest, PeakMeanEnergyAndJoulesPerToken) {
  std::vector<DeviceReading> readings = {Reading(0, 100, 1000), Reading(1, 300, 5000), Reading(2, 200, 3000)};
  readings[1].devices[0].utilization_percent = 90;
  readings[1].devices[0].temperature_celsius = 70;
  readings[1].devices[0].sm_clock_mhz = 1980;
  readings[1].devices[0].throttle_reasons = 0x1;  // idle: not throttling
  v1::RunRecord record;
  v1::Metric* tokens = record.add_metrics();
  tokens->set_name("tokens_predicted");
  tokens->set_value(50);
  AnnotateOptions options;
  options.output_token_metrics = {"tokens_predicted"};  // the backend's declaration says which
  options.memory_source = "nvidia-smi --query-gpu=memory.used";
  options.vendor = "nvidia";
  AnnotateRun(readings, {S(0.5), S(1.5)}, options, &record);

  ASSERT_EQ(record.memory_size(), 1);
  EXPECT_EQ(record.memory(0).kind(), v1::MEMORY_KIND_DEVICE_USED);
  EXPECT_EQ(record.memory(0).scope(), "nvidia:0");
  EXPECT_EQ(record.memory(0).bytes(), 5000u);
  EXPECT_EQ(record.memory(0).source(), "nvidia-smi --query-gpu=memory.used, peak of 3 samples");
  EXPECT_DOUBLE_EQ(FindMetric(record, "device_memory_used_bytes_mean")->value(), 3000);
  EXPECT_DOUBLE_EQ(FindMetric(record, "device_power_watts_peak")->value(), 300);
  EXPECT_DOUBLE_EQ(FindMetric(record, "device_power_watts_mean")->value(), 200);
  EXPECT_EQ(FindMetric(record, "device_power_watts_mean")->unit(), "W");
  EXPECT_DOUBLE_EQ(FindMetric(record, "device_utilization_percent_peak")->value(), 90);
  EXPECT_DOUBLE_EQ(FindMetric(record, "device_temperature_celsius_peak")->value(), 70);
  EXPECT_DOUBLE_EQ(FindMetric(record, "device_sm_clock_mhz_mean")->value(), 1980);
  EXPECT_DOUBLE_EQ(FindMetric(record, "device_samples")->value(), 3);
  // [0.5, 1]: (200 + 300) / 2 * 0.5 = 125; [1, 1.5]: (300 + 250) / 2 * 0.5 = 137.5.
  EXPECT_DOUBLE_EQ(FindMetric(record, kEnergyMetric)->value(), 262.5);
  EXPECT_EQ(FindMetric(record, kEnergyMetric)->unit(), "J");
  EXPECT_DOUBLE_EQ(FindMetric(record, kEnergyPerTokenMetric)->value(), 262.5 / 50);
  EXPECT_EQ(FindMetric(record, kEnergyPerTokenMetric)->unit(), "J/token");
  EXPECT_EQ(record.flags_size(), 0);
}

TEST(AnnotateRunTest, NoEnergyAtAllWithoutPower) {
  std::vector<DeviceReading> readings = {Reading(0, 0, 10), Reading(1, 0, 20)};
  for (auto& r : readings) r.devices[0].power_watts.reset();
  v1::RunRecord record;
  record.add_requests()->set_output_tokens(10);
  AnnotateRun(readings, {S(0), S(1)}, {}, &record);
  EXPECT_EQ(FindMetric(record, kEnergyMetric), nullptr);
  EXPECT_EQ(FindMetric(record, kEnergyPerTokenMetric), nullptr);
  EXPECT_EQ(FindMetric(record, "device_power_watts_mean"), nullptr);
  EXPECT_EQ(record.memory(0).bytes(), 20u);

  // One of two devices without power: no energy either, rather than half of it.
  readings = {Reading(0, 100), Reading(1, 100)};
  for (auto& r : readings) r.devices.emplace_back().device = "1";
  v1::RunRecord two;
  AnnotateRun(readings, {S(0), S(1)}, {}, &two);
  EXPECT_EQ(FindMetric(two, kEnergyMetric), nullptr);
  EXPECT_NE(FindMetric(two, "device0_power_watts_mean"), nullptr);
}

TEST(AnnotateRunTest, JoulesPerTokenFromTheRequests) {
  std::vector<DeviceReading> readings = {Reading(0, 100), Reading(2, 100)};
  v1::RunRecord record;
  record.add_requests()->set_output_tokens(30);
  record.add_requests()->set_output_tokens(10);
  AnnotateRun(readings, {S(0), S(2)}, {}, &record);
  EXPECT_DOUBLE_EQ(FindMetric(record, kEnergyMetric)->value(), 200);
  EXPECT_DOUBLE_EQ(FindMetric(record, kEnergyPerTokenMetric)->value(), 5);
}

TEST(AnnotateRunTest, JoulesPerImageFromTheDeclaredImageCount) {
  // 150 W for 4 s = 600 J over 4 images (a ComfyUI batch): 150 J/image; no tokens, no J/token.
  std::vector<DeviceReading> readings = {Reading(0, 150), Reading(4, 150)};
  v1::RunRecord record;
  v1::Metric* images = record.add_metrics();
  images->set_name("image_count");
  images->set_value(4);
  images->set_unit("images");
  AnnotateOptions options;
  options.image_metrics = {"image_count"};
  AnnotateRun(readings, {S(0), S(4)}, options, &record);
  EXPECT_DOUBLE_EQ(FindMetric(record, kEnergyMetric)->value(), 600);
  ASSERT_NE(FindMetric(record, kEnergyPerImageMetric), nullptr);
  EXPECT_DOUBLE_EQ(FindMetric(record, kEnergyPerImageMetric)->value(), 150);
  EXPECT_EQ(FindMetric(record, kEnergyPerImageMetric)->unit(), "J/image");
  EXPECT_EQ(FindMetric(record, kEnergyPerTokenMetric), nullptr);
  // Undeclared (a backend without an image count), or no image made: no figure per image.
  v1::RunRecord undeclared = record;
  undeclared.mutable_metrics()->DeleteSubrange(1, undeclared.metrics_size() - 1);
  AnnotateRun(readings, {S(0), S(4)}, {}, &undeclared);
  EXPECT_EQ(FindMetric(undeclared, kEnergyPerImageMetric), nullptr);
  v1::RunRecord none;
  none.add_metrics()->set_name("image_count");
  AnnotateRun(readings, {S(0), S(4)}, options, &none);
  EXPECT_NE(FindMetric(none, kEnergyMetric), nullptr);
  EXPECT_EQ(FindMetric(none, kEnergyPerImageMetric), nullptr);
}

TEST(AnnotateRunTest, ThrottledByReasons) {
  std::vector<DeviceReading> readings = {Reading(0, 100), Reading(1, 100), Reading(2, 100)};
  readings[0].devices[0].throttle_reasons = 0x1;
  readings[1].devices[0].throttle_reasons = 0x20;
  readings[2].devices[0].throttle_reasons = 0x24;
  v1::RunRecord record;
  AnnotateOptions options;
  options.vendor = "nvidia";
  AnnotateRun(readings, {S(0), S(2)}, options, &record);
  ASSERT_EQ(record.flags_size(), 1);
  EXPECT_EQ(record.flags(0).code(), "THROTTLED");
  EXPECT_EQ(record.flags(0).reason(), "nvidia:0 clocks event reasons sw_power_cap,sw_thermal_slowdown in 2 of 3 samples");
}

TEST(AnnotateRunTest, ThrottledInferredFromTheClockUnderLoad) {
  auto amd = [](double at, double util, double clock) {
    DeviceReading r = Reading(at, 500);
    r.devices[0].utilization_percent = util;
    r.devices[0].sm_clock_mhz = clock;
    r.devices[0].max_sm_clock_mhz = 1700;
    return r;
  };
  AnnotateOptions options;
  options.vendor = "amd";
  // Low clock while idle (10 %) is not throttling; 1700 under load is not either.
  v1::RunRecord calm;
  AnnotateRun({amd(0, 10, 800), amd(1, 100, 1700)}, {S(0), S(1)}, options, &calm);
  EXPECT_EQ(calm.flags_size(), 0);
  v1::RunRecord hot;
  AnnotateRun({amd(0, 100, 1700), amd(1, 100, 1210), amd(2, 95, 1400)}, {S(0), S(2)}, options, &hot);
  ASSERT_EQ(hot.flags_size(), 1);
  EXPECT_EQ(hot.flags(0).code(), "THROTTLED");
  EXPECT_EQ(hot.flags(0).reason(),
            "amd:0 clock down to 1210 MHz, below 90% of its maximum 1700 MHz at >= 80% utilisation, in 2 of 3 samples");
}

TEST(AnnotateRunTest, ContendedByOthersNotByOurOwnTree) {
  std::vector<DeviceReading> readings = {Reading(0, 100), Reading(1, 100)};
  readings[0].processes = {Proc(10, "llama-server", 1 << 30), Proc(4242, "python3", 1 << 20)};
  readings[1].processes = {Proc(4242, "python3", 512ull << 20), Proc(77, "")};
  AnnotateOptions options;
  options.vendor = "nvidia";
  options.is_own_process = [](int64_t pid) { return pid == 10; };
  v1::RunRecord record;
  AnnotateRun(readings, {S(0), S(1)}, options, &record);
  ASSERT_EQ(record.flags_size(), 1);
  EXPECT_EQ(record.flags(0).code(), "CONTENDED");
  EXPECT_EQ(record.flags(0).reason(),
            "other processes on the nvidia device(s) during the run: pid 77 (unnamed), pid 4242 python3 (512 MiB)");

  v1::RunRecord alone;
  readings[0].processes.resize(1);
  readings[1].processes.clear();
  AnnotateRun(readings, {S(0), S(1)}, options, &alone);
  EXPECT_EQ(alone.flags_size(), 0);
}

TEST(AnnotateRunTest, NoReadingsNoFigures) {
  v1::RunRecord record;
  AnnotateRun({}, {S(0), S(1)}, {}, &record);
  EXPECT_EQ(record.metrics_size(), 0);
  EXPECT_EQ(record.memory_size(), 0);
}

// A monitor with a fixed 100 W device; counts its reads.
class FixedMonitor : public DeviceMonitor {
 public:
  explicit FixedMonitor(Clock* clock) : clock_(clock) {}
  absl::StatusOr<DeviceReading> Read() override {
    ++reads;
    if (fail) return absl::UnavailableError("nvidia-smi did not finish within 10s (killed)");
    DeviceReading reading = Reading(0, 100, 4096);
    reading.at = clock_->Monotonic();
    return reading;
  }
  std::string memory_source() const override { return "fixed"; }
  std::string vendor() const override { return "nvidia"; }
  std::atomic<int> reads{0};
  std::atomic<bool> fail{false};

 private:
  Clock* clock_;
};

// Steps a simulated clock while the sampler's thread sleeps on it, until told to stop.
class Stepper {
 public:
  explicit Stepper(SimulatedClock* clock) : thread_([this, clock] {
      while (!done_) {
        if (clock->sleepers() > 0) clock->Advance(absl::Milliseconds(50));
        std::this_thread::yield();
      }
    }) {}
  ~Stepper() {
    done_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

TEST(DeviceSamplerTest, SamplesOnItsThreadAtThePeriodOfTheSimulatedClock) {
  SimulatedClock clock;
  FixedMonitor monitor(&clock);
  DeviceSampler sampler(Sampling(&monitor, &clock, absl::Seconds(1)));
  const absl::Time begin = clock.Now();
  sampler.BeginRun();
  EXPECT_EQ(monitor.reads, 1);
  v1::RunRecord record;
  {
    Stepper stepper(&clock);
    // Three periods: three more readings, each a second apart.
    while (monitor.reads < 4) std::this_thread::yield();
    SetTimestamp(begin + absl::Milliseconds(500), record.mutable_start_time());
    SetTimestamp(begin + absl::Milliseconds(2500), record.mutable_end_time());
    EXPECT_TRUE(sampler.EndRun(&record).empty());
  }
  const int reads = monitor.reads;
  EXPECT_GE(reads, 5);  // begin, three on the thread, end (the stepper may add one more)
  EXPECT_DOUBLE_EQ(FindMetric(record, "device_samples")->value(), reads);
  // 100 W over the record's own 2 s, whatever the sampling times.
  EXPECT_DOUBLE_EQ(FindMetric(record, kEnergyMetric)->value(), 200);
  EXPECT_EQ(record.memory(0).bytes(), 4096u);
}

TEST(DeviceSamplerTest, FailedReadingsAreReportedAndGiveNoFigures) {
  SimulatedClock clock;
  FixedMonitor monitor(&clock);
  monitor.fail = true;
  DeviceSampler sampler(Sampling(&monitor, &clock, absl::Seconds(1)));
  sampler.BeginRun();
  v1::RunRecord record;
  std::vector<std::string> problems;
  {
    Stepper stepper(&clock);
    problems = sampler.EndRun(&record);
  }
  ASSERT_EQ(problems.size(), 1u);  // at least the readings of BeginRun and EndRun, said once
  EXPECT_THAT(problems[0], ::testing::MatchesRegex("nvidia-smi did not finish within 10s \\(killed\\) \\([0-9]+ times\\)"));
  EXPECT_EQ(record.metrics_size(), 0);
  EXPECT_EQ(sampler.EndRun(&record), std::vector<std::string>{"the device sampler was not started for this run"});
}

// The sampler with NvidiaProbe and a fake nvidia-smi run for real (real clock, 20 ms period).
TEST(DeviceSamplerTest, RunsAFakeNvidiaSmiForReal) {
  testing::ScopedTempDir dir;
  testing::WriteTool(dir.path(), "nvidia-smi",
                     "case \"$1\" in\n"
                     "  --query-gpu=index,utilization*) echo '0, 97, 61440, 650.5, 80, 1755, 1980, 0x0000000000000004';;\n"
                     "  --query-compute-apps*) cat '" + testing::FixturePath("probes/nvidia/query-compute-apps.csv") + "';;\n"
                     "  *) exit 3;;\n"
                     "esac\n");
  auto runner = NewPosixCommandRunner(dir.path().c_str());
  NvidiaProbe probe(runner.get(), &SystemClock());
  SamplerOptions options = Sampling(&probe, &SystemClock(), absl::Milliseconds(20));
  options.is_own_process = [](int64_t pid) { return pid == 4321; };
  DeviceSampler sampler(std::move(options));
  sampler.BeginRun();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  v1::RunRecord record;
  EXPECT_TRUE(sampler.EndRun(&record).empty());
  EXPECT_GE(FindMetric(record, "device_samples")->value(), 2);
  ASSERT_EQ(record.memory_size(), 1);
  EXPECT_EQ(record.memory(0).bytes(), 61440ull << 20);
  EXPECT_EQ(record.memory(0).scope(), "nvidia:0");
  EXPECT_DOUBLE_EQ(FindMetric(record, "device_power_watts_peak")->value(), 650.5);
  EXPECT_NE(FindMetric(record, kEnergyMetric), nullptr);  // over BeginRun..EndRun: no record times
  ASSERT_EQ(record.flags_size(), 2);
  EXPECT_EQ(record.flags(0).code(), "THROTTLED");
  EXPECT_THAT(record.flags(0).reason(), HasSubstr("sw_power_cap"));
  EXPECT_EQ(record.flags(1).code(), "CONTENDED");
  EXPECT_EQ(record.flags(1).reason(),
            "other processes on the nvidia device(s) during the run: pid 4242 /usr/bin/python3 (20480 MiB)");
}

}  // namespace
}  // namespace benchfleet::agent
