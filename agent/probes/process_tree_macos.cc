// macOS implementations of process_tree.h: there is no /proc, so parents come from
// proc_pidinfo(PROC_PIDTBSDINFO), children from proc_listchildpids and memory from
// proc_pid_rusage(RUSAGE_INFO_V4). NOT VERIFIED: the Linux build machine neither compiles nor runs
// this file (see README.md here); it follows the libproc.h and sys/resource.h declarations.
#include "agent/probes/process_tree.h"

#if defined(__APPLE__)

#include <libproc.h>
#include <sys/proc_info.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace benchfleet::agent {
namespace {

// Returns pid's parent, nullopt when pid cannot be read (ended, or not ours to see).
std::optional<int64_t> ParentOf(int64_t pid) {
  struct proc_bsdinfo info = {};
  const int size = ::proc_pidinfo(static_cast<pid_t>(pid), PROC_PIDTBSDINFO, 0, &info, sizeof(info));
  if (size != static_cast<int>(sizeof(info))) return std::nullopt;
  return static_cast<int64_t>(info.pbi_ppid);
}

// Returns pid's direct children. proc_listchildpids answers the number of pids written in recent
// libproc releases and a number of bytes in some older ones: the buffer is zeroed first and only
// positive pids are kept, so either reading is safe.
std::vector<int64_t> ChildrenOf(int64_t pid) {
  size_t capacity = 256;
  for (int attempt = 0; attempt < 4; ++attempt, capacity *= 4) {
    std::vector<pid_t> pids(capacity, 0);
    const int n = ::proc_listchildpids(static_cast<pid_t>(pid), pids.data(), static_cast<int>(capacity * sizeof(pid_t)));
    if (n <= 0) return {};
    const size_t count = std::min(static_cast<size_t>(n), capacity);
    if (count == capacity && attempt < 3) continue;  // a full buffer may mean more: ask again
    std::vector<int64_t> children;
    for (size_t i = 0; i < count; ++i) {
      if (pids[i] > 0) children.push_back(pids[i]);
    }
    return children;
  }
  return {};
}

std::optional<ProcessMemory> MemoryOf(int64_t pid) {
  rusage_info_v4 info = {};
  if (::proc_pid_rusage(static_cast<pid_t>(pid), RUSAGE_INFO_V4, reinterpret_cast<rusage_info_t*>(&info)) != 0) {
    return std::nullopt;
  }
  ProcessMemory memory;
  memory.pid = pid;
  memory.resident_bytes = info.ri_resident_size;
  memory.footprint_bytes = info.ri_phys_footprint;
  memory.peak_bytes = info.ri_lifetime_max_phys_footprint;
  return memory;
}

}  // namespace

std::function<bool(int64_t)> OwnProcessTree(Env* env) {
  (void)env;  // no /proc to read through it
  const int64_t self = ::getpid();
  return [self](int64_t pid) {
    for (int step = 0; step < 64 && pid > 0; ++step) {
      if (pid == self) return true;
      std::optional<int64_t> parent = ParentOf(pid);
      if (!parent.has_value() || *parent == pid) return false;
      pid = *parent;
    }
    return false;
  };
}

absl::StatusOr<ProcessTreeMemory> ReadProcessTreeMemory(Env* env, int64_t root, const std::string& proc_root) {
  (void)env;
  (void)proc_root;
  ProcessTreeMemory tree;
  tree.source = "proc_pid_rusage(RUSAGE_INFO_V4) ri_resident_size and ri_lifetime_max_phys_footprint of the process "
                "and its descendants (proc_listchildpids)";
  std::optional<ProcessMemory> first = MemoryOf(root);
  if (!first.has_value()) {
    return absl::NotFoundError(absl::StrCat("process ", root, ": proc_pid_rusage failed"));
  }
  tree.processes.push_back(*first);
  std::vector<int64_t> queue = {root};
  for (size_t i = 0; i < queue.size() && queue.size() < 100000; ++i) {
    for (int64_t child : ChildrenOf(queue[i])) {
      queue.push_back(child);
      if (std::optional<ProcessMemory> memory = MemoryOf(child); memory.has_value()) tree.processes.push_back(*memory);
    }
  }
  return tree;
}

}  // namespace benchfleet::agent

#endif  // __APPLE__
