#include "tests/sim/openai/openai_sim.h"

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <thread>

namespace benchfleet::sim::openai {
namespace {

using Json = nlohmann::ordered_json;
using SteadyClock = std::chrono::steady_clock;

// Pieces of the generated text: common English words, so the output reads as words.
constexpr const char* kVocabulary[] = {
    "the", "a",        "GPU",    "is",       "processor", "that",    "runs",     "many",  "small",  "tasks",
    "in",  "parallel", "for",    "graphics", "and",       "machine", "learning", "it",    "has",    "thousands",
    "of",  "cores",    "memory", "fast",     "wide",      "simple",  "data",     "model", "tokens", "quickly"};

uint64_t Fnv1a(uint64_t seed, const std::string& text) {
  uint64_t h = 1469598103934665603ULL ^ seed;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h == 0 ? 1 : h;
}

bool ParseInt(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end != '\0') return false;
  *out = v;
  return true;
}

std::string ErrorBody(const std::string& message, const std::string& type, int code) {
  Json e = Json::object();
  e["message"] = message;
  e["type"] = type;
  e["param"] = nullptr;
  e["code"] = code;
  return Json{{"error", e}}.dump();
}

void SendJson(HttpResponder& res, int status, const std::string& body) {
  res.Send(status, {}, "application/json", body);
}

std::string SseEvent(const std::string& data) { return "data: " + data + "\n\n"; }

}  // namespace

std::string Usage() {
  return "usage: openai-sim [--host H] [--port P] [--model NAME] [--sim-tps X] [--sim-ttft-ms N]\n"
         "                  [--sim-max-model-len N] [--sim-fail MODE ARG]...\n"
         "  MODE: http500-on-request N | cut-stream-on-request N:K | hang-on-request N\n";
}

std::string ParseOptions(int argc, char** argv, Options* o) {
  for (int i = 0; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    int64_t n = 0;
    if (flag == "--host") {
      if (!value(&o->host)) return "--host needs a value";
    } else if (flag == "--port") {
      if (!value(&v) || !ParseInt(v, &n) || n < 0 || n > 65535) return "--port needs a port number";
      o->port = static_cast<int>(n);
    } else if (flag == "--model") {
      if (!value(&o->model) || o->model.empty()) return "--model needs a name";
    } else if (flag == "--sim-tps") {
      if (!value(&v)) return "--sim-tps needs a rate";
      char* end = nullptr;
      o->tokens_per_second = std::strtod(v.c_str(), &end);
      if (*end != '\0' || !(o->tokens_per_second > 0)) return "--sim-tps needs a positive rate, got " + v;
    } else if (flag == "--sim-ttft-ms") {
      if (!value(&v) || !ParseInt(v, &o->ttft_ms) || o->ttft_ms < 0) return "--sim-ttft-ms needs a number >= 0";
    } else if (flag == "--sim-max-model-len") {
      if (!value(&v) || !ParseInt(v, &o->max_model_len) || o->max_model_len < 1)
        return "--sim-max-model-len needs a number >= 1";
    } else if (flag == "--sim-fail") {
      std::string mode, arg;
      if (!value(&mode) || !value(&arg)) return "--sim-fail needs MODE and ARG";
      Fault f;
      if (mode == "http500-on-request" || mode == "hang-on-request") {
        f.kind = mode == "hang-on-request" ? Fault::Kind::kHang : Fault::Kind::kHttp500;
        if (!ParseInt(arg, &f.request) || f.request < 1) return "--sim-fail " + mode + " needs a request number >= 1";
      } else if (mode == "cut-stream-on-request") {
        const size_t colon = arg.find(':');
        f.kind = Fault::Kind::kCutStream;
        if (colon == std::string::npos || !ParseInt(arg.substr(0, colon), &f.request) || f.request < 1 ||
            !ParseInt(arg.substr(colon + 1), &f.after_chunks) || f.after_chunks < 0) {
          return "--sim-fail cut-stream-on-request needs N:K (request N, cut after K chunks)";
        }
      } else {
        return "unknown --sim-fail mode " + mode;
      }
      o->faults.push_back(f);
    } else {
      return "unknown argument " + flag;
    }
  }
  return "";
}

std::vector<std::string> GenerateTokens(uint64_t seed, const std::string& prompt, int64_t max_tokens) {
  uint64_t state = Fnv1a(seed, prompt);
  std::vector<std::string> tokens;
  constexpr size_t kWords = sizeof(kVocabulary) / sizeof(kVocabulary[0]);
  for (int64_t i = 0; i < max_tokens; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    tokens.push_back(std::string(" ") + kVocabulary[state % kWords]);
  }
  return tokens;
}

