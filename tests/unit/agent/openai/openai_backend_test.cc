// The openai backend against a scripted HttpClient: the section and prompts file checks (the
// allow-list included), GET /models at Open, the COLD warm-up of one request, WARM runs of every
// prompt with each request kept in the record, errors counted per request (some failed: OK with
// REQUEST_ERRORS; all failed: FAILED), and exact timings from a stepping clock.
#include "agent/backends/openai/openai_backend.h"

#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/backends/openai/openai_config.h"
#include "gtest/gtest.h"
#include "tests/support/clock_env.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using ::benchfleet::testing::ClockEnv;
using testing::ScopedTempDir;

constexpr char kModels[] =
    R"({"object":"list","data":[{"id":"m","object":"model","owned_by":"benchfleet-simulator","max_model_len":4096}]})";

// A scripted answer to one POST: status, body pieces (each one on_chunk call), or an error.
struct Scripted {
  int status = 200;
  std::vector<std::string> pieces;
  absl::Status error;  // returned after the pieces when not OK
};

std::string Event(const std::string& text) {
  return "data: {\"choices\":[{\"index\":0,\"text\":\"" + text + "\",\"finish_reason\":null}],\"usage\":null}\n\n";
}
std::string UsageEvent(int tokens) {
  return "data: {\"choices\":[],\"system_fingerprint\":\"benchfleet-sim (SIMULATED)\",\"usage\":{\"prompt_tokens\":3,"
         "\"completion_tokens\":" +
         std::to_string(tokens) + ",\"total_tokens\":" + std::to_string(3 + tokens) + "}}\n\n";
}
Scripted Good() {
  return Scripted{200, {Event(" a") + Event(" b"), Event(" c"), UsageEvent(3) + "data: [DONE]\n\n"}, {}};
}

class ScriptedHttp : public HttpClient {
 public:
  std::string models = kModels;
  std::vector<Scripted> posts;  // answered in order; past the end: Good()

  absl::StatusOr<HttpResponse> Send(const HttpRequest& request, const ChunkCallback& on_chunk) override {
    std::unique_lock<std::mutex> lock(mu_);
    requests.push_back(request);
    if (request.method == "GET") return HttpResponse{200, "application/json", models};
    const Scripted s = next_ < posts.size() ? posts[next_] : Good();
    ++next_;
    lock.unlock();
    HttpResponse response{s.status, "text/event-stream", ""};
    for (const std::string& piece : s.pieces) {
      response.body += piece;
      if (on_chunk) on_chunk(piece);
    }
    if (!s.error.ok()) return s.error;
    return response;
  }

  std::vector<HttpRequest> requests;

 private:
  std::mutex mu_;
  size_t next_ = 0;
};

class OpenAiBackendTest : public ::testing::Test {
 protected:
  OpenAiBackendTest() : clock_({.sleeps_advance = true, .step_per_reading = absl::Milliseconds(10)}), env_(&clock_) {
    AllowConfig allow;
    allow.backends = {"openai"};
    allow.urls = {"http://127.0.0.1:8000"};
    allow.workflow_dirs = {dir_.path()};
    allow_ = std::make_unique<AllowList>(allow, "agent.yaml");
    prompts_ = dir_.path() + "/prompts.jsonl";
    std::ofstream(prompts_) << "{\"id\": \"p1\", \"prompt\": \"one\"}\n{\"id\": 2, \"prompt\": \"two\"}\n\n"
                            << "{\"prompt\": \"three\"}\n";
  }

  YAML::Node Section(const std::string& extra = "") {
    return YAML::Load("url: http://127.0.0.1:8000/v1/\nmodel: m\nprompts: " + prompts_ +
                      "\nconcurrency: 1\nmax_tokens: 3\n" + extra);
  }

  absl::StatusOr<std::unique_ptr<Backend>> Make(const YAML::Node& section) {
    BackendContext context;
    context.env = &env_;
    context.services.http = &http_;
    context.allow = allow_.get();
    return NewOpenAiBackend(section, context);
  }

  static std::map<std::string, double> Metrics(const v1::RunRecord& r) {
    std::map<std::string, double> out;
    for (const v1::Metric& m : r.metrics()) out[m.name()] = m.value();
    return out;
  }

