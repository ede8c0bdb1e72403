// Child processes the agent starts and owns (the servers it measures): each runs in a process
// group of its own with stdout and stderr appended to a log file, and never outlives the agent.
// On Linux the child is started with PR_SET_PDEATHSIG(SIGKILL), so it dies with the thread that
// started it even when the agent itself is SIGKILLed; Terminate() and the destructor stop the
// whole group (SIGTERM, SIGKILL after a grace period) and reap it.
// Owner: agent/process. A Process is used by one thread at a time; a ProcessLauncher is
// thread-safe. Keep a Process on the thread that started it: PR_SET_PDEATHSIG fires when that
// thread ends, not the agent.
#ifndef BENCHFLEET_AGENT_PROCESS_CHILD_PROCESS_H_
#define BENCHFLEET_AGENT_PROCESS_CHILD_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/env.h"

namespace benchfleet::agent {

struct ProcessOptions {
  // argv[0] is the program's absolute path, executed as given (no PATH search).
  std::vector<std::string> argv;
  // Added to the agent's environment, replacing variables of the same name.
  std::map<std::string, std::string> env;
  // stdout and stderr are appended to this file (created 0644 when missing); empty: /dev/null.
  // stdin is always /dev/null.
  std::string log_path;
  // When set, stderr goes to this file instead (created 0644 when missing, appended to).
  std::string stderr_path;
  // When set, a cgroup's cgroup.procs file (see cgroup_memory.h): the child writes itself into it
  // before exec, so everything it runs is charged to that cgroup from the first byte. Start fails
  // (saying so) when it cannot.
  std::string cgroup_procs_path;
};

// How a child ended.
struct ExitStatus {
  int exit_code = 0;  // meaningful when signal == 0
  int signal = 0;     // the signal that killed it, 0 when it exited

  bool ok() const { return signal == 0 && exit_code == 0; }
  // Returns e.g. "exit code 1" or "killed by signal 9 (SIGKILL)".
  std::string ToString() const;
};

// The peak memory of a child so far, as the operating system reports it.
struct PeakMemory {
  uint64_t bytes = 0;
  // false: peak resident set size (Linux VmHWM); true: macOS lifetime peak phys_footprint, which
  // is what macOS keeps instead of a peak RSS.
  bool is_footprint = false;
  // True when the peak counts from the last ResetPeakMemory() (the run's own peak, when the reset
  // came just before the run); false when it is the lifetime peak since the process started (a
  // server's model load included).
  bool since_reset = false;
  // Where the figure comes from and over what span, e.g. "/proc/1234/status VmHWM (lifetime peak
  // since the process started)" or "/proc/1234/status VmHWM since a /proc/1234/clear_refs reset
  // before the run".
  std::string source;
};

// A started child. Destroying it while it runs kills its group (SIGKILL) and reaps it.
class Process {
 public:
  virtual ~Process() = default;

  virtual pid_t pid() const = 0;

  // The child's process group: its own pid (it is the group's leader).
  virtual pid_t process_group() const = 0;

  // Returns true while the child runs. Reaps it without blocking once it has exited.
  virtual bool Running() = 0;

  // Returns how the child ended, once it has been reaped (by Running, Wait or Terminate).
  virtual std::optional<ExitStatus> exit_status() const = 0;

  // Reads the child's peak memory so far. FAILED_PRECONDITION once it has exited (the kernel
  // forgets the figure with the process).
  virtual absl::StatusOr<PeakMemory> ReadPeakMemory() = 0;

  // Resets the peak that ReadPeakMemory reads to the child's current memory, so that a later read
  // is the peak since now (call it just before a run to get the run's own peak; later reads then
  // say since_reset). Linux: writes "5" to /proc/PID/clear_refs (VmHWM becomes the current RSS).
  // UNIMPLEMENTED where the platform cannot (macOS keeps only a lifetime peak), FAILED_PRECONDITION
  // once the child has exited, the write's error otherwise (e.g. PERMISSION_DENIED); after a
  // failure, reads stay lifetime peaks.
  virtual absl::Status ResetPeakMemory() {
    return absl::UnimplementedError("this process cannot reset its peak memory");
  }

  // Waits up to timeout for the child to exit on its own. DEADLINE_EXCEEDED when it still runs.
  virtual absl::StatusOr<ExitStatus> Wait(absl::Duration timeout) = 0;

  // Returns the largest peak resident set size among the child and the descendants it waited for
  // (wait4's ru_maxrss: the maximum of the tree, not the sum), in bytes, once the child has been
  // reaped; nullopt before, or where the platform does not say.
  virtual std::optional<uint64_t> reaped_max_rss_bytes() const { return std::nullopt; }

  // Sends SIGTERM to the group, waits up to grace for the child to exit, then sends SIGKILL to
  // the group and reaps the child. Idempotent: later calls return the same status.
  virtual ExitStatus Terminate(absl::Duration grace) = 0;
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;

  // Starts a child. NOT_FOUND when argv[0] does not exist, PERMISSION_DENIED when it cannot be
  // executed, INVALID_ARGUMENT for an empty or relative argv[0], INTERNAL for other failures;
  // the message names the program and the system's reason.
  virtual absl::StatusOr<std::unique_ptr<Process>> Start(const ProcessOptions& options) = 0;
};

// Returns the launcher of real (POSIX) child processes. clock paces the waits of Wait and
// Terminate (they wait on the kernel, so production passes SystemClock()); env reads
// /proc/PID/status. Both must outlive the launcher and its processes.
std::unique_ptr<ProcessLauncher> NewPosixProcessLauncher(Clock* clock, Env* env);

// Returns the VmHWM (peak resident set size) of a /proc/PID/status text in bytes; NOT_FOUND
// when the line is missing (a kernel thread, a zombie), INVALID_ARGUMENT when it is malformed.
absl::StatusOr<uint64_t> ParseVmHwmBytes(std::string_view proc_status);

// Resets the peak resident set size (VmHWM) of process pid to its current RSS, so that a later
// VmHWM read is the peak since now: writes "5" to /proc/PID/clear_refs through env (Linux 4.0 and
// later; the process must be this user's). UNIMPLEMENTED on other platforms (they keep only the
// lifetime peak).
absl::Status ResetPeakRss(Env* env, int64_t pid);

// Returns the last max_lines lines of the file at path (a final newline does not start a line),
// joined with '\n' and without a final newline. Reads only the file's last MiB, so a huge server
// log costs little (a line longer than that is cut at its start). NOT_FOUND when the file does
// not exist. Reads the file directly, not through an Env: Env has no ranged read.
absl::StatusOr<std::string> LogTail(const std::string& path, size_t max_lines);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_PROCESS_CHILD_PROCESS_H_
