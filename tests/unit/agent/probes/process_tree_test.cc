// process_tree.h on Linux: /proc/PID/status memory lines, the memory of a process tree read from
// a fake /proc (parents from /proc/PID/stat) and from this test's own /proc entry. The macOS
// implementation (process_tree_macos.cc) is not built here: see agent/probes/README.md.
#include "agent/probes/process_tree.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "tests/unit/agent/probes/fake_tools.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using testing::Fixture;

TEST(ProcessTreeTest, ProcStatusMemory) {
  auto memory = ParseProcStatusMemory(Fixture("probes/cpu/proc-pid-status.txt"));
  ASSERT_TRUE(memory.has_value());
  EXPECT_EQ(memory->resident_bytes, uint64_t{262144} * 1024);  // VmRSS
  EXPECT_EQ(memory->peak_bytes, uint64_t{524288} * 1024);      // VmHWM
  EXPECT_EQ(memory->footprint_bytes, 0u);
  // A kernel thread has no Vm lines; garbage is no figure, never a wrong one.
  EXPECT_EQ(ParseProcStatusMemory("Name:\tkthreadd\nState:\tS (sleeping)\n"), std::nullopt);
  EXPECT_EQ(ParseProcStatusMemory(""), std::nullopt);
  EXPECT_EQ(ParseProcStatusMemory("VmHWM:\t 12 kB\nVmRSS:\t 12 MB\n"), std::nullopt);
  EXPECT_EQ(ParseProcStatusMemory("VmHWM:\t 12 kB\nVmRSS:\t lots kB\n"), std::nullopt);
}

#if !defined(__APPLE__)
class FakeProc {
 public:
  // Adds /proc/PID with its stat (name, parent) and, unless rss_kib is negative, a status.
  void Add(int pid, const std::string& name, int parent, int rss_kib, int hwm_kib) {
    const std::string dir = absl::StrCat(root(), "/proc/", pid);
    ::mkdir((root() + "/proc").c_str(), 0755);
    ::mkdir(dir.c_str(), 0755);
    std::ofstream(dir + "/stat") << pid << " (" << name << ") S " << parent << " 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0\n";
    std::ofstream status(dir + "/status");
    status << "Name:\t" << name << "\n";
    if (rss_kib >= 0) status << "VmHWM:\t" << hwm_kib << " kB\nVmRSS:\t" << rss_kib << " kB\n";
  }
  std::string root() const { return dir_.path(); }

 private:
  testing::ScopedTempDir dir_;
};

TEST(ProcessTreeTest, TheTreeOfAFakeProc) {
  FakeProc proc;
  proc.Add(100, "docker", 1, 40000, 50000);       // the root
  proc.Add(101, "workflow", 100, 900000, 2000000);
  proc.Add(102, "worker (1)", 101, 300000, 400000);
  proc.Add(103, "kworker/0:1", 100, -1, 0);       // no memory lines: left out
  proc.Add(200, "postgres", 1, 700000, 800000);   // another tree
  auto tree = ReadProcessTreeMemory(Env::Default(), 100, proc.root());
  ASSERT_TRUE(tree.ok()) << tree.status();
  ASSERT_EQ(tree->processes.size(), 3u);
  EXPECT_EQ(tree->processes[0].pid, 100);
  EXPECT_EQ(tree->processes[1].pid, 101);
  EXPECT_EQ(tree->processes[2].pid, 102);
  EXPECT_EQ(tree->resident_bytes(), uint64_t{40000 + 900000 + 300000} * 1024);
  EXPECT_EQ(tree->largest_peak_bytes(), uint64_t{2000000} * 1024);  // the largest process's own peak, not a sum
  EXPECT_EQ(tree->source, "/proc/PID/status VmRSS and VmHWM of the process and its descendants");

  auto missing = ReadProcessTreeMemory(Env::Default(), 999, proc.root());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            absl::StrCat("process 999: cannot read its memory from ", proc.root(), "/proc/999/status"));
}

TEST(ProcessTreeTest, ThisProcessOnTheRealProc) {
  auto tree = ReadProcessTreeMemory(Env::Default(), ::getpid());
  ASSERT_TRUE(tree.ok()) << tree.status();
  ASSERT_GE(tree->processes.size(), 1u);
  EXPECT_EQ(tree->processes[0].pid, ::getpid());
  EXPECT_GT(tree->processes[0].resident_bytes, 0u);
  EXPECT_GE(tree->processes[0].peak_bytes, tree->processes[0].resident_bytes);
}
#endif  // !__APPLE__

}  // namespace
}  // namespace benchfleet::agent
