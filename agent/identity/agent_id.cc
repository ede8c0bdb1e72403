#include "agent/identity/agent_id.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/string_views.h"
#include "common/hashing.h"

namespace benchfleet::agent {

absl::StatusOr<std::string> LoadOrCreateAgentId(Env* env, const std::string& state_dir) {
  const std::string path = JoinPath(state_dir, kAgentIdFile);
  auto content = env->ReadFile(path);
  if (content.ok()) {
    const std::string id(absl::StripAsciiWhitespace(*content));
    if (!IsUuid(id)) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " does not hold a UUID (it holds '", id.substr(0, 64),
                       "'); restore it from a backup, or delete it to make this agent a new one"));
    }
    return absl::AsciiStrToLower(id);
  }
  if (!absl::IsNotFound(content.status())) return content.status();
  if (auto s = env->CreateDirs(state_dir); !s.ok()) return s;
  const std::string id = NewUuid();
  if (auto s = env->WriteFileAtomically(path, id + "\n"); !s.ok()) return s;
  return id;
}

}  // namespace benchfleet::agent