int64_t CountPromptTokens(const std::string& prompt) {
  int64_t tokens = 0;
  size_t run = 0;
  for (size_t i = 0; i <= prompt.size(); ++i) {
    const bool space = i == prompt.size() || std::isspace(static_cast<unsigned char>(prompt[i]));
    if (!space) {
      ++run;
    } else if (run > 0) {
      tokens += static_cast<int64_t>((run + 3) / 4);
      run = 0;
    }
  }
  return tokens < 1 ? 1 : tokens;
}

const Fault* OpenAiSim::FaultFor(int64_t request) const {
  for (const Fault& f : options_.faults) {
    if (f.request == request) return &f;
  }
  return nullptr;
}

void OpenAiSim::Handle(const HttpRequest& req, HttpResponder& res) {
  if (req.method == "GET" && req.path == "/health") {
    res.Send(200, {}, "application/json", "");
  } else if (req.method == "GET" && req.path == "/version") {
    SendJson(res, 200, Json{{"version", kFingerprint}}.dump());
  } else if (req.method == "GET" && req.path == "/v1/models") {
    Json model = Json::object();
    model["id"] = options_.model;
    model["object"] = "model";
    model["created"] = static_cast<int64_t>(std::time(nullptr));
    model["owned_by"] = kOwnedBy;
    model["root"] = options_.model;
    model["parent"] = nullptr;
    model["max_model_len"] = options_.max_model_len;
    SendJson(res, 200, Json{{"object", "list"}, {"data", Json::array({model})}}.dump());
  } else if (req.method == "POST" && req.path == "/v1/completions") {
    Generate(req, res, /*chat=*/false);
  } else if (req.method == "POST" && req.path == "/v1/chat/completions") {
    Generate(req, res, /*chat=*/true);
  } else {
    SendJson(res, 404, Json{{"detail", "Not Found"}}.dump());
  }
}

