#include "agent/process/child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif
#if defined(__APPLE__)
#include <libproc.h>
#include <sys/resource.h>
#endif

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/string_views.h"

extern char** environ;

namespace benchfleet::agent {
namespace {

// How often Wait and Terminate look whether the child has exited.
constexpr absl::Duration kPollInterval = absl::Milliseconds(10);

// LogTail reads at most this much of a file's end.
constexpr off_t kTailWindowBytes = 1 << 20;

std::string SignalName(int signo) {
  switch (signo) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGSEGV: return "SIGSEGV";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    default: return "";
  }
}

ExitStatus FromWaitStatus(int status) {
  ExitStatus out;
  if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    out.exit_code = WEXITSTATUS(status);
  }
  return out;
}

absl::Status ErrnoToStatus(int err, std::string message) {
  absl::StrAppend(&message, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    default:
      return absl::InternalError(message);
  }
}

// Closes a file descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

class PosixProcess : public Process {
 public:
  PosixProcess(pid_t pid, Clock* clock, Env* env) : pid_(pid), clock_(clock), env_(env) {}

  ~PosixProcess() override {
    if (!status_.has_value()) {
      ::killpg(pid_, SIGKILL);
      Reap(/*block=*/true);
    }
  }

  pid_t pid() const override { return pid_; }
  pid_t process_group() const override { return pid_; }

  bool Running() override {
    if (status_.has_value()) return false;
    return !Reap(/*block=*/false);
  }

  std::optional<ExitStatus> exit_status() const override { return status_; }
  std::optional<uint64_t> reaped_max_rss_bytes() const override { return max_rss_bytes_; }

  absl::StatusOr<PeakMemory> ReadPeakMemory() override {
    if (!Running()) {
      return absl::FailedPreconditionError(
          absl::StrCat("process ", pid_, " has exited (", status_->ToString(), "); its peak memory is gone"));
    }
#if defined(__APPLE__)
    rusage_info_v4 info;
    if (::proc_pid_rusage(pid_, RUSAGE_INFO_V4, reinterpret_cast<rusage_info_t*>(&info)) != 0) {
      return ErrnoToStatus(errno, absl::StrCat("proc_pid_rusage(", pid_, ")"));
    }
    return PeakMemory{info.ri_lifetime_max_phys_footprint, /*is_footprint=*/true, /*since_reset=*/false,
                      absl::StrCat("proc_pid_rusage(", pid_,
                                   ").ri_lifetime_max_phys_footprint (lifetime peak since the process started)")};
#else
    const std::string path = absl::StrCat("/proc/", pid_, "/status");
    absl::StatusOr<std::string> text = env_->ReadFile(path);
    if (!text.ok()) return text.status();
    absl::StatusOr<uint64_t> bytes = ParseVmHwmBytes(*text);
    if (!bytes.ok()) {
      return absl::Status(bytes.status().code(), absl::StrCat(path, ": ", bytes.status().message()));
    }
    if (peak_reset_) {
      return PeakMemory{*bytes, /*is_footprint=*/false, /*since_reset=*/true,
                        absl::StrCat(path, " VmHWM since a /proc/", pid_, "/clear_refs reset before the run")};
    }
    return PeakMemory{*bytes, /*is_footprint=*/false, /*since_reset=*/false,
                      absl::StrCat(path, " VmHWM (lifetime peak since the process started)")};
#endif
  }

  absl::Status ResetPeakMemory() override {
    if (!Running()) {
      return absl::FailedPreconditionError(
          absl::StrCat("process ", pid_, " has exited (", status_->ToString(), "); its peak memory cannot be reset"));
    }
    absl::Status reset = ResetPeakRss(env_, pid_);
    if (reset.ok()) peak_reset_ = true;
    return reset;
  }

  absl::StatusOr<ExitStatus> Wait(absl::Duration timeout) override {
    const absl::Duration deadline = clock_->Monotonic() + timeout;
    while (Running()) {
      if (clock_->Monotonic() >= deadline) {
        return absl::DeadlineExceededError(
            absl::StrCat("process ", pid_, " still runs after ", absl::FormatDuration(timeout)));
      }
      clock_->SleepFor(kPollInterval);
    }
    return *status_;
  }

  ExitStatus Terminate(absl::Duration grace) override {
    if (status_.has_value()) return *status_;
    ::killpg(pid_, SIGTERM);
    const absl::Duration deadline = clock_->Monotonic() + grace;
    while (Running() && clock_->Monotonic() < deadline) clock_->SleepFor(kPollInterval);
    if (!status_.has_value()) {
      ::killpg(pid_, SIGKILL);
      Reap(/*block=*/true);
    }
    return *status_;
  }

