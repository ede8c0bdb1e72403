#include "tests/sim/llama_server/responses.h"

#include <sstream>

namespace benchfleet::sim {
namespace {

const Json& Samplers() {
  static const Json* s = new Json(Json::array(
      {"penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p", "xtc", "temperature"}));
  return *s;
}

// llama.cpp's json_value: the field if present, not null and of a usable type; else the default.
template <typename T>
T Value(const Json& body, const char* key, const T& fallback) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    return fallback;
  }
}

// The parameters both "generation_settings" and /props' "params" show, up to mirostat_eta.
void AddSamplerFields(const SamplingParams& p, bool with_dry_breakers, Json* j) {
  Json& o = *j;
  o["seed"] = p.seed;
  o["temperature"] = p.temperature;
  o["dynatemp_range"] = p.dynatemp_range;
  o["dynatemp_exponent"] = p.dynatemp_exponent;
  o["top_k"] = p.top_k;
  o["top_p"] = p.top_p;
  o["min_p"] = p.min_p;
  o["top_n_sigma"] = p.top_n_sigma;
  o["xtc_probability"] = p.xtc_probability;
  o["xtc_threshold"] = p.xtc_threshold;
  o["typical_p"] = p.typical_p;
  o["repeat_last_n"] = p.repeat_last_n;
  o["repeat_penalty"] = p.repeat_penalty;
  o["presence_penalty"] = p.presence_penalty;
  o["frequency_penalty"] = p.frequency_penalty;
  o["dry_multiplier"] = p.dry_multiplier;
  o["dry_base"] = p.dry_base;
  o["dry_allowed_length"] = p.dry_allowed_length;
  o["dry_penalty_last_n"] = p.dry_penalty_last_n;
  if (with_dry_breakers) o["dry_sequence_breakers"] = Json::array({"\n", ":", "\"", "*"});
  o["mirostat"] = p.mirostat;
  o["mirostat_tau"] = p.mirostat_tau;
  o["mirostat_eta"] = p.mirostat_eta;
  o["adaptive_target"] = -1.0f;
  o["adaptive_decay"] = 0.9f;
}

std::string FinishReason(const std::string& stop_type) {
  return stop_type == "limit" ? "length" : "stop";
}

}  // namespace

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

SamplingParams ReadSamplingParams(const Json& body, const SamplingParams& d, bool oai) {
  SamplingParams p = d;
  if (!body.is_object()) return p;
  const int64_t seed = Value<int64_t>(body, "seed", static_cast<int64_t>(d.seed));
  p.seed = static_cast<uint32_t>(seed);
  p.temperature = Value<float>(body, "temperature", d.temperature);
  p.dynatemp_range = Value<float>(body, "dynatemp_range", d.dynatemp_range);
  p.dynatemp_exponent = Value<float>(body, "dynatemp_exponent", d.dynatemp_exponent);
  p.top_k = Value<int>(body, "top_k", d.top_k);
  p.top_p = Value<float>(body, "top_p", d.top_p);
  p.min_p = Value<float>(body, "min_p", d.min_p);
  p.top_n_sigma = Value<float>(body, "top_n_sigma", d.top_n_sigma);
  p.xtc_probability = Value<float>(body, "xtc_probability", d.xtc_probability);
  p.xtc_threshold = Value<float>(body, "xtc_threshold", d.xtc_threshold);
  p.typical_p = Value<float>(body, "typical_p", d.typical_p);
  p.repeat_last_n = Value<int>(body, "repeat_last_n", d.repeat_last_n);
  p.repeat_penalty = Value<float>(body, "repeat_penalty", d.repeat_penalty);
  p.presence_penalty = Value<float>(body, "presence_penalty", d.presence_penalty);
  p.frequency_penalty = Value<float>(body, "frequency_penalty", d.frequency_penalty);
  p.dry_multiplier = Value<float>(body, "dry_multiplier", d.dry_multiplier);
  p.dry_base = Value<float>(body, "dry_base", d.dry_base);
  p.dry_allowed_length = Value<int>(body, "dry_allowed_length", d.dry_allowed_length);
  p.dry_penalty_last_n = Value<int>(body, "dry_penalty_last_n", d.dry_penalty_last_n);
  p.mirostat = Value<int>(body, "mirostat", d.mirostat);
  p.mirostat_tau = Value<float>(body, "mirostat_tau", d.mirostat_tau);
  p.mirostat_eta = Value<float>(body, "mirostat_eta", d.mirostat_eta);
  p.n_keep = Value<int>(body, "n_keep", d.n_keep);
  p.ignore_eos = Value<bool>(body, "ignore_eos", d.ignore_eos);
  p.stream = Value<bool>(body, "stream", d.stream);
  p.n_probs = Value<int>(body, "n_probs", d.n_probs);
  p.min_keep = Value<int>(body, "min_keep", d.min_keep);
  p.timings_per_token = Value<bool>(body, "timings_per_token", d.timings_per_token);
  p.post_sampling_probs = Value<bool>(body, "post_sampling_probs", d.post_sampling_probs);
  p.cache_prompt = Value<bool>(body, "cache_prompt", d.cache_prompt);
  // n_predict, or the OpenAI name for it.
  p.n_predict = Value<int>(body, "n_predict", Value<int>(body, "max_tokens", d.n_predict));
  if (oai) p.n_predict = Value<int>(body, "max_tokens", p.n_predict);
  auto stop = body.find("stop");
  if (stop != body.end()) {
    p.stop.clear();
    if (stop->is_string()) {
      p.stop.push_back(stop->get<std::string>());
    } else if (stop->is_array()) {
      for (const Json& s : *stop) {
        if (s.is_string()) p.stop.push_back(s.get<std::string>());
      }
    }
  }
  return p;
}

