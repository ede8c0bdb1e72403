// FindBackend and BackendNames over the generated RegisteredBackends (registry.h).
#include "agent/backends/registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace benchfleet::agent {

absl::StatusOr<BackendFactory> FindBackend(const std::string& name) {
  auto it = RegisteredBackends().find(name);
  if (it == RegisteredBackends().end()) {
    return absl::NotFoundError(absl::StrCat("unknown backend \"", name, "\"; known backends: ",
                                            absl::StrJoin(BackendNames(), ", ")));
  }
  return it->second.factory;
}

std::vector<std::string> BackendNames() {
  std::vector<std::string> names;
  for (const auto& [name, backend] : RegisteredBackends()) names.push_back(name);
  return names;
}

}  // namespace benchfleet::agent
