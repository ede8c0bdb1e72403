#include "agent/backends/openai/openai_backend.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/backends/openai/figures.h"
#include "agent/backends/openai/openai_config.h"
#include "agent/backends/openai/openai_stream.h"
#include "agent/backends/openai/request_stats.h"
#include "common/hashing.h"
#include "common/output_determinism.h"
#include "common/proto_time.h"
#include "common/string_views.h"
#include "common/simulated.h"

namespace benchfleet::agent {
namespace {

using openai::ErrorKind;
using openai::OpenAiConfig;
using openai::RequestResult;

constexpr char kBackendName[] = "openai";
// The server's mode cannot be switched by the agent: the combination's mode is a label only.
constexpr char kDefaultMode[] = "external";
// What the benchfleet simulators put in the strings a server says about itself: openai-sim's
// /models `owned_by` (tests/sim/openai), and "SIMULATED" in its `system_fingerprint`
// ("benchfleet-sim (SIMULATED)") and in llama-server-sim's (its build_info, "b10587-benchfleet-sim
// (SIMULATED)", whose /v1/models says only `owned_by: llamacpp`).
constexpr char kSimulatorOwner[] = "benchfleet-simulator";
constexpr absl::Duration kConnectTimeout = absl::Seconds(5);
constexpr absl::Duration kModelsTimeout = absl::Seconds(30);

// Makes a text safe for a record (which must be valid UTF-8): bytes outside printable ASCII
// become '?', so a body cut in the middle of a character cannot make the record refused.
std::string Printable(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) c = '?';
  }
  return out;
}

std::string FormatSeconds(double s) { return absl::StrCat(s); }

// True when an identity or version string the server sent (a model's owned_by or id, an answer's
// system_fingerprint or model) says it is a benchfleet simulator. Every such string is checked:
// a simulator may announce itself in only one of them.
bool SaysSimulatorIdentity(const std::string& text) {
  return benchfleet::SaysSimulated(text) || absl::StrContains(text, kSimulatorOwner);
}

class OpenAiSession : public BackendSession {
 public:
  OpenAiSession(std::shared_ptr<const OpenAiConfig> config, BackendContext context, std::shared_ptr<HttpClient> http,
                std::string mode, int concurrency, int max_tokens, SessionInfo info)
      : config_(std::move(config)),
        context_(std::move(context)),
        http_(std::move(http)),
        mode_(std::move(mode)),
        concurrency_(concurrency),
        max_tokens_(max_tokens),
        info_(std::move(info)) {}

  const SessionInfo& info() const override { return info_; }
  bool alive() const override { return alive_; }
  absl::Status Close() override {
    alive_ = false;
    return absl::OkStatus();
  }