Json GenerationSettings(const SamplingParams& p) {
  Json o = Json::object();
  AddSamplerFields(p, /*with_dry_breakers=*/true, &o);
  o["stop"] = p.stop;
  o["max_tokens"] = p.n_predict;
  o["n_predict"] = p.n_predict;
  o["n_keep"] = p.n_keep;
  o["n_discard"] = 0;
  o["ignore_eos"] = p.ignore_eos;
  o["stream"] = p.stream;
  o["logit_bias"] = Json::array();
  o["n_probs"] = p.n_probs;
  o["min_keep"] = p.min_keep;
  o["grammar"] = "";
  o["grammar_lazy"] = false;
  o["grammar_triggers"] = Json::array();
  o["preserved_tokens"] = Json::array();
  o["chat_format"] = "Content-only";
  o["reasoning_format"] = "deepseek";
  o["reasoning_in_content"] = false;
  o["generation_prompt"] = "";
  o["samplers"] = Samplers();
  o["speculative.types"] = "none";
  o["timings_per_token"] = p.timings_per_token;
  o["post_sampling_probs"] = p.post_sampling_probs;
  o["backend_sampling"] = false;
  o["lora"] = Json::array();
  return o;
}

Json TimingsJson(const Timings& t) {
  const double prompt_ms = static_cast<double>(t.prompt_us) / 1000.0;
  const double predicted_ms = static_cast<double>(t.predicted_us) / 1000.0;
  const int64_t steps = t.predicted_n > 0 ? t.predicted_n - 1 : 0;
  Json o = Json::object();
  o["cache_n"] = t.cache_n;
  o["prompt_n"] = t.prompt_n;
  o["prompt_ms"] = prompt_ms;
  o["prompt_per_token_ms"] = t.prompt_n > 0 ? prompt_ms / static_cast<double>(t.prompt_n) : 0.0;
  o["prompt_per_second"] = prompt_ms > 0.0 ? 1e3 / prompt_ms * static_cast<double>(t.prompt_n) : 0.0;
  o["predicted_n"] = t.predicted_n;
  o["predicted_ms"] = predicted_ms;
  o["predicted_per_token_ms"] = steps > 0 ? predicted_ms / static_cast<double>(steps) : 0.0;
  o["predicted_per_second"] = predicted_ms > 0.0 ? 1e3 / predicted_ms * static_cast<double>(steps) : 0.0;
  return o;
}

Json CompletionJson(const CompletionResult& r) {
  Json o = Json::object();
  o["index"] = 0;
  o["content"] = r.content;
  o["tokens"] = Json::array();
  o["id_slot"] = r.id_slot;
  o["stop"] = true;
  o["model"] = r.model;
  o["tokens_predicted"] = r.tokens_predicted;
  o["tokens_evaluated"] = r.tokens_evaluated;
  o["generation_settings"] = GenerationSettings(r.params);
  o["prompt"] = r.prompt;
  o["has_new_line"] = r.has_new_line;
  o["truncated"] = r.truncated;
  o["stop_type"] = r.stop_type;
  o["stopping_word"] = r.stopping_word;
  o["tokens_cached"] = r.tokens_cached;
  o["timings"] = TimingsJson(r.timings);
  return o;
}

