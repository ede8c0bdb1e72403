#include "agent/probes/host_load.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "agent/probes/device_sampler.h"
#include "tests/unit/agent/probes/fake_tools.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using testing::Fixture;

TEST(HostLoadParseTest, ProcStat) {
  auto times = ParseProcStatCpu(Fixture("probes/cpu/proc-stat.txt"));
  ASSERT_TRUE(times.ok()) << times.status();
  EXPECT_EQ(times->cpus, 4u);
  // user 1000 nice 10 system 500 idle 8000 iowait 100 irq 20 softirq 30 steal 5.
  EXPECT_EQ(times->busy, 1000u + 10 + 500 + 20 + 30 + 5);
  EXPECT_EQ(times->total, times->busy + 8000 + 100);
  EXPECT_EQ(ParseProcStatCpu("").status().message(), "/proc/stat: no 'cpu' line with at least 4 figures");
  EXPECT_EQ(ParseProcStatCpu("cpu  1 2\n").status().message(), "/proc/stat: no 'cpu' line with at least 4 figures");
  EXPECT_EQ(ParseProcStatCpu("cpu  1 2 x 4\n").status().message(), "/proc/stat: the cpu line is not numbers");
}

TEST(HostLoadParseTest, ProcessTimes) {
  auto times = ParseProcessTimes(Fixture("probes/cpu/proc-pid-stat.txt"));
  ASSERT_TRUE(times.has_value());
  EXPECT_EQ(times->name, "python3 (worker)");
  EXPECT_EQ(times->parent, 4242);
  EXPECT_EQ(times->ticks, 15u);  // utime 10 + stime 5
  EXPECT_EQ(ParseProcessTimes(""), std::nullopt);
  EXPECT_EQ(ParseProcessTimes("1 (x) S 0 1 2"), std::nullopt);
  EXPECT_EQ(ParseProcessTimes("1 )x( S 0 1 2 3 4 5 6 7 8 9 10 11 12"), std::nullopt);
}

// A fake /proc: 2 CPUs, the agent (100) with its server (101), and a stranger (200).
class FakeProc {
 public:
  explicit FakeProc(const std::string& root) : root_(root) {}
  void Cpu(uint64_t busy, uint64_t idle) {
    std::filesystem::create_directories(root_ + "/proc");
    std::ofstream(root_ + "/proc/stat") << "cpu  " << busy << " 0 0 " << idle << " 0 0 0 0 0 0\ncpu0 0 0 0 0\n"
                                        << "cpu1 0 0 0 0\nintr 0\n";
  }
  void Process(int64_t pid, const std::string& name, int64_t parent, uint64_t ticks) {
    std::filesystem::create_directories(absl::StrCat(root_, "/proc/", pid));
    std::ofstream(absl::StrCat(root_, "/proc/", pid, "/stat"))
        << pid << " (" << name << ") S " << parent << " 0 0 0 -1 0 0 0 0 0 " << ticks << " 0 0 0 20 0 1 0\n";
  }

 private:
  std::string root_;
};

TEST(HostLoadMonitorTest, OthersUsingTheCpusAreListedAndOurTreeIsNot) {
  testing::ScopedTempDir root;
  FakeProc proc(root.path());
  proc.Cpu(1000, 9000);
  proc.Process(100, "benchfleet-agent", 1, 50);
  proc.Process(101, "llama-server", 100, 1000);
  proc.Process(200, "stress-ng", 1, 10);
  proc.Process(300, "sshd", 1, 7);
  SimulatedClock clock;
  HostLoadMonitor monitor(Env::Default(), &clock, 100, root.path());
  auto first = monitor.Read();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->devices.at(0).device, "host");
  EXPECT_EQ(first->devices.at(0).utilization_percent, std::nullopt);  // no interval yet
  EXPECT_TRUE(first->processes.empty());

  // 200 ticks over 2 CPUs = 100 ticks of one CPU: the server used 90, stress-ng 40, sshd 1.
  proc.Cpu(1150, 9050);
  proc.Process(101, "llama-server", 100, 1090);
  proc.Process(200, "stress-ng", 1, 50);
  proc.Process(300, "sshd", 1, 8);
  clock.Advance(absl::Seconds(1));
  auto second = monitor.Read();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->devices.at(0).utilization_percent, 75.0);
  ASSERT_EQ(second->processes.size(), 1u);
  EXPECT_EQ(second->processes[0].pid, 200);
  EXPECT_EQ(second->processes[0].name, "stress-ng");

  v1::RunRecord record;
  AnnotateOptions options;
  options.vendor = monitor.vendor();
  AnnotateRun({*first, *second}, {first->at, second->at}, options, &record);
  ASSERT_EQ(record.flags_size(), 1);
  EXPECT_EQ(record.flags(0).reason(), "other processes using the CPUs during the run: pid 200 stress-ng");
  EXPECT_EQ(record.memory_size(), 0);  // host memory is not device memory
}

TEST(HostLoadMonitorTest, ThisMachineReadsForReal) {
  HostLoadMonitor monitor(Env::Default(), &SystemClock(), ::getpid());
  ASSERT_TRUE(monitor.Read().ok());
  auto second = monitor.Read();
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->devices.size(), 1u);
}

TEST(HostLoadMonitorTest, GarbageProcIsAnError) {
  testing::ScopedTempDir root;
  std::filesystem::create_directories(root.path() + "/proc");
  std::ofstream(root.path() + "/proc/stat") << "garbage\n";
  SimulatedClock clock;
  HostLoadMonitor monitor(Env::Default(), &clock, 1, root.path());
  EXPECT_EQ(monitor.Read().status().message(), "/proc/stat: no 'cpu' line with at least 4 figures");
  HostLoadMonitor absent(Env::Default(), &clock, 1, root.path() + "/nothing");
  EXPECT_EQ(absent.Read().status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace benchfleet::agent
