#include "agent/process/child_process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <vector>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/unit/agent/temp_dir.h"
#include "tests/support/poll.h"

namespace benchfleet::agent {
namespace {

using ::benchfleet::agent::testing::ScopedTempDir;

std::string ReadText(const std::string& path) {
  absl::StatusOr<std::string> text = Env::Default()->ReadFile(path);
  return text.ok() ? *text : "";
}

std::string WriteScript(const std::string& dir, const std::string& name, const std::string& body) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << "#!/bin/sh\n" << body;
  ::chmod(path.c_str(), 0755);
  return path;
}

// Polls on the real clock (these tests wait on other processes and the kernel) for up to 10 s.
template <typename Pred>
bool Eventually(Pred pred) {
  return ::benchfleet::testing::PollUntil(pred, absl::Seconds(10), absl::Milliseconds(10));
}

ProcessOptions Options(std::vector<std::string> argv, std::string log_path = "",
                       std::map<std::string, std::string> env = {}) {
  ProcessOptions options;
  options.argv = std::move(argv);
  options.log_path = std::move(log_path);
  options.env = std::move(env);
  return options;
}

class ChildProcessTest : public ::testing::Test {
 protected:
  std::unique_ptr<ProcessLauncher> launcher_ = NewPosixProcessLauncher(&SystemClock(), Env::Default());
  ScopedTempDir dir_;
};

TEST_F(ChildProcessTest, ChildRunsInItsOwnProcessGroup) {
  auto child = launcher_->Start(Options({"/bin/sleep", "1000"}));
  ASSERT_TRUE(child.ok()) << child.status();
  const pid_t pid = (*child)->pid();
  EXPECT_EQ(::getpgid(pid), pid);
  EXPECT_EQ((*child)->process_group(), pid);
  EXPECT_NE(::getpgid(pid), ::getpgrp());
  EXPECT_TRUE((*child)->Running());

  const ExitStatus status = (*child)->Terminate(absl::Seconds(5));
  EXPECT_EQ(status.signal, SIGTERM);
  EXPECT_EQ(status.ToString(), "killed by signal 15 (SIGTERM)");
  EXPECT_FALSE((*child)->Running());
  EXPECT_EQ(::kill(pid, 0), -1);  // reaped: the pid is gone
}

TEST_F(ChildProcessTest, OutputAndEnvironmentGoToTheLogFile) {
  const std::string log = dir_.path() + "/child.log";
  auto child = launcher_->Start(Options({"/bin/sh", "-c", "echo out; echo \"$BENCHFLEET_TEST_VAR\" >&2; exit 3"},
                                         log, {{"BENCHFLEET_TEST_VAR", "a b"}}));
  ASSERT_TRUE(child.ok()) << child.status();
  absl::StatusOr<ExitStatus> status = (*child)->Wait(absl::Seconds(10));
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->exit_code, 3);
  EXPECT_EQ(status->signal, 0);
  EXPECT_EQ(status->ToString(), "exit code 3");
  EXPECT_EQ(ReadText(log), "out\na b\n");
  EXPECT_EQ((*child)->exit_status()->exit_code, 3);
}

TEST_F(ChildProcessTest, LogFileIsAppendedTo) {
  const std::string log = dir_.path() + "/child.log";
  std::ofstream(log) << "earlier\n";
  auto child = launcher_->Start(Options({"/bin/echo", "later"}, log));
  ASSERT_TRUE(child.ok()) << child.status();
  ASSERT_TRUE((*child)->Wait(absl::Seconds(10)).ok());
  EXPECT_EQ(ReadText(log), "earlier\nlater\n");
}

