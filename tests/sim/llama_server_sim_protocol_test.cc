// The simulator's HTTP side against the captures of the real llama-server: same status lines,
// headers in the same order, same JSON keys in the same order, byte-identical bodies where the
// values can be the same (health, errors) and identical apart from the generated text, timings,
// ids and build where they cannot.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/sim/sim_test_support.h"

namespace benchfleet::sim::testing {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The captures' command line (-c 256 -ngl 0 --metrics --slots on a CPU-only build), fast.
std::vector<std::string> CaptureArgs(std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"-c", "256", "-ngl", "0", "--metrics", "--slots", "--sim-gpu-device", "none",
                                   "--sim-load-ms", "20", "--sim-cpu-tps", "500"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::vector<std::string> HeaderNames(const Response& r) {
  std::vector<std::string> out;
  for (const auto& h : r.headers) out.push_back(h.first);
  return out;
}

// Headers without Content-Length (which follows the body) must be the captured ones.
Headers WithoutLength(const Headers& h) {
  Headers out;
  for (const auto& kv : h) {
    if (kv.first != "Content-Length") out.push_back(kv);
  }
  return out;
}

// SSE events of a body: the text between "data: " and the blank line.
std::vector<std::string> Events(const std::string& body) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < body.size()) {
    const size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) break;
    std::string event = body.substr(pos, end - pos);
    out.push_back(event.rfind("data: ", 0) == 0 ? event.substr(6) : "<not data: " + event + ">");
    pos = end + 2;
  }
  return out;
}

class ProtocolTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> more = {}) {
    sim_ = std::make_unique<Sim>(CaptureArgs(std::move(more)));
    ASSERT_TRUE(sim_->WaitReady()) << sim_->log();
  }
  std::unique_ptr<Sim> sim_;
};

TEST(HealthTest, AnswersTheCaptured503WhileLoadingThenTheCaptured200) {
  Sim sim(CaptureArgs({"--sim-load-ms", "600"}));
  ASSERT_TRUE(sim.WaitListening()) << sim.log();
  EXPECT_EQ(sim.Get("/health").CurlForm(), Fixture("health_loading.txt"));
  // Every endpoint is unavailable while the model loads.
  EXPECT_EQ(sim.Post("/completion", CaptureRequest(4)).status, 503);
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  EXPECT_EQ(sim.Get("/health").CurlForm(), Fixture("health.txt"));
}

TEST_F(ProtocolTest, PropsAreTheCapturedPropsButForBuildAndMediaMarker) {
  Start();
  const Response r = sim_->Get("/props");
  const Response capture = ParseCapture(Fixture("props.txt"));
  EXPECT_EQ(r.status_line, capture.status_line);
  EXPECT_EQ(WithoutLength(r.headers), WithoutLength(capture.headers));
  Json props = r.JsonBody();
  const Json captured = capture.JsonBody();
  EXPECT_EQ(KeyPaths(props), KeyPaths(captured));
  EXPECT_EQ(props["build_info"], "b10587-benchfleet-sim (SIMULATED)");
  EXPECT_THAT(props["media_marker"].get<std::string>(), StartsWith("<__media_"));
  props["build_info"] = captured["build_info"];
  props["media_marker"] = captured["media_marker"];
  EXPECT_EQ(props.dump(), captured.dump());
}

