// The JSON and text bodies llama-server sends, with the key sets, key order and number formats
// of the captures in tests/fixtures/llama-server (built from the captured values they are the
// captured bytes; llama_server_sim_units_test checks it): /props, /completion (whole and
// streamed), /v1/completions (whole and streamed), error objects and the Prometheus /metrics
// text. Owner: tests/sim. Pure; thread-safe.
#ifndef BENCHFLEET_TESTS_SIM_LLAMA_SERVER_RESPONSES_H_
#define BENCHFLEET_TESTS_SIM_LLAMA_SERVER_RESPONSES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace benchfleet::sim {

using Json = nlohmann::ordered_json;

// Returns the body as llama-server writes it: compact, UTF-8 unescaped, invalid UTF-8 replaced.
std::string Dump(const Json& j);

// The sampling parameters a request may set, echoed in "generation_settings". Floats are floats
// as in llama.cpp, so 0.95 is echoed as 0.949999988079071.
struct SamplingParams {
  uint32_t seed = 4294967295u;
  float temperature = 0.8f;
  float dynatemp_range = 0.0f;
  float dynatemp_exponent = 1.0f;
  int top_k = 40;
  float top_p = 0.95f;
  float min_p = 0.05f;
  float top_n_sigma = -1.0f;
  float xtc_probability = 0.0f;
  float xtc_threshold = 0.1f;
  float typical_p = 1.0f;
  int repeat_last_n = 64;
  float repeat_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  float dry_multiplier = 0.0f;
  float dry_base = 1.75f;
  int dry_allowed_length = 2;
  int dry_penalty_last_n = 64;
  int mirostat = 0;
  float mirostat_tau = 5.0f;
  float mirostat_eta = 0.1f;
  std::vector<std::string> stop;
  int n_predict = -1;
  int n_keep = 0;
  bool ignore_eos = false;
  bool stream = false;
  int n_probs = 0;
  int min_keep = 0;
  bool timings_per_token = false;
  bool post_sampling_probs = false;
  bool cache_prompt = true;
};

// Reads a request's sampling fields over `defaults` (wrong types keep the default, as
// llama.cpp's json_value does). `oai` maps max_tokens to n_predict.
SamplingParams ReadSamplingParams(const Json& body, const SamplingParams& defaults, bool oai);

// The "generation_settings" object of a /completion result.
Json GenerationSettings(const SamplingParams& p);

struct Timings {
  int64_t cache_n = 0;
  int64_t prompt_n = 0;
  int64_t prompt_us = 0;     // t_prompt_last - t_start
  int64_t predicted_n = 0;
  int64_t predicted_us = 0;  // t_gen_last - t_prompt_last, at least 1 when a token was made
};

// The "timings" object (llama.cpp's server_slot_stats: the first generated token is free, so the
// per-token and per-second figures of generation divide by predicted_n - 1).
Json TimingsJson(const Timings& t);

struct CompletionResult {
  std::string content;
  int id_slot = 0;
  std::string model;
  int64_t tokens_predicted = 0;
  int64_t tokens_evaluated = 0;
  SamplingParams params;
  std::string prompt;  // detokenized
  bool has_new_line = false;
  bool truncated = false;
  std::string stop_type;  // "limit", "eos", "word"
  std::string stopping_word;
  int64_t tokens_cached = 0;
  Timings timings;
};

// POST /completion: the whole result (also the last chunk of a stream, with content "").
Json CompletionJson(const CompletionResult& r);
// One partial chunk of a /completion stream.
Json CompletionChunkJson(const std::string& piece, int32_t token, int64_t n_predicted, int64_t n_evaluated);

struct OaiContext {
  int64_t created = 0;
  std::string id;       // "chatcmpl-..."
  std::string model;
  std::string system_fingerprint;
};

// POST /v1/completions: the whole result.
Json OaiCompletionJson(const CompletionResult& r, const OaiContext& c);
// One partial chunk of a /v1/completions stream; the last one (final = true) carries
// finish_reason, usage and timings.
Json OaiChunkJson(const std::string& text, const CompletionResult* final_result, const OaiContext& c);

// {"error":{"code":..,"message":..,"type":..}} as format_error_response builds it.
Json ErrorJson(int code, const std::string& message, const std::string& type);
// The 400 for a prompt longer than the context, with its two extra fields.
Json ExceedContextJson(int64_t n_prompt_tokens, int64_t n_ctx);
// The 503 body while the model loads (its keys in another order, as the real one).
std::string LoadingBody();

struct PropsInput {
  SamplingParams defaults;
  int64_t n_ctx_slot = 0;
  int total_slots = 0;
  std::string model_alias;
  std::string model_path;
  std::string media_marker;
  bool endpoint_slots = true;
  bool endpoint_props = false;
  bool endpoint_metrics = false;
  bool webui = true;
  std::string build_info;
};

// GET /props.
Json PropsJson(const PropsInput& in);

struct MetricsInput {
  double prompt_tokens_total = 0;
  double prompt_tokens_cached_total = 0;
  double prompt_seconds_total = 0;
  double tokens_predicted_total = 0;
  double tokens_predicted_seconds_total = 0;
  double n_decode_total = 0;
  double n_tokens_max = 0;
  double prompt_tokens_seconds = 0;     // over the window since the last scrape
  double predicted_tokens_seconds = 0;  // idem
  double requests_processing = 0;
  double requests_deferred = 0;
  double n_busy_slots_per_decode = 0;
};

// GET /metrics: Prometheus text, every value printed as a double with ostream's default format.
std::string MetricsText(const MetricsInput& m);

}  // namespace benchfleet::sim

#endif  // BENCHFLEET_TESTS_SIM_LLAMA_SERVER_RESPONSES_H_