TEST_F(ChildProcessTest, StartFailuresNameTheProgramAndTheReason) {
  absl::StatusOr<std::unique_ptr<Process>> missing = launcher_->Start(Options({"/nonexistent/llama-server"}));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "cannot start /nonexistent/llama-server: No such file or directory");

  const std::string not_executable = dir_.path() + "/model.gguf";
  std::ofstream(not_executable) << "GGUF";
  absl::StatusOr<std::unique_ptr<Process>> denied = launcher_->Start(Options({not_executable}));
  EXPECT_EQ(denied.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(denied.status().message(), absl::StrCat("cannot start ", not_executable, ": Permission denied"));

  absl::StatusOr<std::unique_ptr<Process>> relative = launcher_->Start(Options({"bin/llama-server"}));
  EXPECT_EQ(relative.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(relative.status().message(), "cannot start 'bin/llama-server': the program must be an absolute path");
}

TEST_F(ChildProcessTest, TerminateSendsSigtermThenSigkillAfterTheGrace) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const std::string log = dir_.path() + "/stubborn.log";
  // Ignores SIGTERM (the trap only notes it), like a server stuck in a CUDA call.
  const std::string script = WriteScript(dir_.path(), "stubborn.sh",
                                         "trap 'echo got TERM' TERM\necho ready\nwhile :; do sleep 0.05; done\n");
  auto child = launcher_->Start(Options({script}, log));
  ASSERT_TRUE(child.ok()) << child.status();
  ASSERT_TRUE(Eventually([&] { return ReadText(log) == "ready\n"; }));
  const pid_t group = (*child)->process_group();

  const absl::Time start = absl::Now();
  const ExitStatus status = (*child)->Terminate(absl::Milliseconds(300));
  const absl::Duration took = absl::Now() - start;

  EXPECT_EQ(status.signal, SIGKILL);
  EXPECT_EQ(status.ToString(), "killed by signal 9 (SIGKILL)");
  EXPECT_GE(took, absl::Milliseconds(300));
  EXPECT_LT(took, absl::Seconds(5));
  EXPECT_THAT(ReadText(log), ::testing::HasSubstr("got TERM\n"));
  // The whole group is gone, the script's `sleep` included (re-parented to this test, which
  // reaps it, rather than waiting for init to).
  EXPECT_TRUE(Eventually([&] {
    while (::waitpid(-group, nullptr, WNOHANG) > 0) {
    }
    return ::killpg(group, 0) == -1 && errno == ESRCH;
  }));
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  // Idempotent.
  EXPECT_EQ((*child)->Terminate(absl::Seconds(1)).signal, SIGKILL);
}

