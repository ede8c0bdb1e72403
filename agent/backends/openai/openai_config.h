// The openai section of a series spec, checked: the base URL of an OpenAI-compatible server
// (vLLM, TGI, llama-server, Ollama; allow-listed), the model, the endpoint, the prompts JSONL
// file (read here, allow-listed like the workflow backend's prompts), the concurrency and the sampling settings,
// and optional SLOs for goodput. Owner: the openai backend. Plain data and pure functions (the
// prompts file is read through the Env); thread-safe.
#ifndef BENCHFLEET_AGENT_BACKENDS_OPENAI_OPENAI_CONFIG_H_
#define BENCHFLEET_AGENT_BACKENDS_OPENAI_OPENAI_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/config/allow_list.h"
#include "common/env.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet::agent::openai {

enum class Endpoint { kCompletions, kChat };

// One line of the prompts file.
struct Prompt {
  std::string id;  // its "id" (a string, or a number as written), else its 1-based line
  std::string text;
};

struct OpenAiConfig {
  // The base URL as OpenAI clients take it, without a final '/': e.g. http://127.0.0.1:8000/v1.
  // Requests go to url + "/completions", "/chat/completions", "/models".
  std::string url;
  std::string model;
  Endpoint endpoint = Endpoint::kCompletions;
  std::string prompts_path;  // canonical
  std::vector<Prompt> prompts;
  // Requests in flight at once during a warm run (the batch size).
  int concurrency = 8;
  int max_tokens = 128;
  bool stream = true;
  double temperature = 0;
  uint32_t seed = 42;
  absl::Duration request_timeout = absl::Seconds(300);
  // Service-level objectives: a request meets them when its TTFT and TPOT are at most these.
  // Goodput counts the successful requests that meet every given one.
  std::optional<absl::Duration> slo_ttft;
  std::optional<absl::Duration> slo_tpot;

  std::string endpoint_path() const { return endpoint == Endpoint::kChat ? "/chat/completions" : "/completions"; }
  std::string endpoint_name() const { return endpoint == Endpoint::kChat ? "chat" : "completions"; }
};

// Parses a prompts JSONL file: one JSON object per non-empty line, {"id": ..., "prompt": "..."}
// ("id" optional: the 1-based line number then). INVALID_ARGUMENT "<source>:<line>: ..." for a
// line that is not such an object, an empty prompt, a duplicate id, or a file without prompts.
absl::StatusOr<std::vector<Prompt>> ParsePromptsJsonl(std::string_view text, std::string_view source);

// Parses and checks the section (the mapping under `openai:`), reading the prompts through env.
// Errors:
//   INVALID_ARGUMENT   "line N: openai.<key> ..." for an unknown key, a wrong type or value, a
//                      missing url/model/prompts, or a prompts file that does not parse
//   NOT_FOUND          the prompts file does not exist
//   PERMISSION_DENIED  url outside allow.urls, prompts file outside allow.workflow_dirs (the
//                      AllowList's message, with what the setting allows)
absl::StatusOr<OpenAiConfig> ParseOpenAiSection(const YAML::Node& section, const AllowList& allow, Env* env);

}  // namespace benchfleet::agent::openai

#endif  // BENCHFLEET_AGENT_BACKENDS_OPENAI_OPENAI_CONFIG_H_
