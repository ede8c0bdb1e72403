// The llama-server backend: measures llama.cpp's llama-server on one machine, one mode (e.g. gpu,
// cpu: the same binary and model, only the offload arguments change) per session. Per session it
// starts the server on a free loopback port with -lv 4, waits for /health, reads /props and the
// buffer sizes of its log; per run it POSTs /completion and records timings, tokens, output hash,
// memory and flags; at Close it stops the server (SIGTERM, SIGKILL after stop_grace). With `url`
// it measures a server that already runs instead (one mode, "external"). See README.md here.
// Owner: the llama-server backend. Used from one thread at a time (the runner's), which must
// also be the thread that opens and closes the sessions (see agent/process/child_process.h).
#ifndef BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_LLAMA_SERVER_BACKEND_H_
#define BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_LLAMA_SERVER_BACKEND_H_

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/backends/backend.h"
#include "agent/http/http_client.h"
#include "agent/process/child_process.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet::agent {

// Builds the backend from the `llama-server:` section (see llama_server_config.h for the keys
// and errors). Starts nothing.
absl::StatusOr<std::unique_ptr<Backend>> NewLlamaServerBackend(const YAML::Node& section,
                                                               const BackendContext& context);

// Settings for tests (the launcher and the HTTP client are BackendContext::services); an unset
// member takes the default.
struct LlamaServerDependencies {
  // Returns the loopback port to start a server on; default: one the kernel just gave out.
  std::function<absl::StatusOr<int>()> pick_port;
  // Time between two /health polls while the server loads (on the Env's clock).
  absl::Duration health_poll_interval = absl::Milliseconds(250);
};

// As NewLlamaServerBackend, with the given dependencies (which must outlive the backend).
absl::StatusOr<std::unique_ptr<Backend>> NewLlamaServerBackendWith(const YAML::Node& section,
                                                                   const BackendContext& context,
                                                                   LlamaServerDependencies dependencies);

// Returns a TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read, close).
absl::StatusOr<int> PickFreeLoopbackPort();

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_LLAMA_SERVER_BACKEND_H_