TEST_F(ChildProcessTest, WaitTimesOutOnARunningChild) {
  auto child = launcher_->Start(Options({"/bin/sleep", "1000"}));
  ASSERT_TRUE(child.ok()) << child.status();
  absl::StatusOr<ExitStatus> status = (*child)->Wait(absl::Milliseconds(50));
  EXPECT_EQ(status.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(status.status().message(), absl::StrCat("process ", (*child)->pid(), " still runs after 50ms"));
}

TEST_F(ChildProcessTest, DestructorKillsAndReapsTheGroup) {
  pid_t pid = 0;
  {
    auto child = launcher_->Start(Options({"/bin/sleep", "1000"}));
    ASSERT_TRUE(child.ok()) << child.status();
    pid = (*child)->pid();
  }
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(ChildProcessTest, ReadsPeakRssFromProcStatusWhileTheChildRuns) {
  auto child = launcher_->Start(Options({"/bin/sleep", "1000"}));
  ASSERT_TRUE(child.ok()) << child.status();
  const pid_t pid = (*child)->pid();
  auto independent = [&] {
    absl::StatusOr<uint64_t> bytes = ParseVmHwmBytes(ReadText(absl::StrCat("/proc/", pid, "/status")));
    return bytes.ok() ? *bytes : 0;
  };
  // The figure read independently just before and just after (VmHWM only grows; sleep's may
  // still grow while it starts up).
  const uint64_t before = independent();
  absl::StatusOr<PeakMemory> peak = (*child)->ReadPeakMemory();
  const uint64_t after = independent();
  ASSERT_TRUE(peak.ok()) << peak.status();
  EXPECT_GE(peak->bytes, before);
  EXPECT_LE(peak->bytes, after);
  EXPECT_GT(peak->bytes, 0u);
  EXPECT_FALSE(peak->is_footprint);
  EXPECT_FALSE(peak->since_reset);
  EXPECT_EQ(peak->source, absl::StrCat("/proc/", pid, "/status VmHWM (lifetime peak since the process started)"));

  (*child)->Terminate(absl::Seconds(5));
  absl::StatusOr<PeakMemory> gone = (*child)->ReadPeakMemory();
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(gone.status().message(),
            absl::StrCat("process ", pid, " has exited (killed by signal 15 (SIGTERM)); its peak memory is gone"));
}

// The helper touched 64 MiB and gave it back: the lifetime peak holds them, the peak after a
// reset starts from the (small) current RSS and says so in its source.
TEST_F(ChildProcessTest, ResetPeakMemoryMakesTheNextReadThePeakSinceTheReset) {
  ScopedTempDir dir;
  const std::string log = dir.path() + "/helper.log";
  auto child = launcher_->Start(Options({PROCESS_TEST_HELPER, "--hold-peak", "64"}, log));
  ASSERT_TRUE(child.ok()) << child.status();
  const pid_t pid = (*child)->pid();
  ASSERT_TRUE(Eventually([&] { return ReadText(log) == "freed\n"; })) << ReadText(log);

  absl::StatusOr<PeakMemory> lifetime = (*child)->ReadPeakMemory();
  ASSERT_TRUE(lifetime.ok()) << lifetime.status();
  EXPECT_GE(lifetime->bytes, 64ull << 20);
  EXPECT_FALSE(lifetime->since_reset);

  ASSERT_TRUE((*child)->ResetPeakMemory().ok());
  absl::StatusOr<PeakMemory> since = (*child)->ReadPeakMemory();
  ASSERT_TRUE(since.ok()) << since.status();
  EXPECT_LT(since->bytes, 32ull << 20) << "lifetime " << lifetime->bytes;
  EXPECT_GT(since->bytes, 0u);
  EXPECT_FALSE(since->is_footprint);
  EXPECT_TRUE(since->since_reset);
  EXPECT_EQ(since->source,
            absl::StrCat("/proc/", pid, "/status VmHWM since a /proc/", pid, "/clear_refs reset before the run"));

  (*child)->Terminate(absl::Seconds(5));
  absl::Status gone = (*child)->ResetPeakMemory();
  EXPECT_EQ(gone.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(gone.message(), absl::StrCat("process ", pid,
                                         " has exited (killed by signal 15 (SIGTERM)); its peak memory cannot be reset"));
}

// The reset goes through the Env: a filesystem that refuses the write leaves the reads lifetime
// peaks and returns the refusal.
class RefusingClearRefsEnv : public EnvWrapper {
 public:
  RefusingClearRefsEnv() : EnvWrapper(Env::Default()) {}
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) override {
    opened.push_back(path);
    return absl::PermissionDeniedError(absl::StrCat("open ", path, ": Permission denied"));
  }
  std::vector<std::string> opened;
};

TEST(ChildProcessResetTest, AFailedResetIsReturnedAndReadsStayLifetimePeaks) {
  RefusingClearRefsEnv env;
  std::unique_ptr<ProcessLauncher> launcher = NewPosixProcessLauncher(&SystemClock(), &env);
  auto child = launcher->Start(Options({"/bin/sleep", "1000"}));
  ASSERT_TRUE(child.ok()) << child.status();
  const pid_t pid = (*child)->pid();
  const std::string clear_refs = absl::StrCat("/proc/", pid, "/clear_refs");
  absl::Status reset = (*child)->ResetPeakMemory();
  EXPECT_EQ(reset.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(reset.message(), absl::StrCat("open ", clear_refs, ": Permission denied"));
  EXPECT_EQ(env.opened, std::vector<std::string>{clear_refs});
  absl::StatusOr<PeakMemory> peak = (*child)->ReadPeakMemory();
  ASSERT_TRUE(peak.ok()) << peak.status();
  EXPECT_FALSE(peak->since_reset);
  EXPECT_EQ(peak->source, absl::StrCat("/proc/", pid, "/status VmHWM (lifetime peak since the process started)"));
}

TEST(ParseVmHwmBytesTest, ReadsKibAsBytes) {
  EXPECT_EQ(*ParseVmHwmBytes("Name:\tllama-server\nVmPeak:\t 8152 kB\nVmHWM:\t  1885436 kB\nVmRSS:\t 1 kB\n"),
            1885436ull * 1024);
  EXPECT_EQ(ParseVmHwmBytes("Name:\tkthreadd\n").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ParseVmHwmBytes("VmHWM:\t 12 MB\n").status().message(), "VmHWM line has no kB unit: '12 MB'");
  EXPECT_EQ(ParseVmHwmBytes("VmHWM:\t x kB\n").status().message(), "VmHWM value is not a number: 'x '");
}

TEST_F(ChildProcessTest, LogTailReturnsTheLastLines) {
  const std::string path = dir_.path() + "/server.log";
  std::ofstream(path) << "one\ntwo\nthree\n";
  EXPECT_EQ(*LogTail(path, 2), "two\nthree");
  EXPECT_EQ(*LogTail(path, 3), "one\ntwo\nthree");
  EXPECT_EQ(*LogTail(path, 10), "one\ntwo\nthree");
  EXPECT_EQ(*LogTail(path, 0), "");
  std::ofstream(path) << "no final newline\nlast";
  EXPECT_EQ(*LogTail(path, 1), "last");
  std::ofstream(path) << "";
  EXPECT_EQ(*LogTail(path, 5), "");
  EXPECT_EQ(LogTail(dir_.path() + "/missing.log", 5).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ChildProcessTest, LogTailOfAHugeLogReadsOnlyItsEnd) {
  const std::string path = dir_.path() + "/huge.log";
  {
    std::ofstream out(path);
    for (int i = 1; i <= 200000; ++i) out << "0.00.000.000 I slot print_timing: line " << i << "\n";
  }
  EXPECT_EQ(*LogTail(path, 3),
            "0.00.000.000 I slot print_timing: line 199998\n"
            "0.00.000.000 I slot print_timing: line 199999\n"
            "0.00.000.000 I slot print_timing: line 200000");
}

// The guarantee behind "no orphan server survives the agent": a helper (standing in for the
// agent) starts a child through this library and is SIGKILLed; the child must die with it.
TEST_F(ChildProcessTest, ChildDiesWhenItsParentIsKilled) {
  // Orphans are re-parented to this test process, so it can reap the grandchild and see how it
  // died.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const std::string pid_file = dir_.path() + "/grandchild.pid";
  auto helper = launcher_->Start(
      Options({PROCESS_TEST_HELPER, pid_file, "/bin/sleep", "1000"}, dir_.path() + "/helper.log"));
  ASSERT_TRUE(helper.ok()) << helper.status();
  ASSERT_TRUE(Eventually([&] { return !ReadText(pid_file).empty(); })) << ReadText(dir_.path() + "/helper.log");
  const pid_t grandchild = std::stoi(ReadText(pid_file));
  ASSERT_EQ(::kill(grandchild, 0), 0);

  ASSERT_EQ(::kill((*helper)->pid(), SIGKILL), 0);
  absl::StatusOr<ExitStatus> helper_status = (*helper)->Wait(absl::Seconds(10));
  ASSERT_TRUE(helper_status.ok());
  EXPECT_EQ(helper_status->signal, SIGKILL);

  int status = 0;
  pid_t reaped = 0;
  const bool died = Eventually([&] {
    reaped = ::waitpid(grandchild, &status, WNOHANG);
    return reaped == grandchild;
  });
  if (!died) {
    ::kill(grandchild, SIGKILL);
    ::waitpid(grandchild, &status, 0);
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  ASSERT_TRUE(died) << "the grandchild survived its parent";
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

}  // namespace
}  // namespace benchfleet::agent
