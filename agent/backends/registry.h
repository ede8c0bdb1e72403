// The registry of bench backends: FindBackend and BackendNames (backend.h) over what the backend
// folders declare with benchfleet_add_backend (agent/backends/CMakeLists.txt), which generates
// RegisteredBackends for each registry library it builds. Read-only after start-up; thread-safe.
#ifndef BENCHFLEET_AGENT_BACKENDS_REGISTRY_H_
#define BENCHFLEET_AGENT_BACKENDS_REGISTRY_H_

#include <map>
#include <string>
#include <string_view>

#include "agent/backends/backend.h"

namespace benchfleet::agent {

struct RegisteredBackend {
  BackendFactory factory;
  // The backend's folder, relative to the source tree: "agent/backends/llama_server". Its
  // section.schema.json, figures.h and README.md are there.
  std::string_view folder;
};

// Every registered backend by its name in specs. Generated.
const std::map<std::string, RegisteredBackend>& RegisteredBackends();

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_BACKENDS_REGISTRY_H_
