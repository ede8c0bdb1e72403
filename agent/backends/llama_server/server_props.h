// Reads llama-server's GET /props answer: the facts a session records (build, model, context
// size, slots). Owner: the llama-server backend. Pure function; thread-safe.
#ifndef BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_SERVER_PROPS_H_
#define BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_SERVER_PROPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace benchfleet::agent::llama_server {

struct ServerProps {
  std::string build_info;  // e.g. "b10587-3f545becc"; a simulator puts "SIMULATED" in it
  std::string model_path;  // as the server was given it
  std::optional<int64_t> n_ctx;        // default_generation_settings.n_ctx
  std::optional<int64_t> total_slots;  // parallel slots
};

// Parses a /props body. INVALID_ARGUMENT when it is not a JSON object; FAILED_PRECONDITION when
// it has no build_info (not a llama-server, or one too old to say its build).
absl::StatusOr<ServerProps> ParseServerProps(std::string_view body);

}  // namespace benchfleet::agent::llama_server

#endif  // BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_SERVER_PROPS_H_
