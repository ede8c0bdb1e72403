#include "agent/probes/process_tree.h"

#include <unistd.h>

#include <algorithm>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/string_views.h"

namespace benchfleet::agent {

std::optional<int64_t> ParseProcStatParent(std::string_view stat) {
  // "1234 (name with) parens) S 1 ...": the name ends at the last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::vector<absl::string_view> fields =
      absl::StrSplit(ToAbsl(stat.substr(close + 1)), absl::ByAnyChar(" \n"), absl::SkipEmpty());
  int64_t parent = 0;
  if (fields.size() < 2 || !absl::SimpleAtoi(fields[1], &parent) || parent < 0) return std::nullopt;
  return parent;
}

bool IsInProcessTree(Env* env, int64_t pid, int64_t ancestor, const std::string& root) {
  for (int step = 0; step < 64 && pid > 0; ++step) {
    if (pid == ancestor) return true;
    auto stat = env->ReadFile(absl::StrCat(root, "/proc/", pid, "/stat"));
    if (!stat.ok()) return false;
    auto parent = ParseProcStatParent(*stat);
    if (!parent.has_value() || *parent == pid) return false;
    pid = *parent;
  }
  return false;
}

uint64_t ProcessTreeMemory::resident_bytes() const {
  uint64_t sum = 0;
  for (const ProcessMemory& p : processes) sum += p.resident_bytes;
  return sum;
}

uint64_t ProcessTreeMemory::largest_peak_bytes() const {
  uint64_t largest = 0;
  for (const ProcessMemory& p : processes) largest = std::max(largest, p.peak_bytes);
  return largest;
}

std::optional<ProcessMemory> ParseProcStatusMemory(std::string_view status) {
  std::optional<uint64_t> rss, hwm;
  for (absl::string_view line : absl::StrSplit(ToAbsl(status), '\n')) {
    std::optional<uint64_t>* out = absl::StartsWith(line, "VmRSS:")   ? &rss
                                   : absl::StartsWith(line, "VmHWM:") ? &hwm
                                                                      : nullptr;
    if (out == nullptr) continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line.substr(6), absl::ByAnyChar(" \t"), absl::SkipEmpty());
    uint64_t kib = 0;
    if (fields.size() != 2 || fields[1] != "kB" || !absl::SimpleAtoi(fields[0], &kib)) return std::nullopt;
    *out = kib * 1024;
  }
  if (!rss.has_value() || !hwm.has_value()) return std::nullopt;
  ProcessMemory memory;
  memory.resident_bytes = *rss;
  memory.peak_bytes = *hwm;
  return memory;
}

// macOS: process_tree_macos.cc.
#if !defined(__APPLE__)
std::function<bool(int64_t)> OwnProcessTree(Env* env) {
  const int64_t self = ::getpid();
  return [env, self](int64_t pid) {
#if defined(__linux__)
    return IsInProcessTree(env, pid, self);
#else
    return pid == self;
#endif
  };
}

absl::StatusOr<ProcessTreeMemory> ReadProcessTreeMemory(Env* env, int64_t root, const std::string& proc_root) {
  const std::string proc = proc_root + "/proc";
  auto read = [&](int64_t pid) -> std::optional<ProcessMemory> {
    auto status = env->ReadFile(absl::StrCat(proc, "/", pid, "/status"));
    if (!status.ok()) return std::nullopt;
    auto memory = ParseProcStatusMemory(*status);
    if (memory.has_value()) memory->pid = pid;
    return memory;
  };
  ProcessTreeMemory tree;
  tree.source = "/proc/PID/status VmRSS and VmHWM of the process and its descendants";
  std::optional<ProcessMemory> first = read(root);
  if (!first.has_value()) {
    return absl::NotFoundError(absl::StrCat("process ", root, ": cannot read its memory from ", proc, "/", root,
                                            "/status"));
  }
  tree.processes.push_back(*first);
  // Every process's parent, then the descendants of root in breadth-first order.
  auto entries = env->ListDir(proc);
  if (!entries.ok()) return entries.status();
  std::multimap<int64_t, int64_t> children;  // parent -> child
  for (const std::string& entry : *entries) {
    int64_t pid = 0;
    if (!absl::SimpleAtoi(entry, &pid) || pid == root) continue;
    auto stat = env->ReadFile(absl::StrCat(proc, "/", pid, "/stat"));
    if (!stat.ok()) continue;  // ended meanwhile
    if (auto parent = ParseProcStatParent(*stat); parent.has_value()) children.emplace(*parent, pid);
  }
  std::vector<int64_t> queue = {root};
  for (size_t i = 0; i < queue.size(); ++i) {
    auto [begin, end] = children.equal_range(queue[i]);
    for (auto it = begin; it != end; ++it) {
      queue.push_back(it->second);
      if (std::optional<ProcessMemory> memory = read(it->second); memory.has_value()) tree.processes.push_back(*memory);
    }
  }
  return tree;
}
#endif  // !__APPLE__

}  // namespace benchfleet::agent