Json CompletionChunkJson(const std::string& piece, int32_t token, int64_t n_predicted, int64_t n_evaluated) {
  Json o = Json::object();
  o["index"] = 0;
  o["content"] = piece;
  o["tokens"] = Json::array({token});
  o["stop"] = false;
  o["id_slot"] = -1;
  o["tokens_predicted"] = n_predicted;
  o["tokens_evaluated"] = n_evaluated;
  return o;
}

namespace {

Json Usage(const CompletionResult& r) {
  Json u = Json::object();
  u["completion_tokens"] = r.tokens_predicted;
  u["prompt_tokens"] = r.tokens_evaluated;
  u["total_tokens"] = r.tokens_predicted + r.tokens_evaluated;
  u["prompt_tokens_details"] = Json{{"cached_tokens", r.timings.cache_n}};
  return u;
}

Json Choice(const std::string& text, const Json& finish_reason) {
  Json c = Json::object();
  c["text"] = text;
  c["index"] = 0;
  c["logprobs"] = nullptr;
  c["finish_reason"] = finish_reason;
  return c;
}

}  // namespace

Json OaiCompletionJson(const CompletionResult& r, const OaiContext& c) {
  Json o = Json::object();
  o["choices"] = Json::array({Choice(r.content, FinishReason(r.stop_type))});
  o["created"] = c.created;
  o["model"] = c.model;
  o["system_fingerprint"] = c.system_fingerprint;
  o["object"] = "text_completion";
  o["usage"] = Usage(r);
  o["id"] = c.id;
  o["timings"] = TimingsJson(r.timings);
  return o;
}

Json OaiChunkJson(const std::string& text, const CompletionResult* final_result, const OaiContext& c) {
  Json o = Json::object();
  o["choices"] = Json::array(
      {Choice(text, final_result != nullptr ? Json(FinishReason(final_result->stop_type)) : Json(nullptr))});
  o["created"] = c.created;
  o["model"] = c.model;
  o["system_fingerprint"] = c.system_fingerprint;
  o["object"] = "text_completion";
  if (final_result != nullptr) o["usage"] = Usage(*final_result);
  o["id"] = c.id;
  if (final_result != nullptr) o["timings"] = TimingsJson(final_result->timings);
  return o;
}

Json ErrorJson(int code, const std::string& message, const std::string& type) {
  Json e = Json::object();
  e["code"] = code;
  e["message"] = message;
  e["type"] = type;
  return Json{{"error", e}};
}

Json ExceedContextJson(int64_t n_prompt_tokens, int64_t n_ctx) {
  Json e = Json::object();
  e["code"] = 400;
  e["message"] = "request (" + std::to_string(n_prompt_tokens) +
                 " tokens) exceeds the available context size (" + std::to_string(n_ctx) +
                 " tokens), try increasing it";
  e["type"] = "exceed_context_size_error";
  e["n_prompt_tokens"] = n_prompt_tokens;
  e["n_ctx"] = n_ctx;
  return Json{{"error", e}};
}

std::string LoadingBody() {
  return R"({"error":{"message":"Loading model","type":"unavailable_error","code":503}})";
}

