// What the workflow backend added to agent/process/child_process: stderr to a file of its own,
// joining a cgroup before exec (and failing to), and wait4's ru_maxrss once the child is reaped.
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/process/child_process.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ChildProcessCgroupTest : public ::testing::Test {
 protected:
  std::unique_ptr<ProcessLauncher> launcher_ = NewPosixProcessLauncher(&SystemClock(), Env::Default());
  testing::ScopedTempDir dir_;
};

TEST_F(ChildProcessCgroupTest, StderrGoesToItsOwnFile) {
  ProcessOptions options;
  options.argv = {"/bin/sh", "-c", "echo out; echo err >&2"};
  options.log_path = dir_.path() + "/stdout.log";
  options.stderr_path = dir_.path() + "/stderr.log";
  auto process = launcher_->Start(options);
  ASSERT_TRUE(process.ok()) << process.status();
  ASSERT_TRUE((*process)->Wait(absl::Seconds(10)).ok());
  EXPECT_EQ(Read(options.log_path), "out\n");
  EXPECT_EQ(Read(options.stderr_path), "err\n");
}

TEST_F(ChildProcessCgroupTest, TheChildWritesItselfIntoTheProcsFileBeforeExec) {
  ProcessOptions options;
  options.argv = {"/bin/true"};
  options.cgroup_procs_path = dir_.path() + "/cgroup.procs";
  std::ofstream(options.cgroup_procs_path) << "";
  auto process = launcher_->Start(options);
  ASSERT_TRUE(process.ok()) << process.status();
  ASSERT_TRUE((*process)->Wait(absl::Seconds(10)).ok());
  EXPECT_EQ(Read(options.cgroup_procs_path), "0");  // "0": the writing process, to the kernel
}

TEST_F(ChildProcessCgroupTest, AProcsFileThatCannotBeOpenedOrWrittenFailsTheStart) {
  ProcessOptions options;
  options.argv = {"/bin/true"};
  options.cgroup_procs_path = dir_.path() + "/missing/cgroup.procs";
  auto missing = launcher_->Start(options);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "cannot open " + options.cgroup_procs_path + ": No such file or directory");
  // /dev/full opens but refuses every write: the child's write fails between fork and exec.
  options.cgroup_procs_path = "/dev/full";
  auto full = launcher_->Start(options);
  EXPECT_EQ(full.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(full.status().message(),
            "cannot start /bin/true: cannot join the cgroup (/dev/full): No space left on device");
}

TEST_F(ChildProcessCgroupTest, ReapedMaxRssIsTheLargestOfTheTree) {
  ProcessOptions options;
  // The stand-in holds 40 MiB; then under a shell that waits for it: the figure is the
  // largest process of the tree, not the shell's own.
  options.argv = {WORKFLOW_STANDIN, "--prompts", "/dev/null", "--output", dir_.path() + "/r.json", "--alloc-mib", "40"};
  auto process = launcher_->Start(options);
  ASSERT_TRUE(process.ok()) << process.status();
  EXPECT_FALSE((*process)->reaped_max_rss_bytes().has_value());
  ASSERT_TRUE((*process)->Wait(absl::Seconds(10)).ok());
  ASSERT_TRUE((*process)->reaped_max_rss_bytes().has_value());
  EXPECT_NEAR(static_cast<double>(*(*process)->reaped_max_rss_bytes()), 40.0 * (1 << 20), 4.0 * (1 << 20));

  options.argv = {"/bin/sh", "-c", std::string(WORKFLOW_STANDIN) + " --prompts /dev/null --output " + dir_.path() +
                                       "/r2.json --alloc-mib 40; true"};
  process = launcher_->Start(options);
  ASSERT_TRUE(process.ok()) << process.status();
  ASSERT_TRUE((*process)->Wait(absl::Seconds(10)).ok());
  EXPECT_NEAR(static_cast<double>(*(*process)->reaped_max_rss_bytes()), 40.0 * (1 << 20), 4.0 * (1 << 20));
}

}  // namespace
}  // namespace benchfleet::agent