 private:
  // Reaps the child when it has exited (or, with block, once it exits). Returns true when it is
  // reaped. Right after reaping, the rest of its group (helpers it started) is killed: the group
  // id cannot have been reused while the leader was a zombie.
  bool Reap(bool block) {
    int status = 0;
    pid_t r;
    struct rusage usage;
    std::memset(&usage, 0, sizeof(usage));
    do {
      r = ::wait4(pid_, &status, block ? 0 : WNOHANG, &usage);
    } while (r < 0 && errno == EINTR);
    if (r == 0) return false;
    if (r == pid_) {
      status_ = FromWaitStatus(status);
#if defined(__APPLE__)
      max_rss_bytes_ = static_cast<uint64_t>(usage.ru_maxrss);  // bytes on macOS
#else
      max_rss_bytes_ = static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // KiB on Linux
#endif
    } else {
      // ECHILD: someone else reaped it (a SIGCHLD handler set to SIG_IGN); the status is lost.
      status_ = ExitStatus{.exit_code = -1};
    }
    ::killpg(pid_, SIGKILL);
    return true;
  }

  const pid_t pid_;
  Clock* const clock_;
  Env* const env_;
  [[maybe_unused]] bool peak_reset_ = false;  // a ResetPeakMemory succeeded: reads are peaks since the reset
  std::optional<ExitStatus> status_;
  std::optional<uint64_t> max_rss_bytes_;
};

// What the child reports through the error pipe when it cannot get to exec.
struct ChildError {
  int stage = 0;  // kStageExec or kStageCgroup
  int err = 0;
};
constexpr int kStageExec = 1;
constexpr int kStageCgroup = 2;

class PosixProcessLauncher : public ProcessLauncher {
 public:
  PosixProcessLauncher(Clock* clock, Env* env) : clock_(clock), env_(env) {}

  absl::StatusOr<std::unique_ptr<Process>> Start(const ProcessOptions& options) override {
    if (options.argv.empty() || options.argv[0].empty() || options.argv[0][0] != '/') {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot start '", options.argv.empty() ? "" : options.argv[0], "': the program must be an absolute path"));
    }
    const std::string& program = options.argv[0];

    // Everything the child needs is prepared here: between fork and exec only async-signal-safe
    // calls are allowed (the agent has other threads).
    std::vector<char*> argv;
    for (const std::string& arg : options.argv) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    std::vector<std::string> env_strings;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      std::string_view entry(*e);
      const std::string name(entry.substr(0, entry.find('=')));
      if (options.env.count(name) == 0) env_strings.emplace_back(entry);
    }
    for (const auto& [name, value] : options.env) env_strings.push_back(absl::StrCat(name, "=", value));
    std::vector<char*> envp;
    for (std::string& entry : env_strings) envp.push_back(entry.data());
    envp.push_back(nullptr);

