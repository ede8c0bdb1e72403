// The process tree, platform-neutral: whether a process belongs to the agent's own tree (the
// agent and what it started: the measured server, a workflow command), so that the sampler counts
// only the others as contention, and the memory of a process and its descendants. The rest of the
// agent calls these and never reads /proc or libproc itself. The implementation is chosen at
// compile time: Linux reads /proc through the Env (process_tree.cc); macOS has no /proc and uses
// proc_pidinfo, proc_listchildpids and proc_pid_rusage (process_tree_macos.cc, not compiled or run
// on the Linux build machine: see README.md here). Thread-safe when the Env is.
#ifndef BENCHFLEET_AGENT_PROBES_PROCESS_TREE_H_
#define BENCHFLEET_AGENT_PROBES_PROCESS_TREE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

#include "common/env.h"

namespace benchfleet::agent {

// Returns the parent pid of a /proc/PID/stat text (the field after the command name, which is
// in parentheses and may itself hold spaces and parentheses); nullopt when malformed.
std::optional<int64_t> ParseProcStatParent(std::string_view stat);

// True when pid is ancestor or one of its descendants, walking parents through
// root + "/proc/PID/stat" (at most 64 steps). False when pid's stat cannot be read (a process of
// another pid namespace, one that ended).
bool IsInProcessTree(Env* env, int64_t pid, int64_t ancestor, const std::string& root = "");

// Returns the predicate "pid is this agent process or one of its descendants" (Linux: parents
// from /proc/PID/stat; macOS: proc_pidinfo PROC_PIDTBSDINFO pbi_ppid).
std::function<bool(int64_t)> OwnProcessTree(Env* env);

// One process's memory, in bytes.
struct ProcessMemory {
  int64_t pid = 0;
  uint64_t resident_bytes = 0;  // now: Linux VmRSS, macOS ri_resident_size
  uint64_t peak_bytes = 0;      // its own peak: Linux VmHWM, macOS ri_lifetime_max_phys_footprint
  // macOS ri_phys_footprint (Activity Monitor's "Memory"); Linux has no such figure: 0.
  uint64_t footprint_bytes = 0;
};

// The memory of a process and its descendants, read at one moment.
struct ProcessTreeMemory {
  std::vector<ProcessMemory> processes;  // the root first
  std::string source;                    // what the figures come from, for MemoryFigure.source

  // Returns the sum of the processes' resident memory now.
  uint64_t resident_bytes() const;
  // Returns the largest of the processes' own peaks: not the tree's peak (the processes peaked
  // at different times, so their peaks do not add up), the same meaning as wait4's ru_maxrss.
  uint64_t largest_peak_bytes() const;
};

// Parses the VmRSS and VmHWM lines of /proc/PID/status ("VmHWM:\t  123456 kB"); nullopt when
// either is missing (a kernel thread, a zombie). pid is left 0.
std::optional<ProcessMemory> ParseProcStatusMemory(std::string_view status);

// Reads the memory of root and its descendants now. Linux: the processes of proc_root + "/proc"
// whose parent chain leads to root, each one's /proc/PID/status; macOS: proc_listchildpids from
// root down and proc_pid_rusage(RUSAGE_INFO_V4) of each (proc_root unused). NOT_FOUND when root
// cannot be read; a descendant that ends meanwhile is left out.
absl::StatusOr<ProcessTreeMemory> ReadProcessTreeMemory(Env* env, int64_t root, const std::string& proc_root = "");

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_PROBES_PROCESS_TREE_H_