  ScopedTempDir dir_;
  SimulatedClock clock_;  // nothing waits; each reading moves it 10 ms
  ClockEnv env_;
  std::unique_ptr<AllowList> allow_;
  std::string prompts_;
  ScriptedHttp http_;
};

TEST_F(OpenAiBackendTest, ColdIsOneWarmUpRequestAndWarmSendsEveryPrompt) {
  auto backend = Make(Section());
  ASSERT_TRUE(backend.ok()) << backend.status();
  ASSERT_NE(MainFigure((*backend)->figures()), nullptr);
  EXPECT_EQ(MainFigure((*backend)->figures())->name, "output_tokens_per_second");
  std::string tail;
  auto session = (*backend)->Open({}, &tail);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_TRUE((*session)->info().simulated);
  EXPECT_EQ((*session)->info().backend_version, "benchfleet-simulator");
  EXPECT_EQ((*session)->info().params.at("simulated_by"), "/models owned_by: benchfleet-simulator");
  EXPECT_EQ(http_.requests[0].url, "http://127.0.0.1:8000/v1/models");

  v1::RunRecord cold;
  (*session)->Run(RunInput{v1::PHASE_COLD, 1, 1, 0}, &cold);
  ASSERT_EQ(cold.status().code(), v1::RunStatus::CODE_OK) << cold.status().message();
  ASSERT_EQ(cold.requests_size(), 1);
  EXPECT_EQ(cold.requests(0).prompt_id(), "p1");
  EXPECT_EQ(cold.params().at("warmup"), "true");

  v1::RunRecord warm;
  (*session)->Run(RunInput{v1::PHASE_WARM, 1, 1, 0}, &warm);
  ASSERT_EQ(warm.status().code(), v1::RunStatus::CODE_OK) << warm.status().message();
  EXPECT_EQ(warm.params().at("warmup"), "false");
  EXPECT_EQ(warm.params().at("system_fingerprint"), "benchfleet-sim (SIMULATED)");
  ASSERT_EQ(warm.requests_size(), 3);
  EXPECT_EQ(warm.requests(0).prompt_id(), "p1");
  EXPECT_EQ(warm.requests(1).prompt_id(), "2");
  EXPECT_EQ(warm.requests(2).prompt_id(), "4");  // no id: its line
  // Each request: Monotonic at start (t), at the piece with a, b (t+10ms), at c (t+20ms), at the
  // end (t+30ms): TTFT 10 ms, one gap of 0 (a and b came together) and one of 10 ms.
  const v1::RequestTiming& r = warm.requests(0);
  EXPECT_DOUBLE_EQ(r.time_to_first_token_seconds(), 0.01);
  EXPECT_DOUBLE_EQ(r.latency_seconds(), 0.03);
  ASSERT_EQ(r.inter_token_seconds_size(), 2);
  EXPECT_DOUBLE_EQ(r.inter_token_seconds(0), 0);
  EXPECT_DOUBLE_EQ(r.inter_token_seconds(1), 0.01);
  EXPECT_EQ(r.output_tokens(), 3u);
  EXPECT_EQ(r.token_source(), "usage");
  auto m = Metrics(warm);
  EXPECT_EQ(m["requests"], 3);
  EXPECT_EQ(m["errors"], 0);
  EXPECT_EQ(m["output_tokens"], 9);
  EXPECT_DOUBLE_EQ(m["tpot_p50_seconds"], 0.01);  // (0.03 - 0.01) / 2
  // The request as sent: temperature 0, the seed, include_usage.
  const std::string& body = http_.requests.back().body;
  EXPECT_TRUE(absl::StrContains(body, "\"temperature\":0.0")) << body;
  EXPECT_TRUE(absl::StrContains(body, "\"seed\":42")) << body;
  EXPECT_TRUE(absl::StrContains(body, "\"stream_options\":{\"include_usage\":true}")) << body;
  EXPECT_EQ(http_.requests.back().url, "http://127.0.0.1:8000/v1/completions");
}

