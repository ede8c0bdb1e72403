// The openai backend: measures any OpenAI-compatible server (vLLM, TGI, llama-server, Ollama)
// that already runs at an allow-listed URL. Open checks that GET /models serves the model (and
// whether the server announces itself as the benchfleet simulator); the first run of a session
// (COLD, or VALIDATION) is one warm-up request, recorded on its own; every WARM run sends every
// prompt of the prompts file at the fixed concurrency and records each request (TTFT,
// inter-token gaps, latency, output tokens, error) in RunRecord.requests plus the summary
// figures of request_stats.h. See README.md here.
// Owner: the openai backend. Used from one thread at a time (the runner's); a run starts
// `concurrency` threads of its own and joins them before it returns.
#ifndef BENCHFLEET_AGENT_BACKENDS_OPENAI_OPENAI_BACKEND_H_
#define BENCHFLEET_AGENT_BACKENDS_OPENAI_OPENAI_BACKEND_H_

#include <memory>

#include "absl/status/statusor.h"
#include "agent/backends/backend.h"
#include "agent/http/http_client.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet::agent {

// Builds the backend from the `openai:` section (see openai_config.h for the keys and errors).
// Sends nothing.
absl::StatusOr<std::unique_ptr<Backend>> NewOpenAiBackend(const YAML::Node& section, const BackendContext& context);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_BACKENDS_OPENAI_OPENAI_BACKEND_H_
