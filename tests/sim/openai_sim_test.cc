// Tests of openai-sim (tests/sim/openai): the built program on a free port, spoken to over raw
// HTTP/1.1 so the SSE framing, the usage chunk, the timing and the faults are visible as sent.
#include "tests/sim/openai/openai_sim.h"

#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/sim/sim_test_support.h"
#include "tests/support/subprocess.h"

namespace benchfleet::sim::openai {
namespace {

using testing::Exchange;
using testing::Json;
using testing::Response;

constexpr char kPrompt[] = "Explain in one sentence what a GPU is.";

// A running openai-sim; killed at the end of the test.
class OpenAiSimProcess {
 public:
  explicit OpenAiSimProcess(std::vector<std::string> args) {
    if (std::getenv("BENCHFLEET_BIN_DIR") == nullptr) ::setenv("BENCHFLEET_BIN_DIR", BENCHFLEET_SIM_DEFAULT_BIN_DIR, 1);
    dir_ = benchfleet::testing::MakeTempDir("openai-sim-");
    port_ = benchfleet::testing::FreePort();
    std::vector<std::string> argv = {benchfleet::testing::BinaryPath("openai-sim"), "--port", std::to_string(port_),
                                     "--model", "sim-model"};
    argv.insert(argv.end(), args.begin(), args.end());
    process_ = std::make_unique<benchfleet::testing::Subprocess>(argv, std::map<std::string, std::string>{},
                                                                 dir_ + "/server.log");
    for (int i = 0; i < 200; i++) {
      if (Exchange(port_, "GET", "/health", "", std::chrono::seconds(1)).status == 200) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  Response Post(const std::string& path, const Json& body,
                std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    return Exchange(port_, "POST", path, body.dump(), timeout);
  }
  Response Get(const std::string& path) { return Exchange(port_, "GET", path); }

 private:
  std::string dir_;
  int port_ = 0;
  std::unique_ptr<benchfleet::testing::Subprocess> process_;
};

Json CompletionRequest(int max_tokens, bool stream) {
  Json body = {{"model", "sim-model"}, {"prompt", kPrompt}, {"max_tokens", max_tokens},
               {"temperature", 0},     {"seed", 42},        {"stream", stream}};
  if (stream) body["stream_options"] = {{"include_usage", true}};
  return body;
}

Json ChatRequest(int max_tokens, bool stream) {
  Json body = {{"model", "sim-model"},
               {"messages", Json::array({{{"role", "user"}, {"content", kPrompt}}})},
               {"max_tokens", max_tokens},
               {"seed", 42},
               {"stream", stream}};
  if (stream) body["stream_options"] = {{"include_usage", true}};
  return body;
}

// The JSON of each `data:` event of a chunked SSE body, "[DONE]" as a string.
std::vector<Json> Events(const Response& r) {
  std::vector<Json> events;
  for (const std::string& chunk : r.chunks) {
    EXPECT_EQ(chunk.rfind("data: ", 0), 0u) << chunk;
    EXPECT_EQ(chunk.substr(chunk.size() - 2), "\n\n") << chunk;
    const std::string data = chunk.substr(6, chunk.size() - 8);
    events.push_back(data == "[DONE]" ? Json("[DONE]") : Json::parse(data));
  }
  return events;
}

TEST(OpenAiSimTest, ModelsSayItIsTheSimulator) {
  OpenAiSimProcess sim({});
  const Response r = sim.Get("/v1/models");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json j = r.JsonBody();
  EXPECT_EQ(j["object"], "list");
  ASSERT_EQ(j["data"].size(), 1u);
  EXPECT_EQ(j["data"][0]["id"], "sim-model");
  EXPECT_EQ(j["data"][0]["object"], "model");
  EXPECT_EQ(j["data"][0]["owned_by"], "benchfleet-simulator");
  EXPECT_EQ(j["data"][0]["max_model_len"], 4096);
}

TEST(OpenAiSimTest, WholeCompletionCarriesUsageAndTheSimulatedFingerprint) {
  OpenAiSimProcess sim({"--sim-ttft-ms", "0", "--sim-tps", "1000"});
  const Response r = sim.Post("/v1/completions", CompletionRequest(8, false));
  ASSERT_EQ(r.status, 200) << r.body;
  const Json j = r.JsonBody();
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["id"], "cmpl-sim-1");
  EXPECT_EQ(j["system_fingerprint"], "benchfleet-sim (SIMULATED)");
  // "Explain"(2) "in" "one" "sentence"(2) "what" "a" "GPU" "is." = 10 tokens.
  EXPECT_EQ(j["usage"], Json::parse(R"({"prompt_tokens":10,"completion_tokens":8,"total_tokens":18})"));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  std::string expected;
  for (const std::string& t : GenerateTokens(42, kPrompt, 8)) expected += t;
  EXPECT_EQ(j["choices"][0]["text"], expected);
}

TEST(OpenAiSimTest, StreamedCompletionEndsWithTheUsageChunkAndDone) {
  OpenAiSimProcess sim({"--sim-ttft-ms", "0", "--sim-tps", "1000"});
  const Response r = sim.Post("/v1/completions", CompletionRequest(5, true));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("Content-Type"), "text/event-stream; charset=utf-8");
  ASSERT_TRUE(r.complete);
  const std::vector<Json> events = Events(r);
  ASSERT_EQ(events.size(), 7u) << r.body;  // 5 tokens, usage, [DONE]
  const std::vector<std::string> tokens = GenerateTokens(42, kPrompt, 5);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(events[i]["object"], "text_completion");
    EXPECT_EQ(events[i]["choices"][0]["text"], tokens[i]);
    EXPECT_TRUE(events[i]["usage"].is_null());
    EXPECT_EQ(events[i]["choices"][0]["finish_reason"], i == 4 ? Json("length") : Json(nullptr));
  }
  EXPECT_EQ(events[5]["choices"], Json::array());
  EXPECT_EQ(events[5]["usage"], Json::parse(R"({"prompt_tokens":10,"completion_tokens":5,"total_tokens":15})"));
  EXPECT_EQ(events[6], "[DONE]");
}

TEST(OpenAiSimTest, StreamedChatSendsTheRoleFirstAndTheSameTextAsTheWholeAnswer) {
  OpenAiSimProcess sim({"--sim-ttft-ms", "0", "--sim-tps", "1000"});
  const Response whole = sim.Post("/v1/chat/completions", ChatRequest(4, false));
  ASSERT_EQ(whole.status, 200) << whole.body;
  EXPECT_EQ(whole.JsonBody()["object"], "chat.completion");
  EXPECT_EQ(whole.JsonBody()["choices"][0]["message"]["role"], "assistant");
  const Response r = sim.Post("/v1/chat/completions", ChatRequest(4, true));
  const std::vector<Json> events = Events(r);
  ASSERT_EQ(events.size(), 8u) << r.body;  // role, 4 tokens, finish, usage, [DONE]
  EXPECT_EQ(events[0]["object"], "chat.completion.chunk");
  EXPECT_EQ(events[0]["choices"][0]["delta"], Json::parse(R"({"role":"assistant","content":""})"));
  std::string text;
  for (size_t i = 1; i <= 4; ++i) text += events[i]["choices"][0]["delta"]["content"].get<std::string>();
  EXPECT_EQ(text, whole.JsonBody()["choices"][0]["message"]["content"]);
  EXPECT_EQ(events[5]["choices"][0]["delta"], Json::object());
  EXPECT_EQ(events[5]["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(events[6]["usage"]["completion_tokens"], 4);
  EXPECT_EQ(events[7], "[DONE]");
}

TEST(OpenAiSimTest, SpendsTheTimeToFirstTokenAndTheTokenRate) {
  OpenAiSimProcess sim({"--sim-ttft-ms", "200", "--sim-tps", "50"});
  const auto start = std::chrono::steady_clock::now();
  const Response r = sim.Post("/v1/completions", CompletionRequest(6, false));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.status, 200);
  // 200 ms, then 5 more tokens at 20 ms each.
  EXPECT_GE(seconds, 0.3);
  EXPECT_LT(seconds, 1.5);
}

TEST(OpenAiSimTest, FailsOnDemandAndCountsEveryGenerationRequest) {
  OpenAiSimProcess sim({"--sim-ttft-ms", "0", "--sim-tps", "1000", "--sim-fail", "http500-on-request", "2",
                        "--sim-fail", "cut-stream-on-request", "3:2", "--sim-fail", "hang-on-request", "4"});
  EXPECT_EQ(sim.Post("/v1/completions", CompletionRequest(4, true)).status, 200);
  const Response error = sim.Post("/v1/completions", CompletionRequest(4, true));
  EXPECT_EQ(error.status, 500);
  EXPECT_EQ(error.JsonBody()["error"]["message"], "SIMULATED: internal server error on request 2");
  const Response cut = sim.Post("/v1/completions", CompletionRequest(4, true));
  EXPECT_EQ(cut.status, 200);
  EXPECT_FALSE(cut.complete);
  EXPECT_EQ(cut.chunks.size(), 2u);
  const Response hang = sim.Post("/v1/completions", CompletionRequest(4, true), std::chrono::milliseconds(500));
  EXPECT_EQ(hang.status, 0);
  EXPECT_TRUE(hang.timed_out);
  const Response after = sim.Post("/v1/chat/completions", ChatRequest(4, false));
  EXPECT_EQ(after.status, 200);
  EXPECT_EQ(after.JsonBody()["id"], "chatcmpl-sim-5");
}

TEST(OpenAiSimTest, RefusesAnUnknownModelLikeVllm) {
  OpenAiSimProcess sim({});
  Json body = CompletionRequest(4, false);
  body["model"] = "gpt-4";
  const Response r = sim.Post("/v1/completions", body);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.JsonBody()["error"]["message"], "The model `gpt-4` does not exist.");
}

TEST(OpenAiSimTest, ParsesItsFlags) {
  Options o;
  std::vector<std::string> args = {"--sim-fail", "cut-stream-on-request", "3"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  EXPECT_EQ(ParseOptions(static_cast<int>(argv.size()), argv.data(), &o),
            "--sim-fail cut-stream-on-request needs N:K (request N, cut after K chunks)");
  EXPECT_EQ(CountPromptTokens(""), 1);
  EXPECT_EQ(CountPromptTokens("abcdefghi  xy"), 4);
  // A shorter limit gives a prefix of the same text.
  const std::vector<std::string> five = GenerateTokens(1, "p", 5);
  EXPECT_EQ(GenerateTokens(1, "p", 3), std::vector<std::string>(five.begin(), five.begin() + 3));
  EXPECT_NE(GenerateTokens(1, "p", 8), GenerateTokens(2, "p", 8));
}

}  // namespace
}  // namespace benchfleet::sim::openai