void OpenAiSim::Generate(const HttpRequest& req, HttpResponder& res, bool chat) {
  const SteadyClock::time_point arrived = SteadyClock::now();
  const int64_t number = ++requests_;
  const Json body = Json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    return SendJson(res, 400, ErrorBody("the request body is not a JSON object", "BadRequestError", 400));
  }
  const std::string model = body.value("model", std::string());
  if (model != options_.model) {
    return SendJson(res, 404, ErrorBody("The model `" + model + "` does not exist.", "NotFoundError", 404));
  }
  std::string prompt;
  if (chat) {
    if (!body.contains("messages") || !body["messages"].is_array() || body["messages"].empty()) {
      return SendJson(res, 400, ErrorBody("messages must be a non-empty list", "BadRequestError", 400));
    }
    for (const Json& m : body["messages"]) {
      if (!m.is_object() || !m.contains("content") || !m["content"].is_string()) {
        return SendJson(res, 400, ErrorBody("every message needs a string content", "BadRequestError", 400));
      }
      prompt += m["content"].get<std::string>();
      prompt += '\n';
    }
  } else {
    if (!body.contains("prompt") || !body["prompt"].is_string()) {
      return SendJson(res, 400, ErrorBody("prompt must be a string", "BadRequestError", 400));
    }
    prompt = body["prompt"].get<std::string>();
  }
  int64_t max_tokens = 16;
  if (body.contains("max_tokens")) {
    if (!body["max_tokens"].is_number_integer() || body["max_tokens"].get<int64_t>() < 1) {
      return SendJson(res, 400, ErrorBody("max_tokens must be a positive integer", "BadRequestError", 400));
    }
    max_tokens = body["max_tokens"].get<int64_t>();
  }
  const uint64_t seed = body.contains("seed") && body["seed"].is_number_integer() ? body["seed"].get<uint64_t>() : 0;
  const bool stream = body.value("stream", false);
  const bool include_usage = stream && body.contains("stream_options") && body["stream_options"].is_object() &&
                             body["stream_options"].value("include_usage", false);
  const int64_t prompt_tokens = CountPromptTokens(prompt);
  if (prompt_tokens + max_tokens > options_.max_model_len) {
    return SendJson(
        res, 400,
        ErrorBody("This model's maximum context length is " + std::to_string(options_.max_model_len) +
                      " tokens. However, you requested " + std::to_string(prompt_tokens + max_tokens) + " tokens.",
                  "BadRequestError", 400));
  }

  const Fault* fault = FaultFor(number);
  if (fault != nullptr && fault->kind == Fault::Kind::kHttp500) {
    return SendJson(
        res, 500,
        ErrorBody("SIMULATED: internal server error on request " + std::to_string(number), "InternalServerError", 500));
  }
  if (fault != nullptr && fault->kind == Fault::Kind::kHang) {
    while (!res.PeerClosed()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    res.Drop();
    return;
  }

  const std::vector<std::string> tokens = GenerateTokens(seed, prompt, max_tokens);
  const std::string id = (chat ? "chatcmpl-sim-" : "cmpl-sim-") + std::to_string(number);
  const int64_t created = static_cast<int64_t>(std::time(nullptr));
  auto token_due = [&](size_t i) {
    const double seconds =
        static_cast<double>(options_.ttft_ms) / 1000.0 + static_cast<double>(i) / options_.tokens_per_second;
    return arrived + std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(seconds));
  };
  Json usage = Json::object();
  usage["prompt_tokens"] = prompt_tokens;
  usage["completion_tokens"] = static_cast<int64_t>(tokens.size());
  usage["total_tokens"] = prompt_tokens + static_cast<int64_t>(tokens.size());
  auto head = [&](const char* object) {
    Json o = Json::object();
    o["id"] = id;
    o["object"] = object;
    o["created"] = created;
    o["model"] = options_.model;
    o["system_fingerprint"] = kFingerprint;
    return o;
  };

  if (!stream) {
    std::this_thread::sleep_until(token_due(tokens.size() - 1));
    std::string text;
    for (const std::string& t : tokens) text += t;
    Json choice = Json::object();
    choice["index"] = 0;
    if (chat) {
      choice["message"] = Json{{"role", "assistant"}, {"content", text}};
    } else {
      choice["text"] = text;
    }
    choice["logprobs"] = nullptr;
    choice["finish_reason"] = "length";
    Json o = head(chat ? "chat.completion" : "text_completion");
    o["choices"] = Json::array({choice});
    o["usage"] = usage;
    return SendJson(res, 200, o.dump());
  }

  const char* object = chat ? "chat.completion.chunk" : "text_completion";
  auto chunk = [&](Json choice) {
    Json o = head(object);
    o["choices"] = Json::array({std::move(choice)});
    if (include_usage) o["usage"] = nullptr;
    return SseEvent(o.dump());
  };
  if (!res.BeginChunked(200, {}, "text/event-stream; charset=utf-8")) return;
  if (chat) {
    Json role = Json::object();
    role["index"] = 0;
    role["delta"] = Json{{"role", "assistant"}, {"content", ""}};
    role["logprobs"] = nullptr;
    role["finish_reason"] = nullptr;
    if (!res.WriteChunk(chunk(role))) return res.CloseConnection();
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (fault != nullptr && fault->kind == Fault::Kind::kCutStream && static_cast<int64_t>(i) == fault->after_chunks) {
      res.CloseConnection();  // no last chunk, no [DONE]: the client sees a broken stream
      return;
    }
    std::this_thread::sleep_until(token_due(i));
    Json choice = Json::object();
    choice["index"] = 0;
    if (chat) {
      choice["delta"] = Json{{"content", tokens[i]}};
    } else {
      choice["text"] = tokens[i];
    }
    choice["logprobs"] = nullptr;
    // Completions carry the finish_reason on the last token's chunk; chat sends an empty delta
    // with it after the last token, as OpenAI does.
    choice["finish_reason"] = !chat && i + 1 == tokens.size() ? Json("length") : Json(nullptr);
    if (!res.WriteChunk(chunk(choice))) return res.CloseConnection();
  }
  if (fault != nullptr && fault->kind == Fault::Kind::kCutStream) {  // K at or past the last token
    res.CloseConnection();
    return;
  }
  if (chat) {
    Json last = Json::object();
    last["index"] = 0;
    last["delta"] = Json::object();
    last["logprobs"] = nullptr;
    last["finish_reason"] = "length";
    if (!res.WriteChunk(chunk(last))) return res.CloseConnection();
  }
  if (include_usage) {
    Json o = head(object);
    o["choices"] = Json::array();
    o["usage"] = usage;
    if (!res.WriteChunk(SseEvent(o.dump()))) return res.CloseConnection();
  }
  res.WriteChunk(SseEvent("[DONE]"));
  res.EndChunked();
}

}  // namespace benchfleet::sim::openai
