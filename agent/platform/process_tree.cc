#include "agent/platform/process_tree.h"

#include <unistd.h>

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

}  // namespace benchfleet::agent
