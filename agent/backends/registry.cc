// The registry of bench backends: one line per backend.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/backends/backend.h"
#include "agent/backends/comfyui/comfyui_backend.h"
#include "agent/backends/llama_server/llama_server_backend.h"
#include "agent/backends/openai/openai_backend.h"
#include "agent/backends/workflow/workflow_backend.h"

namespace benchfleet::agent {
namespace {

const std::map<std::string, BackendFactory>& Registry() {
  static const auto* registry = new std::map<std::string, BackendFactory>{
      {"comfyui", &NewComfyUiBackend},
      {"llama-server", &NewLlamaServerBackend},
      {"openai", &NewOpenAiBackend},
      {"workflow", &NewWorkflowBackend},
  };
  return *registry;
}

}  // namespace

absl::StatusOr<BackendFactory> FindBackend(const std::string& name) {
  auto it = Registry().find(name);
  if (it == Registry().end()) {
    return absl::NotFoundError(absl::StrCat("unknown backend \"", name, "\"; known backends: ",
                                            absl::StrJoin(BackendNames(), ", ")));
  }
  return it->second;
}

std::vector<std::string> BackendNames() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : Registry()) names.push_back(name);
  return names;
}

}  // namespace benchfleet::agent