Json PropsJson(const PropsInput& in) {
  Json params = Json::object();
  AddSamplerFields(in.defaults, /*with_dry_breakers=*/false, &params);
  params["max_tokens"] = in.defaults.n_predict;
  params["n_predict"] = in.defaults.n_predict;
  params["n_keep"] = in.defaults.n_keep;
  params["n_discard"] = 0;
  params["ignore_eos"] = in.defaults.ignore_eos;
  params["stream"] = false;
  params["n_probs"] = in.defaults.n_probs;
  params["min_keep"] = in.defaults.min_keep;
  params["chat_format"] = "Content-only";
  params["reasoning_format"] = "none";
  params["reasoning_in_content"] = false;
  params["generation_prompt"] = "";
  params["samplers"] = Samplers();
  params["speculative.types"] = "none";
  params["timings_per_token"] = false;
  params["post_sampling_probs"] = false;
  params["backend_sampling"] = false;
  params["lora"] = Json::array();

  Json o = Json::object();
  o["default_generation_settings"] = Json{{"params", params}, {"n_ctx", in.n_ctx_slot}};
  o["total_slots"] = in.total_slots;
  o["model_alias"] = in.model_alias;
  o["model_ftype"] = "F16";
  o["model_path"] = in.model_path;
  o["modalities"] = Json{{"vision", false}, {"video", false}, {"audio", false}};
  o["media_marker"] = in.media_marker;
  o["endpoint_slots"] = in.endpoint_slots;
  o["endpoint_props"] = in.endpoint_props;
  o["endpoint_metrics"] = in.endpoint_metrics;
  o["ui"] = in.webui;
  o["ui_settings"] = Json::object();
  o["chat_template"] =
      "{%- for message in messages -%}\n  {{- '<|im_start|>' + message.role + '\n' + message.content + "
      "'<|im_end|>\n' -}}\n{%- endfor -%}\n{%- if add_generation_prompt -%}\n  {{- "
      "'<|im_start|>assistant\n' -}}\n{%- endif -%}";
  Json caps = Json::object();
  caps["supports_object_arguments"] = false;
  caps["supports_parallel_tool_calls"] = false;
  caps["supports_preserve_reasoning"] = false;
  caps["supports_reasoning_effort"] = false;
  caps["supports_string_content"] = true;
  caps["supports_system_role"] = true;
  caps["supports_tool_calls"] = false;
  caps["supports_tools"] = false;
  caps["supports_typed_content"] = false;
  o["chat_template_caps"] = caps;
  o["bos_token"] = "<s>";
  o["eos_token"] = "</s>";
  o["build_info"] = in.build_info;
  o["is_sleeping"] = false;
  o["cors_proxy_enabled"] = false;
  return o;
}

std::string MetricsText(const MetricsInput& m) {
  struct Metric {
    const char* name;
    const char* help;
    double value;
  };
  const Metric counters[] = {
      {"prompt_tokens_total", "Number of prompt tokens processed, excluding cached tokens", m.prompt_tokens_total},
      {"prompt_tokens_cached_total", "Number of prompt tokens reused from the cache", m.prompt_tokens_cached_total},
      {"prompt_seconds_total", "Total time spent processing prompts", m.prompt_seconds_total},
      {"tokens_predicted_total", "Number of generation tokens processed", m.tokens_predicted_total},
      {"tokens_predicted_seconds_total", "Total time spent generating tokens", m.tokens_predicted_seconds_total},
      {"n_decode_total",
       "Total number of llama_decode() calls, excluding speculative decoding and multimodal decoding",
       m.n_decode_total},
      {"n_tokens_max", "Largest observed sequence length (prompt + generation)", m.n_tokens_max},
      {"spec_decode_num_draft_tokens_total", "Speculative: Total draft tokens generated", 0},
      {"spec_decode_num_accepted_tokens_total", "Speculative: Total draft tokens accepted by the target model", 0},
      {"spec_decode_num_drafts_total", "Speculative: Total speculative decoding verification steps", 0},
  };
  const Metric gauges[] = {
      {"prompt_tokens_seconds", "Average prompt throughput in tokens/s", m.prompt_tokens_seconds},
      {"predicted_tokens_seconds", "Average generation throughput in tokens/s", m.predicted_tokens_seconds},
      {"requests_processing", "Number of requests processing", m.requests_processing},
      {"requests_deferred", "Number of requests deferred", m.requests_deferred},
      {"n_busy_slots_per_decode", "Average number of busy slots per llama_decode() call", m.n_busy_slots_per_decode},
  };
  std::ostringstream out;
  for (const Metric& c : counters) {
    out << "# HELP llamacpp:" << c.name << " " << c.help << "\n"
        << "# TYPE llamacpp:" << c.name << " counter\n"
        << "llamacpp:" << c.name << " " << c.value << "\n";
  }
  for (const Metric& g : gauges) {
    out << "# HELP llamacpp:" << g.name << " " << g.help << "\n"
        << "# TYPE llamacpp:" << g.name << " gauge\n"
        << "llamacpp:" << g.name << " " << g.value << "\n";
  }
  return out.str();
}

}  // namespace benchfleet::sim
