// The ComfyUI backend: measures txt2img (or any API-format workflow) on a ComfyUI server that
// already runs. Per session it reads /system_stats (versions, devices; "SIMULATED" marks the
// simulator); per run it sets the run's values in the workflow (seed cycling through `seeds`),
// POSTs /prompt, follows the run on the websocket /ws (or polls /history when the websocket is
// unavailable), fetches every output image through /view and records its sha256 and size, the
// cached and executed nodes, the server's own execution time, device memory before and after,
// and flags CACHE_HIT (see cache_trap.h). A cold run starts with POST /free. See README.md here.
// Owner: the ComfyUI backend. Used from one thread at a time (the runner's).
#ifndef BENCHFLEET_AGENT_BACKENDS_COMFYUI_COMFYUI_BACKEND_H_
#define BENCHFLEET_AGENT_BACKENDS_COMFYUI_COMFYUI_BACKEND_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/backends/backend.h"
#include "agent/http/http_client.h"
#include "agent/http/websocket_client.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet::agent {

// Builds the backend from the `comfyui:` section (see comfyui/comfyui_config.h for the keys and
// errors); copies the workflow file verbatim into context.work_dir. Starts nothing.
absl::StatusOr<std::unique_ptr<Backend>> NewComfyUiBackend(const YAML::Node& section, const BackendContext& context);

// Progress of the current image, from the websocket's `progress` messages (e.g. step 7 of 20).
struct ComfyUiProgress {
  std::string node;
  int64_t value = 0;
  int64_t max = 0;
};

// Settings for tests (the HTTP client is BackendContext::services); an unset member takes the
// default.
struct ComfyUiDependencies {
  // Default: ConnectWebSocket.
  std::function<absl::StatusOr<std::unique_ptr<WebSocketConnection>>(const std::string& url, absl::Duration timeout)>
      connect_websocket;
  // Default: 32 random hex digits.
  std::function<std::string()> new_client_id;
  // Time between two /history polls when the websocket is unavailable (on the Env's clock).
  absl::Duration poll_interval = absl::Milliseconds(250);
  // Longest single wait for a websocket message, so the run deadline is checked on the Env's clock.
  absl::Duration websocket_wait_slice = absl::Seconds(1);
  // Called for every `progress` message of the current run (the CLI's progress bar); may be null.
  std::function<void(const ComfyUiProgress&)> on_progress;
};

// As NewComfyUiBackend, with the given dependencies (which must outlive the backend).
absl::StatusOr<std::unique_ptr<Backend>> NewComfyUiBackendWith(const YAML::Node& section,
                                                               const BackendContext& context,
                                                               ComfyUiDependencies dependencies);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_BACKENDS_COMFYUI_COMFYUI_BACKEND_H_