    Fd stdin_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (stdin_fd.get() < 0) return ErrnoToStatus(errno, "cannot open /dev/null");
    const std::string log_path = options.log_path.empty() ? "/dev/null" : options.log_path;
    Fd log_fd(::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    if (log_fd.get() < 0) return ErrnoToStatus(errno, absl::StrCat("cannot open the log file ", log_path));
    Fd stderr_fd(options.stderr_path.empty()
                     ? ::fcntl(log_fd.get(), F_DUPFD_CLOEXEC, 0)
                     : ::open(options.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    if (stderr_fd.get() < 0) {
      return ErrnoToStatus(errno, absl::StrCat("cannot open the log file ", options.stderr_path));
    }
    Fd cgroup_fd(options.cgroup_procs_path.empty() ? -1
                                                   : ::open(options.cgroup_procs_path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!options.cgroup_procs_path.empty() && cgroup_fd.get() < 0) {
      return ErrnoToStatus(errno, absl::StrCat("cannot open ", options.cgroup_procs_path));
    }
    int pipe_fds[2];
#if defined(__linux__)
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return ErrnoToStatus(errno, "cannot create a pipe");
#else
    // No pipe2 on macOS; another thread's fork in between would only leak the pipe, not break it.
    if (::pipe(pipe_fds) != 0) return ErrnoToStatus(errno, "cannot create a pipe");
    ::fcntl(pipe_fds[0], F_SETFD, FD_CLOEXEC);
    ::fcntl(pipe_fds[1], F_SETFD, FD_CLOEXEC);
#endif
    Fd error_read(pipe_fds[0]);
    Fd error_write(pipe_fds[1]);
    const pid_t parent = ::getpid();

    const pid_t pid = ::fork();
    if (pid < 0) return ErrnoToStatus(errno, absl::StrCat("cannot start ", program, ": fork"));
    if (pid == 0) {
      ChildAfterFork(parent, stdin_fd.get(), log_fd.get(), stderr_fd.get(), cgroup_fd.get(), error_write.get(),
                     argv.data(), envp.data());
    }

    // Both sides set the group, so it is in place whichever runs first (EACCES once the child
    // has exec'd is fine: it did it itself).
    ::setpgid(pid, pid);
    error_write.Reset();
    ChildError child_error;
    ssize_t n;
    do {
      n = ::read(error_read.get(), &child_error, sizeof(child_error));
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (child_error.stage == kStageCgroup) {
        return ErrnoToStatus(child_error.err, absl::StrCat("cannot start ", program, ": cannot join the cgroup (",
                                                           options.cgroup_procs_path, ")"));
      }
      return ErrnoToStatus(child_error.err, absl::StrCat("cannot start ", program));
    }
    return std::unique_ptr<Process>(new PosixProcess(pid, clock_, env_));
  }

 private:
  // Runs in the child between fork and exec; never returns.
  [[noreturn]] static void ChildAfterFork(pid_t parent, int stdin_fd, int log_fd, int stderr_fd, int cgroup_fd,
                                          int error_fd, char** argv, char** envp) {
    ::setpgid(0, 0);
    // "0" is "the writing process" to cgroup.procs, on v1 and v2 alike.
    if (cgroup_fd >= 0 && ::write(cgroup_fd, "0", 1) != 1) {
      const ChildError e{kStageCgroup, errno};
      ssize_t ignored = ::write(error_fd, &e, sizeof(e));
      (void)ignored;
      ::_exit(127);
    }
#if defined(__linux__)
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // The parent may have died before prctl: then nobody would ever kill this child.
    if (::getppid() != parent) ::_exit(127);
#endif
    ::dup2(stdin_fd, STDIN_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(stderr_fd, STDERR_FILENO);
#if defined(__linux__) && defined(CLOSE_RANGE_CLOEXEC)
    // Descriptors the agent opened without O_CLOEXEC (sockets of other libraries) stay out of
    // the server. CLOEXEC rather than close: error_fd must stay open until exec.
    ::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
#endif
    // Dispositions and the mask are inherited through exec: give the server the defaults.
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (int signo = 1; signo < NSIG; ++signo) ::sigaction(signo, &dfl, nullptr);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(argv[0], argv, envp);
    const ChildError e{kStageExec, errno};
    ssize_t ignored = ::write(error_fd, &e, sizeof(e));
    (void)ignored;
    ::_exit(127);
  }

  Clock* const clock_;
  Env* const env_;
};

}  // namespace

std::string ExitStatus::ToString() const {
  if (signal == 0) return absl::StrCat("exit code ", exit_code);
  const std::string name = SignalName(signal);
  return name.empty() ? absl::StrCat("killed by signal ", signal)
                      : absl::StrCat("killed by signal ", signal, " (", name, ")");
}

std::unique_ptr<ProcessLauncher> NewPosixProcessLauncher(Clock* clock, Env* env) {
  return std::make_unique<PosixProcessLauncher>(clock, env);
}

absl::Status ResetPeakRss(Env* env, int64_t pid) {
#if defined(__linux__)
  // "5" resets the peak RSS (VmHWM) to the current RSS; it leaves the page tables' soft-dirty and
  // referenced bits alone, so the process's pages are not touched.
  const std::string path = absl::StrCat("/proc/", pid, "/clear_refs");
  absl::StatusOr<std::unique_ptr<WritableFile>> file = env->NewAppendableFile(path);
  if (!file.ok()) return file.status();
  absl::Status written = (*file)->Append("5");
  absl::Status closed = (*file)->Close();
  return written.ok() ? closed : written;
#else
  return absl::UnimplementedError(absl::StrCat(
      "process ", pid, ": this platform keeps only the lifetime peak (no clear_refs); its reads stay lifetime peaks"));
#endif
}

absl::StatusOr<uint64_t> ParseVmHwmBytes(std::string_view proc_status) {
  for (absl::string_view line : absl::StrSplit(ToAbsl(proc_status), '\n')) {
    if (!absl::ConsumePrefix(&line, "VmHWM:")) continue;
    line = absl::StripAsciiWhitespace(line);
    // The kernel always prints kB (KiB).
    if (!absl::ConsumeSuffix(&line, "kB")) {
      return absl::InvalidArgumentError(absl::StrCat("VmHWM line has no kB unit: '", line, "'"));
    }
    uint64_t kib = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &kib)) {
      return absl::InvalidArgumentError(absl::StrCat("VmHWM value is not a number: '", line, "'"));
    }
    return kib * 1024;
  }
  return absl::NotFoundError("no VmHWM line");
}

absl::StatusOr<std::string> LogTail(const std::string& path, size_t max_lines) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoToStatus(errno, absl::StrCat("cannot open ", path));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoToStatus(errno, absl::StrCat("cannot stat ", path));
  const off_t start = std::max<off_t>(0, st.st_size - kTailWindowBytes);
  std::string window(static_cast<size_t>(st.st_size - start), '\0');
  size_t got = 0;
  while (got < window.size()) {
    const ssize_t n = ::pread(fd.get(), window.data() + got, window.size() - got, start + static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoToStatus(errno, absl::StrCat("cannot read ", path));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  window.resize(got);
  if (max_lines == 0) return std::string();

  std::string_view text(window);
  if (start > 0) {
    // The window began inside a line: that line is incomplete.
    const size_t nl = text.find('\n');
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  }
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (text.empty()) return std::string();
  // Walk back over max_lines newlines; the tail starts after the last one found.
  size_t begin = 0;
  size_t pos = text.size();
  for (size_t taken = 0; taken < max_lines; ++taken) {
    const size_t nl = pos == 0 ? std::string_view::npos : text.rfind('\n', pos - 1);
    if (nl == std::string_view::npos) {
      begin = 0;
      break;
    }
    begin = nl + 1;
    pos = nl;
  }
  return std::string(text.substr(begin));
}

}  // namespace benchfleet::agent
