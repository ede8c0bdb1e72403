// The comfyui section of a series spec, checked: the server URL (allow-listed), the API-format
// workflow (read here, parsed, every `set` target checked against it), the values to set, the
// seeds, the cache-trap options and the deadlines. Owner: the ComfyUI backend. Plain data and a
// pure function (it reads the workflow file through the Env); thread-safe.
#ifndef BENCHFLEET_AGENT_BACKENDS_COMFYUI_COMFYUI_CONFIG_H_
#define BENCHFLEET_AGENT_BACKENDS_COMFYUI_COMFYUI_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/backends/backend.h"
#include "agent/backends/comfyui/graph.h"
#include "agent/config/allow_list.h"
#include "common/env.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet::agent::comfyui {

// The names `set` may use, each with the section key that gives its value (seed: `seeds`).
inline constexpr const char* kSettableNames[] = {"seed", "steps", "prompt", "width", "height"};

struct ComfyUiConfig {
  std::string url;            // base URL without a final '/', e.g. http://127.0.0.1:8188
  std::string workflow_path;  // as given
  Graph graph;                // the workflow file: its text, verbatim, and its graph
  std::vector<SetTarget> set;  // in the spec's order
  std::vector<uint64_t> seeds;
  std::optional<int64_t> steps;
  std::optional<int64_t> width;
  std::optional<int64_t> height;
  std::optional<std::string> prompt;
  // Every run gets inputs no earlier run had (a fresh seed), so no cache can serve it.
  bool distinct_runs = false;
  // A run whose images equal an earlier run's of the same inputs and that took less than this
  // is flagged CACHE_HIT.
  absl::Duration cache_hit_threshold = absl::Milliseconds(100);
  // How long the cold run waits after POST /free before its prompt: ComfyUI applies /free only
  // when its worker's queue wait ends, so a prompt sent at once can still be served from cache.
  absl::Duration free_settle = absl::Seconds(2);
  // The deadline of one run, from POST /prompt to execution_success.
  absl::Duration run_timeout = absl::Minutes(10);
  // The deadline of every other request (/system_stats, /free, /view, /history).
  absl::Duration request_timeout = absl::Seconds(30);
  std::optional<int64_t> pid;  // ComfyUI's process, for PROCESS_PEAK_RSS

  bool sets(std::string_view name) const {
    for (const SetTarget& t : set) {
      if (t.name == name) return true;
    }
    return false;
  }
};

// Parses and checks the section (the mapping under `comfyui:`), reading the workflow through
// env. Errors:
//   INVALID_ARGUMENT   "line N: comfyui.<key> ..." for an unknown key, a wrong type or value, a
//                      missing url/workflow, a set name without its value (set.steps without
//                      steps), a value without a set target, a node or input not in the workflow,
//                      or a workflow that is not API-format JSON ("comfyui.workflow <path>: ...")
//   NOT_FOUND          the workflow file does not exist
//   PERMISSION_DENIED  url outside the allow-list, or (author kCoordinator) a workflow outside
//                      allow.workflow_dirs (the AllowList's message, with what it lists)
absl::StatusOr<ComfyUiConfig> ParseComfyUiSection(const YAML::Node& section, const AllowList& allow, Env* env,
                                                  SpecAuthor author = SpecAuthor::kOperator);

}  // namespace benchfleet::agent::comfyui

#endif  // BENCHFLEET_AGENT_BACKENDS_COMFYUI_COMFYUI_CONFIG_H_
