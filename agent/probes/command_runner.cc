#include "agent/probes/command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace benchfleet::agent {
namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// pipe(2) with both ends close-on-exec (macOS has no pipe2).
bool Pipe(int fds[2]) {
  if (::pipe(fds) != 0) return false;
  ::fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  ::fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  return true;
}

class PosixCommandRunner : public CommandRunner {
 public:
  explicit PosixCommandRunner(std::string search_path) : search_path_(std::move(search_path)) {}

  absl::StatusOr<CommandOutput> Run(const std::vector<std::string>& argv, absl::Duration timeout) override {
    if (argv.empty() || argv[0].empty()) return absl::InvalidArgumentError("no program to run");
    std::string program;
    if (argv[0].find('/') != std::string::npos) {
      if (!IsExecutableFile(argv[0])) return absl::NotFoundError(absl::StrCat(argv[0], ": not found or not executable"));
      program = argv[0];
    } else {
      for (absl::string_view dir : absl::StrSplit(search_path_, ':', absl::SkipEmpty())) {
        std::string candidate = absl::StrCat(dir, "/", argv[0]);
        if (IsExecutableFile(candidate)) {
          program = std::move(candidate);
          break;
        }
      }
      if (program.empty()) return absl::NotFoundError(absl::StrCat(argv[0], ": not found on PATH"));
    }

    int out_pipe[2], err_pipe[2];
    if (!Pipe(out_pipe)) return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
    if (!Pipe(err_pipe)) {
      ::close(out_pipe[0]);
      ::close(out_pipe[1]);
      return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
    }
    // Everything the child needs is prepared before fork: only async-signal-safe calls after.
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const long open_max = ::sysconf(_SC_OPEN_MAX);
    const int max_fd = open_max > 0 && open_max < 65536 ? static_cast<int>(open_max) : 65536;
    const pid_t pid = ::fork();
    if (pid < 0) {
      for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
      return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
    }
    if (pid == 0) {
      ::setpgid(0, 0);
      const int null_fd = ::open("/dev/null", O_RDONLY);
      if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
      ::dup2(out_pipe[1], STDOUT_FILENO);
      ::dup2(err_pipe[1], STDERR_FILENO);
      // The tool gets none of the agent's other descriptors (sockets, the outbox's files).
      for (int fd = STDERR_FILENO + 1; fd < max_fd; ++fd) ::close(fd);
      ::execv(program.c_str(), args.data());
      _exit(127);
    }
    ::setpgid(pid, pid);  // also from the parent, so the kill below never misses the group
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);

    CommandOutput output;
    const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoMilliseconds(timeout);
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    std::string* sinks[2] = {&output.stdout_text, &output.stderr_text};
    int open_fds = 2;
    bool timed_out = false;
    char buffer[65536];
    while (open_fds > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        break;
      }
      const int ready = ::poll(fds, 2, static_cast<int>(left.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) break;
      for (int i = 0; i < 2; ++i) {
        if (fds[i].fd < 0 || fds[i].revents == 0) continue;
        const ssize_t n = ::read(fds[i].fd, buffer, sizeof(buffer));
        if (n > 0) {
          const size_t room = kMaxCommandOutput - std::min(kMaxCommandOutput, sinks[i]->size());
          sinks[i]->append(buffer, std::min(room, static_cast<size_t>(n)));
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
          ::close(fds[i].fd);
          fds[i].fd = -1;
          --open_fds;
        }
      }
    }
    for (const pollfd& p : fds) {
      if (p.fd >= 0) ::close(p.fd);
    }
    if (timed_out) ::kill(-pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) {
      return absl::DeadlineExceededError(
          absl::StrCat(argv[0], " did not finish within ", absl::FormatDuration(timeout), " (killed)"));
    }
    if (WIFEXITED(status)) {
      output.exit_code = WEXITSTATUS(status);
      if (output.exit_code == 127 && output.stdout_text.empty() && output.stderr_text.empty()) {
        return absl::InternalError(absl::StrCat(argv[0], ": could not be executed"));
      }
    } else {
      output.exit_code = -1;
    }
    return output;
  }

 private:
  const std::string search_path_;
};

}  // namespace

std::unique_ptr<CommandRunner> NewPosixCommandRunner(const char* search_path) {
  if (search_path == nullptr) search_path = std::getenv("PATH");
  return std::make_unique<PosixCommandRunner>(search_path == nullptr ? "/usr/bin:/bin" : search_path);
}

std::string DescribeFailure(const std::vector<std::string>& argv, const CommandOutput& output) {
  absl::string_view text = output.stderr_text.empty() ? output.stdout_text : output.stderr_text;
  text = absl::StripAsciiWhitespace(text);
  const absl::string_view first_line = text.substr(0, text.find('\n'));
  const std::string how = output.exit_code < 0 ? std::string("was killed by a signal")
                                                : absl::StrCat("exited with code ", output.exit_code);
  return absl::StrCat(absl::StrJoin(argv, " "), " ", how, first_line.empty() ? "" : ": ",
                      first_line.substr(0, 200));
}

}  // namespace benchfleet::agent