  void Run(const RunInput& input, v1::RunRecord* record) override {
    Clock& clock = context_.env->clock();
    record->set_backend(kBackendName);
    record->set_mode(mode_);
    // The first run of a session warms the server up: one request, recorded on its own.
    const bool warmup = !warmed_up_;
    warmed_up_ = true;
    auto& params = *record->mutable_params();
    for (const auto& [key, value] : info_.params) params[key] = value;
    params["endpoint"] = config_->endpoint_name();
    params["model"] = config_->model;
    params["prompts_file"] = config_->prompts_path;
    params["prompts_count"] = absl::StrCat(config_->prompts.size());
    params["concurrency"] = absl::StrCat(concurrency_);
    params["batch_size"] = absl::StrCat(concurrency_);
    params["max_tokens"] = absl::StrCat(max_tokens_);
    params["temperature"] = FormatSeconds(config_->temperature);
    params["seed"] = absl::StrCat(config_->seed);
    params["stream"] = config_->stream ? "true" : "false";
    params["request_timeout_seconds"] = FormatSeconds(absl::ToDoubleSeconds(config_->request_timeout));
    if (config_->slo_ttft) params["slo_ttft_seconds"] = FormatSeconds(absl::ToDoubleSeconds(*config_->slo_ttft));
    if (config_->slo_tpot) params["slo_tpot_seconds"] = FormatSeconds(absl::ToDoubleSeconds(*config_->slo_tpot));
    params["warmup"] = warmup ? "true" : "false";
    if (config_->temperature == 0) {
      // Greedy decoding with a fixed seed: the prompts sent and these settings decide the texts
      // (the task names the model). The concurrency too: a batching server's numerics depend on
      // the batch. common/output_determinism.h.
      nlohmann::json sent = nlohmann::json::array();
      const size_t sent_count = warmup ? 1 : config_->prompts.size();
      for (size_t i = 0; i < sent_count; ++i) sent.push_back(config_->prompts[i].text);
      params[std::string(kInputsSha256Param)] = Sha256Hex(
          nlohmann::json{{"backend", kBackendName}, {"endpoint", config_->endpoint_name()}, {"model", config_->model},
                         {"max_tokens", max_tokens_}, {"temperature", 0}, {"seed", config_->seed},
                         {"concurrency", warmup ? 1 : concurrency_}, {"prompts", std::move(sent)}}
              .dump());
    }

    if (!alive_) {
      const absl::Time now = clock.Now();
      SetTimestamp(now, record->mutable_start_time());
      SetTimestamp(now, record->mutable_end_time());
      return Fail(record, absl::StrCat("the server at ", config_->url, " is not usable: ", dead_reason_));
    }

    const size_t count = warmup ? 1 : config_->prompts.size();
    const int threads = warmup ? 1 : std::min<int>(concurrency_, static_cast<int>(count));
    std::vector<RequestResult> results(count);
    std::vector<openai::Answer> answers(count);
    std::atomic<size_t> next{0};
    const absl::Time start_time = clock.Now();
    const absl::Duration started = clock.Monotonic();
    auto worker = [&] {
      for (size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
        results[i] = SendOne(config_->prompts[i], &answers[i]);
      }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& t : pool) t.join();
    const absl::Duration wall = clock.Monotonic() - started;
    SetTimestamp(start_time, record->mutable_start_time());
    SetTimestamp(clock.Now(), record->mutable_end_time());
    SetDuration(wall, record->mutable_wall_duration());
    params["requests_in_run"] = absl::StrCat(count);

    for (const RequestResult& r : results) *record->add_requests() = r.timing;
    openai::Slos slos;
    if (config_->slo_ttft) slos.ttft_seconds = absl::ToDoubleSeconds(*config_->slo_ttft);
    if (config_->slo_tpot) slos.tpot_seconds = absl::ToDoubleSeconds(*config_->slo_tpot);
    for (v1::Metric& m : openai::RunMetrics(results, wall, slos)) *record->add_metrics() = std::move(m);

    std::map<std::string, int> kinds;
    int failed = 0;
    std::string first_error;
    bool all_connection = true;
    std::string fingerprint;
    std::string texts;
    for (size_t i = 0; i < count; ++i) {
      if (results[i].kind == ErrorKind::kNone) {
        if (fingerprint.empty()) fingerprint = answers[i].system_fingerprint;
        texts += answers[i].text;
        texts += '\n';
        continue;
      }
      ++failed;
      ++kinds[openai::ErrorKindName(results[i].kind)];
      if (first_error.empty())
        first_error = absl::StrCat("prompt ", results[i].timing.prompt_id(), ": ", results[i].timing.error());
      all_connection = all_connection && results[i].kind == ErrorKind::kConnection;
    }
    if (!fingerprint.empty()) params["system_fingerprint"] = Printable(fingerprint);
    // An answer that says SIMULATED marks this record and, through the session's info that the
    // runner reads after each run, every later one (a server whose /models said nothing of it).
    for (size_t i = 0; i < count; ++i) {
      for (const auto& [field, value] : {std::pair<const char*, const std::string&>{"system_fingerprint",
                                                                                    answers[i].system_fingerprint},
                                         std::pair<const char*, const std::string&>{"model", answers[i].model}}) {
        if (!SaysSimulatorIdentity(value)) continue;
        record->set_simulated(true);
        if (!info_.simulated) {
          info_.simulated = true;
          info_.params["simulated_by"] = Printable(absl::StrCat("answer ", field, ": ", value));
          params["simulated_by"] = info_.params["simulated_by"];
        }
      }
    }
    std::vector<std::string> by_kind;
    for (const auto& [kind, c] : kinds) by_kind.push_back(absl::StrCat(c, " ", kind));
    const std::string summary = absl::StrCat(failed, " of ", count, " requests failed (", absl::StrJoin(by_kind, ", "),
                                             "); first: ", first_error);
    if (failed == static_cast<int>(count)) {
      if (all_connection) {
        alive_ = false;
        dead_reason_ = absl::StrCat("an earlier run could not connect: ", first_error);
      }
      return Fail(record, summary);
    }
    if (failed > 0) {
      v1::Flag* flag = record->add_flags();
      flag->set_code("REQUEST_ERRORS");
      flag->set_reason(summary);
    } else {
      // Temperature 0 and a fixed seed: the same texts on every run of a deterministic server.
      v1::Output* output = record->add_outputs();
      output->set_kind("text");
      output->set_name(warmup ? "warmup" : "completions");
      output->set_sha256(Sha256Hex(texts));
      output->set_size_bytes(texts.size());
    }
    record->mutable_status()->set_code(v1::RunStatus::CODE_OK);
  }