TEST_F(OpenAiBackendTest, FailedRequestsAreCountedAndKeptNotDropped) {
  auto backend = Make(Section());
  ASSERT_TRUE(backend.ok()) << backend.status();
  auto session = (*backend)->Open({}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  http_.posts = {Good(),  // the warm-up
                 Scripted{500, {R"({"error":{"message":"boom","type":"server_error","code":500}})"}, {}},
                 Scripted{200, {Event(" a"), Event(" b")}, {}},  // ends without [DONE]
                 Scripted{200, {Event(" a")}, absl::DeadlineExceededError("POST x: no complete answer within 1s")}};
  v1::RunRecord cold, warm;
  (*session)->Run(RunInput{v1::PHASE_COLD, 1, 1, 0}, &cold);
  (*session)->Run(RunInput{v1::PHASE_WARM, 1, 1, 0}, &warm);
  // All three failed: FAILED, every request still in the record with its error.
  EXPECT_EQ(warm.status().code(), v1::RunStatus::CODE_FAILED);
  EXPECT_EQ(warm.status().message(),
            "3 of 3 requests failed (1 http, 1 stream_cut, 1 timeout); first: prompt p1: HTTP 500: boom");
  ASSERT_EQ(warm.requests_size(), 3);
  EXPECT_EQ(warm.requests(1).error(), "stream cut after 2 chunks: it ended without data: [DONE]");
  EXPECT_EQ(warm.requests(1).output_tokens(), 2u);
  EXPECT_EQ(warm.requests(1).token_source(), "chunks");
  EXPECT_EQ(warm.requests(2).error(), "timeout after 5m (1 chunks received): POST x: no complete answer within 1s");
  EXPECT_TRUE((*session)->alive());
}

TEST_F(OpenAiBackendTest, SomeFailedRequestsLeaveTheRunOkWithAnErrorsMetric) {
  auto backend = Make(Section());
  ASSERT_TRUE(backend.ok()) << backend.status();
  auto session = (*backend)->Open({}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  http_.posts = {Good(), Good(), Scripted{200, {Event(" a")}, absl::DataLossError("POST x: truncated body")}, Good()};
  v1::RunRecord cold, warm;
  (*session)->Run(RunInput{v1::PHASE_COLD, 1, 1, 0}, &cold);
  (*session)->Run(RunInput{v1::PHASE_WARM, 1, 1, 0}, &warm);
  ASSERT_EQ(warm.status().code(), v1::RunStatus::CODE_OK) << warm.status().message();
  auto m = Metrics(warm);
  EXPECT_EQ(m["errors"], 1);
  EXPECT_EQ(m["errors_stream_cut"], 1);
  EXPECT_EQ(m["requests_ok"], 2);
  EXPECT_EQ(m["output_tokens"], 6);
  EXPECT_EQ(warm.requests(1).error(), "stream cut after 1 chunks: POST x: truncated body");
  ASSERT_EQ(warm.flags_size(), 1);
  EXPECT_EQ(warm.flags(0).code(), "REQUEST_ERRORS");
  EXPECT_EQ(
      warm.flags(0).reason(),
      "1 of 3 requests failed (1 stream_cut); first: prompt 2: stream cut after 1 chunks: POST x: truncated body");
  EXPECT_EQ(warm.outputs_size(), 0);
}

// A real server's answer: no SIMULATED in its fingerprint.
Scripted Real() {
  return Scripted{200,
                  {Event(" a"),
                   "data: {\"choices\":[],\"system_fingerprint\":\"fp_3b9a4d1c\",\"model\":\"m\",\"usage\":"
                   "{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":4}}\n\ndata: [DONE]\n\n"},
                  {}};
}

TEST_F(OpenAiBackendTest, ARealServerSayingNothingOfASimulatorIsNotSimulated) {
  http_.models = R"({"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm"}]})";
  auto backend = Make(Section());
  ASSERT_TRUE(backend.ok()) << backend.status();
  auto session = (*backend)->Open({}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_FALSE((*session)->info().simulated);
  EXPECT_EQ((*session)->info().params.count("simulated_by"), 0u);
  http_.posts = {Real(), Real(), Real(), Real()};
  v1::RunRecord cold, warm;
  (*session)->Run(RunInput{v1::PHASE_COLD, 1, 1, 0}, &cold);
  (*session)->Run(RunInput{v1::PHASE_WARM, 1, 1, 0}, &warm);
  ASSERT_EQ(warm.status().code(), v1::RunStatus::CODE_OK) << warm.status().message();
  EXPECT_FALSE(cold.simulated());
  EXPECT_FALSE(warm.simulated());
  EXPECT_EQ(warm.params().at("system_fingerprint"), "fp_3b9a4d1c");
  EXPECT_EQ(warm.params().count("simulated_by"), 0u);
  EXPECT_FALSE((*session)->info().simulated);
}

// llama-server-sim's /v1: /models says owned_by llamacpp; only the answers' system_fingerprint
// (its build_info) says SIMULATED. The first such answer marks its record and the session.
TEST_F(OpenAiBackendTest, AnAnswerWhoseFingerprintSaysSimulatedMarksItsRecordAndTheSession) {
  http_.models = R"({"object":"list","data":[{"id":"m","object":"model","owned_by":"llamacpp"}]})";
  auto backend = Make(Section());
  ASSERT_TRUE(backend.ok()) << backend.status();
  auto session = (*backend)->Open({}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_FALSE((*session)->info().simulated);
  EXPECT_EQ((*session)->info().backend_version, "llamacpp");
  // The warm-up's answer says nothing; a warm run's second answer says it.
  http_.posts = {Real(), Real(), Good(), Real()};
  v1::RunRecord cold, warm1, warm2;
  (*session)->Run(RunInput{v1::PHASE_COLD, 1, 1, 0}, &cold);
  EXPECT_FALSE(cold.simulated());
  EXPECT_FALSE((*session)->info().simulated);
  (*session)->Run(RunInput{v1::PHASE_WARM, 1, 1, 0}, &warm1);
  ASSERT_EQ(warm1.status().code(), v1::RunStatus::CODE_OK) << warm1.status().message();
  EXPECT_TRUE(warm1.simulated());
  EXPECT_EQ(warm1.params().at("simulated_by"), "answer system_fingerprint: benchfleet-sim (SIMULATED)");
  EXPECT_TRUE((*session)->info().simulated);
  EXPECT_EQ((*session)->info().params.at("simulated_by"), "answer system_fingerprint: benchfleet-sim (SIMULATED)");
  // A later run carries the session's mark (the runner ORs info().simulated in) and its reason.
  http_.posts.clear();
  (*session)->Run(RunInput{v1::PHASE_WARM, 2, 1, 0}, &warm2);
  EXPECT_EQ(warm2.params().at("simulated_by"), "answer system_fingerprint: benchfleet-sim (SIMULATED)");
}

TEST_F(OpenAiBackendTest, AModelIdThatSaysSimulatedMarksTheSessionAtOpen) {
  YAML::Node section = Section();
  section["model"] = "tiny (SIMULATED)";
  http_.models = R"j({"object":"list","data":[{"id":"tiny (SIMULATED)","object":"model","owned_by":"vllm"}]})j";
  auto backend = Make(section);
  ASSERT_TRUE(backend.ok()) << backend.status();
  auto session = (*backend)->Open({}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_TRUE((*session)->info().simulated);
  EXPECT_EQ((*session)->info().backend_version, "vllm");
  EXPECT_EQ((*session)->info().params.at("simulated_by"), "/models id: tiny (SIMULATED)");
}

TEST_F(OpenAiBackendTest, AModelTheServerDoesNotServeFailsTheOpen) {
  http_.models = R"({"object":"list","data":[{"id":"other","object":"model","owned_by":"vllm"}]})";
  auto backend = Make(Section());
  ASSERT_TRUE(backend.ok()) << backend.status();
  auto session = (*backend)->Open({}, nullptr);
  EXPECT_EQ(session.status(), absl::FailedPreconditionError("the server at http://127.0.0.1:8000/v1 does not serve "
                                                            "model m (its /models lists: other)"));
}

TEST_F(OpenAiBackendTest, TheSectionIsCheckedAgainstTheAllowList) {
  auto url = Make(YAML::Load("url: http://10.0.0.1:8000/v1\nmodel: m\nprompts: " + prompts_));
  EXPECT_EQ(url.status(), absl::PermissionDeniedError("url http://10.0.0.1:8000/v1 is not in this agent's allow-list "
                                                      "(allow.urls in agent.yaml); allow.urls lists: "
                                                      "http://127.0.0.1:8000"));
  auto file = Make(YAML::Load("url: http://127.0.0.1:8000/v1\nmodel: m\nprompts: /etc/passwd"));
  EXPECT_EQ(file.status(), absl::PermissionDeniedError(absl::StrCat(
                               "workflow path /etc/passwd is not in this agent's allow-list (allow.workflow_dirs in "
                               "agent.yaml); allow.workflow_dirs lists: ",
                               dir_.path())));
  auto key = Make(Section("concurency: 2\n"));
  EXPECT_EQ(key.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(key.status().message(), "line 6: unknown key openai.concurency")) << key.status();
  auto slo = Make(Section("stream: false\nslo: {ttft: 1s}\n"));
  EXPECT_TRUE(absl::StrContains(slo.status().message(), "openai.slo needs openai.stream true")) << slo.status();
  auto endpoint = Make(Section("endpoint: responses\n"));
  EXPECT_TRUE(
      absl::StrContains(endpoint.status().message(), "openai.endpoint must be completions or chat, got 'responses'"))
      << endpoint.status();
}

TEST_F(OpenAiBackendTest, MatrixAxesSetConcurrencyAndMaxTokensAndModeIsALabel) {
  auto backend = Make(Section());
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_EQ((*backend)->matrix_axes(), (std::vector<std::string>{"mode", "concurrency", "max_tokens"}));
  EXPECT_EQ((*backend)->default_axis_values("mode"), std::vector<std::string>{"external"});
  EXPECT_EQ((*backend)->CheckCombination({{"concurrency", "0"}}),
            absl::InvalidArgumentError("matrix value concurrency=0 is not an integer from 1 to 1024"));
  auto session = (*backend)->Open({{"mode", "nvidia"}, {"concurrency", "2"}, {"max_tokens", "5"}}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  v1::RunRecord cold;
  (*session)->Run(RunInput{v1::PHASE_COLD, 1, 1, 0}, &cold);
  EXPECT_EQ(cold.mode(), "nvidia");
  EXPECT_EQ(cold.params().at("concurrency"), "2");
  EXPECT_TRUE(absl::StrContains(http_.requests.back().body, "\"max_tokens\":5")) << http_.requests.back().body;
}

TEST(ParsePromptsJsonlTest, ReadsIdsAndRefusesBadLinesWithTheirNumber) {
  auto ok = openai::ParsePromptsJsonl("{\"id\":\"a\",\"prompt\":\"x\"}\n\n{\"prompt\":\"y\"}\n", "p.jsonl");
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_EQ(ok->size(), 2u);
  EXPECT_EQ((*ok)[1].id, "3");
  EXPECT_EQ((*ok)[1].text, "y");
  EXPECT_EQ(openai::ParsePromptsJsonl("{\"prompt\":\"x\"}\n[1]\n", "p.jsonl").status(),
            absl::InvalidArgumentError("p.jsonl:2: not a JSON object"));
  EXPECT_EQ(openai::ParsePromptsJsonl("{\"id\":1,\"prompt\":\"\"}\n", "p.jsonl").status(),
            absl::InvalidArgumentError("p.jsonl:1: needs \"prompt\": a non-empty string"));
  EXPECT_EQ(
      openai::ParsePromptsJsonl("{\"id\":1,\"prompt\":\"a\"}\n{\"id\":\"1\",\"prompt\":\"b\"}\n", "p.jsonl").status(),
      absl::InvalidArgumentError("p.jsonl:2: id \"1\" is given twice"));
  EXPECT_EQ(openai::ParsePromptsJsonl("\n", "p.jsonl").status(), absl::InvalidArgumentError("p.jsonl: no prompts"));
}

}  // namespace
}  // namespace benchfleet::agent
