// Memory cgroups for the commands the agent runs: one fresh cgroup per command, so the kernel
// reports the peak memory of everything the command started (memory.peak on cgroup v2,
// memory.max_usage_in_bytes on v1) and every process left in it can be killed. The platform code
// (which hierarchy, which files) stays behind MemoryCgroups; the parsers are pure.
// Owner: agent/process. A MemoryCgroups is thread-safe; a MemoryCgroup is used by one thread.
#ifndef BENCHFLEET_AGENT_PROCESS_CGROUP_MEMORY_H_
#define BENCHFLEET_AGENT_PROCESS_CGROUP_MEMORY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace benchfleet::agent {

// Where this host's memory controller lives and where the agent's own cgroup is in it.
struct CgroupMemoryHierarchy {
  int version = 0;  // 1 or 2
  // The hierarchy's mount point, e.g. /sys/fs/cgroup/memory (v1) or /sys/fs/cgroup (v2).
  std::string mount_point;
  // The agent's own cgroup within the hierarchy, e.g. "/" or "/system.slice/agent.service".
  std::string own_path;
};

// Finds the memory controller from the texts of /proc/self/mounts and /proc/self/cgroup: a v1
// "cgroup" mount whose options list "memory" wins (a controller is bound to one hierarchy only);
// else a "cgroup2" mount. controllers_v2 is the text of that mount's cgroup.controllers (read by
// the caller), which must list "memory". NOT_FOUND saying why when there is none.
absl::StatusOr<CgroupMemoryHierarchy> FindMemoryHierarchy(std::string_view mounts, std::string_view self_cgroup,
                                                          std::string_view controllers_v2);

// Parses the content of memory.peak / memory.max_usage_in_bytes ("123456\n") in bytes;
// INVALID_ARGUMENT when it is not a decimal number.
absl::StatusOr<uint64_t> ParseCgroupBytes(std::string_view text);

// One cgroup holding one command. Destroying it kills what is left in it and removes it.
class MemoryCgroup {
 public:
  virtual ~MemoryCgroup() = default;

  // The cgroup.procs file a child writes itself into before exec (ProcessOptions::cgroup_procs_path).
  virtual std::string procs_path() const = 0;

  // Reads the peak memory of the cgroup since it was made, in bytes.
  virtual absl::StatusOr<uint64_t> PeakBytes() = 0;

  // SIGKILLs every process still in the cgroup (also those that left the command's process
  // group) until it is empty or a second passes. Returns how many were signalled.
  virtual int KillAll() = 0;

  // Kills what is left and removes the cgroup's folder. Idempotent.
  virtual absl::Status Remove() = 0;

  // For the record: e.g. "cgroup v1 /process_api/x/benchfleet-42-1".
  virtual std::string scope() const = 0;
  // The file the peak comes from, e.g. "/sys/fs/cgroup/memory/.../memory.max_usage_in_bytes".
  virtual std::string source() const = 0;
};

class MemoryCgroups {
 public:
  virtual ~MemoryCgroups() = default;

  // Makes an empty cgroup called name below the agent's own. PERMISSION_DENIED, FAILED_PRECONDITION
  // (v2: the memory controller cannot be enabled for children, memory.peak missing on kernels
  // before 5.19) or INTERNAL, saying why.
  virtual absl::StatusOr<std::unique_ptr<MemoryCgroup>> Create(std::string_view name) = 0;
};

// Returns cgroups in the given hierarchy. fs_root is prefixed to every path it touches ("" on a
// real host; a temporary folder in tests, which then play the kernel's part).
std::unique_ptr<MemoryCgroups> NewMemoryCgroups(CgroupMemoryHierarchy hierarchy, std::string fs_root = "");

// Finds this host's memory hierarchy from /proc/self/mounts and /proc/self/cgroup.
absl::StatusOr<CgroupMemoryHierarchy> DetectMemoryHierarchy();

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_PROCESS_CGROUP_MEMORY_H_
