// openai-sim: a SIMULATED OpenAI-compatible server (the API vLLM, TGI, llama-server and Ollama
// serve) for the agent's openai backend: POST /v1/completions and /v1/chat/completions, whole or
// streamed (server-sent events, `data: [DONE]`, the usage chunk of stream_options.include_usage),
// GET /v1/models, /health and /version; a configurable time to first token and token rate, spent
// for real; faults on demand (an HTTP 500, a stream cut after K chunks, a hang). It always says
// what it is: /v1/models `owned_by` is "benchfleet-simulator" and every answer's
// `system_fingerprint` is "benchfleet-sim (SIMULATED)". See tests/sim/README.md.
// Owner: tests/sim. Thread-safe: requests are handled concurrently, one thread per connection.
#ifndef BENCHFLEET_TESTS_SIM_OPENAI_OPENAI_SIM_H_
#define BENCHFLEET_TESTS_SIM_OPENAI_OPENAI_SIM_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/sim/llama_server/http_server.h"

namespace benchfleet::sim::openai {

inline constexpr char kOwnedBy[] = "benchfleet-simulator";
inline constexpr char kFingerprint[] = "benchfleet-sim (SIMULATED)";

// A fault for one generation request (1-based, counting every POST to the two generation
// endpoints since start, failed ones included).
struct Fault {
  enum class Kind { kHttp500, kCutStream, kHang };
  Kind kind = Kind::kHttp500;
  int64_t request = 0;
  int64_t after_chunks = 0;  // kCutStream: token chunks sent before the connection is closed
};

struct Options {
  std::string host = "127.0.0.1";
  int port = 8000;
  std::string model = "benchfleet-sim-model";
  double tokens_per_second = 200;  // decode rate after the first token
  int64_t ttft_ms = 20;            // time from the request to the first token
  int64_t max_model_len = 4096;
  std::vector<Fault> faults;
};

// Parses the command line (argv[0] excluded); returns "" or the error.
std::string ParseOptions(int argc, char** argv, Options* options);

// The usage text of --help.
std::string Usage();

// The generated text of a request, token by token: deterministic in (seed, prompt), exactly
// max_tokens pieces (finish_reason "length").
std::vector<std::string> GenerateTokens(uint64_t seed, const std::string& prompt, int64_t max_tokens);

// The prompt's token count: ceil(bytes / 4) per run of non-whitespace bytes, at least 1.
int64_t CountPromptTokens(const std::string& prompt);

class OpenAiSim {
 public:
  explicit OpenAiSim(Options options) : options_(std::move(options)) {}

  void Handle(const HttpRequest& req, HttpResponder& res);

  // Generation requests received so far.
  int64_t requests() const { return requests_.load(); }

 private:
  void Generate(const HttpRequest& req, HttpResponder& res, bool chat);
  const Fault* FaultFor(int64_t request) const;

  const Options options_;
  std::atomic<int64_t> requests_{0};
};

}  // namespace benchfleet::sim::openai

#endif  // BENCHFLEET_TESTS_SIM_OPENAI_OPENAI_SIM_H_
