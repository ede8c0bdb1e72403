#include "agent/probes/command_runner.h"

#include <gtest/gtest.h>

#include <chrono>

#include "tests/unit/agent/probes/fake_tools.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

TEST(CommandRunnerTest, CapturesStdoutStderrAndTheExitCode) {
  testing::ScopedTempDir dir;
  testing::WriteTool(dir.path(), "tool", "echo \"out $1\"; echo err >&2; exit 4\n");
  auto runner = NewPosixCommandRunner(dir.path().c_str());
  auto output = runner->Run({"tool", "a b"}, absl::Seconds(10));
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(output->stdout_text, "out a b\n");
  EXPECT_EQ(output->stderr_text, "err\n");
  EXPECT_EQ(output->exit_code, 4);
  EXPECT_EQ(DescribeFailure({"tool", "a b"}, *output), "tool a b exited with code 4: err");
}

TEST(CommandRunnerTest, AMissingToolIsNotFound) {
  testing::ScopedTempDir dir;
  auto runner = NewPosixCommandRunner(dir.path().c_str());
  auto output = runner->Run({"nvidia-smi", "-L"}, absl::Seconds(1));
  EXPECT_EQ(output.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(output.status().message(), "nvidia-smi: not found on PATH");
  EXPECT_EQ(runner->Run({dir.path() + "/absent"}, absl::Seconds(1)).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(runner->Run({}, absl::Seconds(1)).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CommandRunnerTest, AHungToolIsKilledAtItsDeadline) {
  testing::ScopedTempDir dir;
  // The child of the tool holds the pipe too: the whole group must die for Run to return.
  testing::WriteTool(dir.path(), "hang", "sleep 30 &\nsleep 30\n");
  auto runner = NewPosixCommandRunner(dir.path().c_str());
  const auto start = std::chrono::steady_clock::now();
  auto output = runner->Run({"hang"}, absl::Milliseconds(200));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(output.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(output.status().message(), "hang did not finish within 200ms (killed)");
  EXPECT_LT(elapsed, std::chrono::seconds(10));
}

}  // namespace
}  // namespace benchfleet::agent