 private:
  std::string Body(const openai::Prompt& prompt) const {
    nlohmann::json body = {{"model", config_->model},
                           {"max_tokens", max_tokens_},
                           {"temperature", config_->temperature},
                           {"seed", config_->seed},
                           {"stream", config_->stream}};
    if (config_->endpoint == openai::Endpoint::kChat) {
      body["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", prompt.text}}});
    } else {
      body["prompt"] = prompt.text;
    }
    if (config_->stream) body["stream_options"] = {{"include_usage", true}};
    return body.dump();
  }

  // Sends one prompt and measures it; never fails: an error is the result's kind and text.
  RequestResult SendOne(const openai::Prompt& prompt, openai::Answer* answer) const {
    Clock& clock = context_.env->clock();
    HttpRequest request;
    request.method = "POST";
    request.url = config_->url + config_->endpoint_path();
    request.body = Body(prompt);
    request.connect_timeout = std::min(kConnectTimeout, config_->request_timeout);
    request.total_timeout = config_->request_timeout;

    openai::StreamReader reader;
    std::vector<absl::Duration> token_times;
    absl::Duration started;
    ChunkCallback on_chunk = nullptr;
    if (config_->stream) {
      on_chunk = [&](std::string_view piece) {
        const int tokens = reader.Feed(piece);
        if (tokens > 0) {
          const absl::Duration now = clock.Monotonic();
          for (int i = 0; i < tokens; ++i) token_times.push_back(now - started);
        }
        return true;
      };
    }
    started = clock.Monotonic();
    absl::StatusOr<HttpResponse> response = http_->Send(request, on_chunk);
    const absl::Duration latency = clock.Monotonic() - started;

    RequestResult result;
    v1::RequestTiming& t = result.timing;
    t.set_prompt_id(prompt.id);
    t.set_latency_seconds(absl::ToDoubleSeconds(latency));
    if (!token_times.empty()) t.set_time_to_first_token_seconds(absl::ToDoubleSeconds(token_times.front()));
    for (size_t i = 1; i < token_times.size(); ++i) {
      t.add_inter_token_seconds(absl::ToDoubleSeconds(token_times[i] - token_times[i - 1]));
    }
    auto fail = [&](ErrorKind kind, std::string message) {
      result.kind = kind;
      t.set_error(Printable(message));
      t.set_output_tokens(static_cast<uint32_t>(reader.token_events()));
      t.set_token_source("chunks");
      return result;
    };

    if (!response.ok()) {
      const absl::Status& s = response.status();
      if (absl::IsDeadlineExceeded(s)) {
        return fail(ErrorKind::kTimeout, absl::StrCat("timeout after ", absl::FormatDuration(config_->request_timeout),
                                                      " (", reader.events(), " chunks received): ", s.message()));
      }
      if (reader.events() > 0) {
        return fail(ErrorKind::kStreamCut,
                    absl::StrCat("stream cut after ", reader.events(), " chunks: ", s.message()));
      }
      return fail(ErrorKind::kConnection, std::string(s.message()));
    }
    if (response->status != 200) {
      std::optional<std::string> message = openai::ParseErrorMessage(response->body);
      return fail(ErrorKind::kHttp, absl::StrCat("HTTP ", response->status, ": ",
                                                 message.has_value() ? *message : QuoteBody(response->body)));
    }
    if (config_->stream) {
      if (reader.error().has_value()) return fail(ErrorKind::kBadResponse, *reader.error());
      if (!reader.done()) {
        return fail(ErrorKind::kStreamCut,
                    absl::StrCat("stream cut after ", reader.events(), " chunks: it ended without data: [DONE]"));
      }
      *answer = reader.answer();
    } else {
      absl::StatusOr<openai::Answer> parsed = openai::ParseAnswer(response->body);
      if (!parsed.ok()) {
        return fail(ErrorKind::kBadResponse, absl::StrCat("answer 200 is not a completion: ", parsed.status().message(),
                                                          ": ", QuoteBody(response->body)));
      }
      *answer = std::move(*parsed);
    }
    if (answer->usage.has_value()) {
      t.set_output_tokens(static_cast<uint32_t>(answer->usage->completion_tokens));
      t.set_token_source("usage");
    } else if (config_->stream) {
      t.set_output_tokens(static_cast<uint32_t>(reader.token_events()));
      t.set_token_source("chunks");
    } else {
      t.set_token_source("none");
    }
    return result;
  }

  void Fail(v1::RunRecord* record, std::string message) {
    v1::RunStatus* status = record->mutable_status();
    status->set_code(v1::RunStatus::CODE_FAILED);
    status->set_message(Printable(message));
  }

  const std::shared_ptr<const OpenAiConfig> config_;
  const BackendContext context_;
  const std::shared_ptr<HttpClient> http_;
  const std::string mode_;
  const int concurrency_;
  const int max_tokens_;
  // Not const: an answer may reveal a simulator that /models did not (see Run).
  SessionInfo info_;
  bool warmed_up_ = false;
  bool alive_ = true;
  std::string dead_reason_;
};

