// The llama-server section of a series spec, checked: either a binary + model the agent starts
// itself (one start per mode), or the url of a server that already runs. Every path and URL is
// checked against the agent's allow-list here, before anything runs.
// Owner: the llama-server backend. Plain data and a pure function; thread-safe.
#ifndef BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_LLAMA_SERVER_CONFIG_H_
#define BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_LLAMA_SERVER_CONFIG_H_

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/config/allow_list.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet::agent::llama_server {

// The mode name of a server given by url: the agent cannot switch its modes.
inline constexpr char kExternalMode[] = "external";

struct LlamaServerConfig {
  // A server the agent starts: both absolute, in the allow-list's canonical form.
  std::string binary;
  std::string model;
  // Arguments every start gets, after the agent's own (-m, --host, --port, -lv 4).
  std::vector<std::string> args;
  // Mode name -> the arguments that make it (e.g. gpu: [-ngl, 99]), in the spec's order. A
  // section without modes has one mode, "default", without arguments.
  std::vector<std::pair<std::string, std::vector<std::string>>> modes;
  // Modes whose runs may go on when the server offloads none of the layers the mode asks for
  // (flagged NO_OFFLOAD, kept out of aggregates; otherwise such a mode fails to open), and modes
  // whose partial offload is accepted (otherwise flagged PARTIAL_OFFLOAD and kept out).
  std::set<std::string> allow_no_offload;
  std::set<std::string> allow_partial_offload;

  // A server that already runs: its base URL without a final '/' (e.g. http://127.0.0.1:8080).
  std::string url;

  std::string prompt;
  int n_predict = 128;
  uint32_t seed = 42;
  bool stream = false;
  absl::Duration health_timeout = absl::Seconds(120);
  absl::Duration request_timeout = absl::Seconds(300);
  absl::Duration stop_grace = absl::Seconds(10);

  bool external() const { return !url.empty(); }
};

// Parses and checks the section (the mapping under `llama-server:`). Errors:
//   INVALID_ARGUMENT   "line N: llama-server.<key> ..." for an unknown key, a wrong type or value,
//                      a missing prompt, url mixed with binary/model/args/modes, or an argument
//                      the agent sets itself (-m, --host, --port, -lv, --log-file, -hf, ...)
//   PERMISSION_DENIED  binary, model, a model-file argument (--lora, -md, --mmproj, ...) or url
//                      outside the allow-list (the AllowList's message)
absl::StatusOr<LlamaServerConfig> ParseLlamaServerSection(const YAML::Node& section, const AllowList& allow);

}  // namespace benchfleet::agent::llama_server

#endif  // BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_LLAMA_SERVER_CONFIG_H_