TEST_F(ProtocolTest, CompletionIsTheCapturedCompletionButForTextAndTimings) {
  Start();
  const Response r = sim_->Post("/completion", CaptureRequest(24));
  const Response capture = ParseCapture(Fixture("completion_1.txt"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(WithoutLength(r.headers), WithoutLength(capture.headers));
  EXPECT_EQ(r.Header("Content-Length"), std::to_string(r.body.size()));
  Json got = r.JsonBody();
  Json want = capture.JsonBody();
  EXPECT_EQ(Keys(got), Keys(want));
  EXPECT_EQ(KeyPaths(got), KeyPaths(want));
  EXPECT_EQ(Keys(got["timings"]), Keys(want["timings"]));
  EXPECT_FALSE(got["content"].get<std::string>().empty());
  EXPECT_EQ(got["timings"]["predicted_n"], 24);
  EXPECT_EQ(got["timings"]["prompt_n"], 11);
  EXPECT_EQ(got["timings"]["cache_n"], 0);
  got["content"] = want["content"];
  got["timings"] = want["timings"];
  EXPECT_EQ(got.dump(), want.dump());
}

TEST_F(ProtocolTest, StreamIsFramedLikeTheCapturedStream) {
  Start();
  const Response r = sim_->Post("/completion", CaptureRequest(24, 42, /*stream=*/true));
  const Response capture = ParseCapture(Fixture("completion_stream.txt"));
  ASSERT_EQ(r.status, 200);
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.headers, capture.headers);  // no Content-Length: chunked
  const std::vector<std::string> events = Events(r.body);
  const std::vector<std::string> captured = Events(capture.body);
  ASSERT_EQ(events.size(), captured.size());  // 24 tokens and the final result; no [DONE]
  EXPECT_EQ(r.body.substr(r.body.size() - 2), "\n\n");
  EXPECT_EQ(r.chunks.size(), events.size());  // one HTTP chunk per event
  std::string text;
  for (size_t i = 0; i + 1 < events.size(); i++) {
    Json e = Json::parse(events[i]);
    Json c = Json::parse(captured[i]);
    EXPECT_EQ(KeyPaths(e), KeyPaths(c));
    EXPECT_EQ(e["tokens_predicted"], i + 1);
    EXPECT_EQ(e["tokens"].size(), 1u);
    text += e["content"].get<std::string>();
    e["content"] = c["content"];
    e["tokens"] = c["tokens"];
    EXPECT_EQ(e.dump(), c.dump());
  }
  Json last = Json::parse(events.back());
  Json captured_last = Json::parse(captured.back());
  EXPECT_EQ(KeyPaths(last), KeyPaths(captured_last));
  last["timings"] = captured_last["timings"];
  EXPECT_EQ(last.dump(), captured_last.dump());
  // The stream carries the text the plain request returns.
  EXPECT_EQ(text, sim_->Post("/completion", CaptureRequest(24)).JsonBody()["content"]);
}

TEST_F(ProtocolTest, OpenAiCompletionsAreTheCapturedShape) {
  Start();
  const std::string request =
      R"({"prompt":"Explain in one sentence what a GPU is.","max_tokens":24,"temperature":0,"cache_prompt":false,"seed":42})";
  const Response r = sim_->Post("/v1/completions", request);
  const Response capture = ParseCapture(Fixture("v1_completions.txt"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(WithoutLength(r.headers), WithoutLength(capture.headers));
  Json got = r.JsonBody();
  Json want = capture.JsonBody();
  EXPECT_EQ(KeyPaths(got), KeyPaths(want));
  EXPECT_EQ(got["usage"].dump(), want["usage"].dump());
  EXPECT_EQ(got["system_fingerprint"], "b10587-benchfleet-sim (SIMULATED)");
  EXPECT_EQ(got["id"].get<std::string>().size(), want["id"].get<std::string>().size());
  EXPECT_EQ(got["choices"][0]["text"], sim_->Post("/completion", CaptureRequest(24)).JsonBody()["content"]);
  for (const char* k : {"created", "id", "timings", "system_fingerprint"}) got[k] = want[k];
  got["choices"][0]["text"] = want["choices"][0]["text"];
  EXPECT_EQ(got.dump(), want.dump());

  Json stream_request = Json::parse(request);
  stream_request["stream"] = true;
  const Response s = sim_->Post("/v1/completions", stream_request.dump());
  const Response stream_capture = ParseCapture(Fixture("v1_completions_stream.txt"));
  EXPECT_EQ(s.headers, stream_capture.headers);
  const std::vector<std::string> events = Events(s.body);
  const std::vector<std::string> captured = Events(stream_capture.body);
  ASSERT_EQ(events.size(), captured.size());  // 24 tokens, the final chunk, [DONE]
  EXPECT_EQ(events.back(), "[DONE]");
  const std::string id = Json::parse(events[0])["id"];
  for (size_t i = 0; i + 1 < events.size(); i++) {
    Json e = Json::parse(events[i]);
    Json c = Json::parse(captured[i]);
    EXPECT_EQ(KeyPaths(e), KeyPaths(c)) << i;
    EXPECT_EQ(e["id"], id);
    for (const char* k : {"created", "id", "system_fingerprint", "timings"}) {
      if (c.contains(k)) e[k] = c[k];
    }
    e["choices"][0]["text"] = c["choices"][0]["text"];
    EXPECT_EQ(e.dump(), c.dump()) << i;
  }
}

TEST_F(ProtocolTest, SameRequestSameTextAnotherSeedAnotherText) {
  Start();
  const std::string a = sim_->Post("/completion", CaptureRequest(12, 42)).JsonBody()["content"];
  const std::string b = sim_->Post("/completion", CaptureRequest(12, 42)).JsonBody()["content"];
  const std::string c = sim_->Post("/completion", CaptureRequest(12, 43)).JsonBody()["content"];
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  Sim other(CaptureArgs());  // and in another process
  ASSERT_TRUE(other.WaitReady());
  EXPECT_EQ(other.Post("/completion", CaptureRequest(12, 42)).JsonBody()["content"], a);
}

TEST_F(ProtocolTest, RepeatedPromptIsServedFromTheSlotCache) {
  Start();
  const std::string request = R"({"prompt":"Explain in one sentence what a GPU is.","n_predict":4})";
  EXPECT_EQ(sim_->Post("/completion", request).JsonBody()["timings"]["cache_n"], 0);
  const Json second = sim_->Post("/completion", request).JsonBody();
  EXPECT_EQ(second["timings"]["cache_n"], 10);
  EXPECT_EQ(second["timings"]["prompt_n"], 1);
  EXPECT_EQ(second["tokens_evaluated"], 11);
  const Json oai = sim_->Post("/v1/completions", R"({"prompt":"Explain in one sentence what a GPU is.","max_tokens":4})")
                       .JsonBody();
  EXPECT_EQ(oai["usage"]["prompt_tokens_details"]["cached_tokens"], 10);
}

TEST_F(ProtocolTest, WithoutATokenLimitStopsAtEos) {
  Start();
  const Json r = sim_->Post("/completion", R"({"prompt":"Tell me a story.","seed":7})").JsonBody();
  EXPECT_EQ(r["stop_type"], "eos");
  EXPECT_EQ(r["generation_settings"]["n_predict"], -1);
  const int n = r["tokens_predicted"];
  EXPECT_GE(n, 17);
  EXPECT_LE(n, 65);
  // The same text, cut by a limit one short of the end.
  const Json limited =
      sim_->Post("/completion", Json{{"prompt", "Tell me a story."}, {"seed", 7}, {"n_predict", n - 1}}.dump())
          .JsonBody();
  EXPECT_EQ(limited["content"], r["content"]);
  EXPECT_EQ(limited["stop_type"], "limit");
}

TEST_F(ProtocolTest, StopsAtAStopWord) {
  Start();
  const Response s = sim_->Post("/completion", CaptureRequest(24, 42, true));
  std::vector<std::string> pieces;
  for (const std::string& e : Events(s.body)) {
    const Json j = Json::parse(e);
    if (!j["stop"].get<bool>()) pieces.push_back(j["content"]);
  }
  ASSERT_EQ(pieces.size(), 24u);
  std::string before;
  size_t k = 3;
  for (size_t i = 0; i < k; i++) before += pieces[i];
  while (k < pieces.size() && (before + pieces[k]).find(pieces[k]) != before.size()) before += pieces[k++];
  ASSERT_LT(k, pieces.size());
  Json req = Json::parse(CaptureRequest(24));
  req["stop"] = Json::array({pieces[k]});
  const Json r = sim_->Post("/completion", req.dump()).JsonBody();
  EXPECT_EQ(r["stop_type"], "word");
  EXPECT_EQ(r["stopping_word"], pieces[k]);
  EXPECT_EQ(r["content"], before);
  EXPECT_EQ(r["tokens_predicted"], k + 1);
}

TEST_F(ProtocolTest, MetricsCountTheRequestsInTheCapturedFormat) {
  Start();
  ASSERT_EQ(sim_->Post("/completion", CaptureRequest(8)).status, 200);
  ASSERT_EQ(sim_->Post("/completion", CaptureRequest(8)).status, 200);
  const Response r = sim_->Get("/metrics");
  const Response capture = ParseCapture(Fixture("metrics_after.txt"));
  EXPECT_EQ(HeaderNames(r), HeaderNames(capture));
  EXPECT_EQ(r.Header("Content-Type"), "text/plain; version=0.0.4");
  const std::vector<std::string> lines = Lines(r.body);
  const std::vector<std::string> captured = Lines(capture.body);
  ASSERT_EQ(lines.size(), captured.size());
  for (size_t i = 0; i < lines.size(); i++) {
    if (captured[i][0] == '#') {
      EXPECT_EQ(lines[i], captured[i]);
    } else {
      EXPECT_EQ(lines[i].substr(0, lines[i].find(' ')), captured[i].substr(0, captured[i].find(' ')));
    }
  }
  EXPECT_THAT(r.body, HasSubstr("\nllamacpp:prompt_tokens_total 22\n"));
  EXPECT_THAT(r.body, HasSubstr("\nllamacpp:tokens_predicted_total 16\n"));
  EXPECT_THAT(r.body, HasSubstr("\nllamacpp:n_decode_total 16\n"));
  EXPECT_THAT(r.body, HasSubstr("\nllamacpp:n_tokens_max 18\n"));
  EXPECT_THAT(r.body, HasSubstr("\nllamacpp:n_busy_slots_per_decode 1\n"));
  // The throughput gauges cover the time since the previous scrape.
  EXPECT_THAT(sim_->Get("/metrics").body, HasSubstr("\nllamacpp:predicted_tokens_seconds 0\n"));
}

TEST(MetricsTest, AreNotSupportedWithoutTheFlag) {
  Sim sim({"--sim-load-ms", "10"});
  ASSERT_TRUE(sim.WaitReady());
  const Response r = sim.Get("/metrics");
  EXPECT_EQ(r.status, 501);
  EXPECT_EQ(r.body,
            R"({"error":{"code":501,"message":"This server does not support metrics endpoint. Start it with `--metrics`","type":"not_supported_error"}})");
  EXPECT_EQ(r.Header("Connection"), "close");
}

TEST_F(ProtocolTest, MalformedJsonIsTheCaptured500) {
  Start();
  // 35 bytes ending where a key should follow: column 36, as in the capture.
  const Response r = sim_->Post("/completion", R"({"prompt":"Explain in one sentenc",)");
  EXPECT_EQ(r.CurlForm(), Fixture("error_malformed_json.txt"));
}

TEST_F(ProtocolTest, PromptLongerThanTheContextIsTheCaptured400) {
  Start();
  const Json request = {{"prompt", PromptOfTokens(1491)}, {"n_predict", 24}, {"cache_prompt", false}};
  EXPECT_EQ(sim_->Post("/completion", request.dump()).CurlForm(), Fixture("error_prompt_too_long.txt"));
  // The same through the OpenAI endpoint.
  const Response oai = sim_->Post("/v1/completions", R"({"prompt":")" + PromptOfTokens(300) + R"(","max_tokens":4})");
  EXPECT_EQ(oai.status, 400);
  EXPECT_EQ(oai.body,
            R"({"error":{"code":400,"message":"request (300 tokens) exceeds the available context size (256 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":300,"n_ctx":256}})");
}

TEST_F(ProtocolTest, OtherErrorsUseTheErrorObject) {
  Start();
  const Response missing = sim_->Post("/completion", R"({"n_predict":4})");
  EXPECT_EQ(missing.status, 500);
  EXPECT_EQ(missing.body,
            R"({"error":{"code":500,"message":"[json.exception.out_of_range.403] key 'prompt' not found","type":"server_error"}})");
  const Response unknown = sim_->Get("/nope");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.body, R"({"error":{"code":404,"message":"File Not Found","type":"not_found_error"}})");
}

TEST(ApiKeyTest, GuardsEverythingButHealth) {
  Sim sim(CaptureArgs({"--api-key", "sekret"}));
  ASSERT_TRUE(sim.WaitReady());
  const Response denied = sim.Post("/completion", CaptureRequest(2));
  EXPECT_EQ(denied.status, 401);
  EXPECT_EQ(denied.body, R"({"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}})");
  const Response allowed = Exchange(sim.port(), "POST", "/completion", CaptureRequest(2), std::chrono::seconds(10),
                                    {{"Authorization", "Bearer sekret"}});
  EXPECT_EQ(allowed.status, 200);
}

}  // namespace
}  // namespace benchfleet::sim::testing