class OpenAiBackend : public Backend {
 public:
  OpenAiBackend(OpenAiConfig config, BackendContext context, std::shared_ptr<HttpClient> http)
      : config_(std::make_shared<const OpenAiConfig>(std::move(config))),
        context_(std::move(context)),
        http_(std::move(http)) {}

  std::string name() const override { return kBackendName; }
  FigureDeclarations figures() const override { return openai::kFigures; }
  std::vector<std::string> matrix_axes() const override { return {"mode", "concurrency", "max_tokens"}; }
  std::vector<std::string> default_axis_values(const std::string& axis) const override {
    if (axis == "mode") return {kDefaultMode};
    return {};
  }

  absl::Status CheckCombination(const Combination& combination) const override {
    return Resolve(combination, nullptr, nullptr, nullptr);
  }

  absl::StatusOr<std::unique_ptr<BackendSession>> Open(const Combination& combination,
                                                       std::string* /*log_tail*/) override {
    std::string mode;
    int concurrency = 0;
    int max_tokens = 0;
    if (absl::Status s = Resolve(combination, &mode, &concurrency, &max_tokens); !s.ok()) return s;
    SessionInfo info;
    if (absl::Status s = ReadModels(&info); !s.ok()) return s;
    info.params["url"] = config_->url;
    if (context_.log) {
      context_.log(absl::StrCat("openai: ", config_->url, " serves ", config_->model, " (owned_by ",
                                info.backend_version, info.simulated ? ", SIMULATED" : "", ")"));
    }
    return std::unique_ptr<BackendSession>(
        new OpenAiSession(config_, context_, http_, mode, concurrency, max_tokens, std::move(info)));
  }

 private:
  absl::Status Resolve(const Combination& combination, std::string* mode, int* concurrency, int* max_tokens) const {
    int c = config_->concurrency;
    int m = config_->max_tokens;
    for (const auto& [axis, out, max] : {std::tuple{"concurrency", &c, 1024}, std::tuple{"max_tokens", &m, 1 << 20}}) {
      auto it = combination.find(axis);
      if (it == combination.end()) continue;
      if (!absl::SimpleAtoi(it->second, out) || *out < 1 || *out > max) {
        return absl::InvalidArgumentError(
            absl::StrCat("matrix value ", axis, "=", it->second, " is not an integer from 1 to ", max));
      }
    }
    if (mode != nullptr) {
      auto it = combination.find("mode");
      *mode = it != combination.end() ? it->second : kDefaultMode;
    }
    if (concurrency != nullptr) *concurrency = c;
    if (max_tokens != nullptr) *max_tokens = m;
    return absl::OkStatus();
  }

  // Reads GET /models: the model must be served; owned_by is the server's kind ("vllm",
  // "llamacpp", ...); owned_by or the model's id may say it is a benchfleet simulator.
  absl::Status ReadModels(SessionInfo* info) {
    HttpRequest request;
    request.url = config_->url + "/models";
    request.connect_timeout = kConnectTimeout;
    request.total_timeout = std::min(kModelsTimeout, config_->request_timeout);
    absl::StatusOr<HttpResponse> response = http_->Send(request);
    const std::string what = absl::StrCat("cannot read ", request.url, ": ");
    if (!response.ok()) return absl::Status(response.status().code(), absl::StrCat(what, response.status().message()));
    if (response->status != 200) {
      return absl::UnavailableError(
          absl::StrCat(what, "it answered ", response->status, ": ", QuoteBody(response->body)));
    }
    const nlohmann::json j = nlohmann::json::parse(response->body, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("data") || !j["data"].is_array()) {
      return absl::UnavailableError(absl::StrCat(what, "not a model list: ", QuoteBody(response->body)));
    }
    std::vector<std::string> served;
    for (const nlohmann::json& model : j["data"]) {
      if (!model.is_object() || !model.contains("id") || !model["id"].is_string()) continue;
      const std::string id = model["id"].get<std::string>();
      served.push_back(id);
      if (id != config_->model) continue;
      const std::string owner =
          model.contains("owned_by") && model["owned_by"].is_string() ? model["owned_by"].get<std::string>() : "";
      info->backend_version = owner.empty() ? "unknown" : Printable(owner);
      for (const auto& [field, value] : {std::pair<const char*, const std::string&>{"owned_by", owner},
                                         std::pair<const char*, const std::string&>{"id", id}}) {
        if (info->simulated || !SaysSimulatorIdentity(value)) continue;
        info->simulated = true;
        info->params["simulated_by"] = Printable(absl::StrCat("/models ", field, ": ", value));
      }
      if (model.contains("max_model_len") && model["max_model_len"].is_number_integer()) {
        info->params["max_model_len"] = absl::StrCat(model["max_model_len"].get<int64_t>());
      }
      return absl::OkStatus();
    }
    return absl::FailedPreconditionError(
        absl::StrCat("the server at ", config_->url, " does not serve model ", config_->model,
                     " (its /models lists: ", served.empty() ? "none" : absl::StrJoin(served, ", "), ")"));
  }

  const std::shared_ptr<const OpenAiConfig> config_;
  const BackendContext context_;
  const std::shared_ptr<HttpClient> http_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> NewOpenAiBackend(const YAML::Node& section, const BackendContext& context) {
  if (context.env == nullptr || context.allow == nullptr) {
    return absl::InvalidArgumentError("the openai backend needs an Env and an allow-list");
  }
  absl::StatusOr<OpenAiConfig> config = openai::ParseOpenAiSection(section, *context.allow, context.env);
  if (!config.ok()) return config.status();
  if (context.services.http == nullptr) {
    return absl::FailedPreconditionError("the openai backend needs the agent's HTTP client (BackendContext::services)");
  }
  // The agent's client, borrowed (no-op deleter): it outlives the backend and its sessions.
  std::shared_ptr<HttpClient> http(context.services.http, [](HttpClient*) {});
  return std::unique_ptr<Backend>(new OpenAiBackend(std::move(*config), context, std::move(http)));
}

}  // namespace benchfleet::agent
