// The openai backend with its real libcurl client against tests/sim's openai-sim: a warm run
// where the simulator answers one request with a 500, cuts one stream after two chunks and
// hangs on one (past request_timeout), each counted by its kind while the run stays OK; the chat
// endpoint without streaming (usage, no TTFT); a server that is not there fails the Open; and
// the backend pointed at llama-server-sim's /v1, whose /v1/models says only `owned_by: llamacpp`
// but whose every answer's system_fingerprint says SIMULATED: its records come out simulated.
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "agent/backends/services.h"
#include "agent/backends/openai/openai_backend.h"
#include "common/env.h"
#include "gtest/gtest.h"
#include "tests/support/subprocess.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

std::map<std::string, double> Metrics(const v1::RunRecord& r) {
  std::map<std::string, double> out;
  for (const v1::Metric& m : r.metrics()) out[m.name()] = m.value();
  return out;
}

class OpenAiSimE2eTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> faults) {
    port_ = benchfleet::testing::FreePort();
    std::vector<std::string> argv = {OPENAI_SIM,      "--port", std::to_string(port_), "--model", "m",
                                     "--sim-ttft-ms", "20",     "--sim-tps",           "500"};
    argv.insert(argv.end(), faults.begin(), faults.end());
    sim_ = std::make_unique<benchfleet::testing::Subprocess>(argv, std::map<std::string, std::string>{},
                                                             dir_.path() + "/sim.log");
    AllowConfig allow;
    allow.backends = {"openai"};
    allow.urls = {"http://127.0.0.1:" + std::to_string(port_)};
    allow.workflow_dirs = {dir_.path()};
    allow_ = std::make_unique<AllowList>(allow, "agent.yaml");
    prompts_ = dir_.path() + "/prompts.jsonl";
    std::ofstream(prompts_) << "{\"id\":\"a\",\"prompt\":\"one\"}\n{\"id\":\"b\",\"prompt\":\"two\"}\n"
                            << "{\"id\":\"c\",\"prompt\":\"three\"}\n{\"id\":\"d\",\"prompt\":\"four\"}\n";
    for (int i = 0; i < 200 && Log().find("serving") == std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  std::string Log() {
    std::ifstream in(dir_.path() + "/sim.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  absl::StatusOr<std::unique_ptr<Backend>> Make(const std::string& extra, int port = 0) {
    BackendContext context;
    context.env = Env::Default();
    context.services = services_.services();
    context.allow = allow_.get();
    return NewOpenAiBackend(YAML::Load("url: http://127.0.0.1:" + std::to_string(port ? port : port_) +
                                       "/v1\nmodel: m\nprompts: " + prompts_ + "\nmax_tokens: 6\n" + extra),
                            context);
  }

  testing::ScopedTempDir dir_;
  int port_ = 0;
  std::unique_ptr<benchfleet::testing::Subprocess> sim_;
  std::unique_ptr<AllowList> allow_;
  AgentServices services_{Env::Default()};
  std::string prompts_;
};

TEST_F(OpenAiSimE2eTest, EachFaultIsOneRequestErrorOfItsKind) {
  // Request 1 is the warm-up; 2..5 the warm run, one at a time (concurrency 1) in file order.
  Start({"--sim-fail", "http500-on-request", "2", "--sim-fail", "cut-stream-on-request", "3:2", "--sim-fail",
         "hang-on-request", "4"});
  auto backend = Make("concurrency: 1\nrequest_timeout: 1s\n");
  ASSERT_TRUE(backend.ok()) << backend.status();
  auto session = (*backend)->Open({}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_TRUE((*session)->info().simulated);
  v1::RunRecord cold, warm;
  (*session)->Run(RunInput{v1::PHASE_COLD, 1, 1, 0}, &cold);
  ASSERT_EQ(cold.status().code(), v1::RunStatus::CODE_OK) << cold.status().message();
  EXPECT_EQ(cold.requests_size(), 1);
  (*session)->Run(RunInput{v1::PHASE_WARM, 1, 1, 0}, &warm);
  ASSERT_EQ(warm.status().code(), v1::RunStatus::CODE_OK) << warm.status().message();
  ASSERT_EQ(warm.requests_size(), 4);
  EXPECT_EQ(warm.requests(0).error(), "HTTP 500: SIMULATED: internal server error on request 2");
  EXPECT_TRUE(absl::StartsWith(warm.requests(1).error(), "stream cut after 2 chunks: ")) << warm.requests(1).error();
  EXPECT_EQ(warm.requests(1).output_tokens(), 2u);
  EXPECT_TRUE(absl::StartsWith(warm.requests(2).error(), "timeout after 1s (0 chunks received): "))
      << warm.requests(2).error();
  EXPECT_EQ(warm.requests(3).error(), "");
  EXPECT_EQ(warm.requests(3).output_tokens(), 6u);
  EXPECT_EQ(warm.requests(3).token_source(), "usage");
  EXPECT_EQ(warm.requests(3).inter_token_seconds_size(), 5);
  // 20 ms to the first token, then 2 ms per token.
  EXPECT_GE(warm.requests(3).time_to_first_token_seconds(), 0.02);
  auto m = Metrics(warm);
  EXPECT_EQ(m["errors"], 3);
  EXPECT_EQ(m["errors_http"], 1);
  EXPECT_EQ(m["errors_stream_cut"], 1);
  EXPECT_EQ(m["errors_timeout"], 1);
  EXPECT_EQ(m["requests_ok"], 1);
  ASSERT_EQ(warm.flags_size(), 1);
  EXPECT_EQ(warm.flags(0).code(), "REQUEST_ERRORS");
}

TEST_F(OpenAiSimE2eTest, ChatWithoutStreamingTakesTheTokensFromUsage) {
  Start({});
  auto backend = Make("endpoint: chat\nstream: false\nconcurrency: 4\n");
  ASSERT_TRUE(backend.ok()) << backend.status();
  auto session = (*backend)->Open({}, nullptr);
  ASSERT_TRUE(session.ok()) << session.status();
  v1::RunRecord cold, warm1, warm2;
  (*session)->Run(RunInput{v1::PHASE_COLD, 1, 1, 0}, &cold);
  (*session)->Run(RunInput{v1::PHASE_WARM, 1, 1, 0}, &warm1);
  (*session)->Run(RunInput{v1::PHASE_WARM, 2, 1, 0}, &warm2);
  ASSERT_EQ(warm1.status().code(), v1::RunStatus::CODE_OK) << warm1.status().message();
  ASSERT_EQ(warm1.requests_size(), 4);
  for (const v1::RequestTiming& r : warm1.requests()) {
    EXPECT_EQ(r.output_tokens(), 6u);
    EXPECT_EQ(r.token_source(), "usage");
    EXPECT_EQ(r.time_to_first_token_seconds(), 0);
    EXPECT_GE(r.latency_seconds(), 0.03);  // 20 ms + 5 tokens at 2 ms
  }
  auto m = Metrics(warm1);
  EXPECT_EQ(m["output_tokens"], 24);
  EXPECT_EQ(m.count("ttft_p50_seconds"), 0u);
  // Temperature 0 and the seed: the same answers on every warm run.
  ASSERT_EQ(warm1.outputs_size(), 1);
  ASSERT_EQ(warm2.outputs_size(), 1);
  EXPECT_EQ(warm1.outputs(0).sha256(), warm2.outputs(0).sha256());
}

TEST_F(OpenAiSimE2eTest, AServerThatIsNotThereFailsTheOpen) {
  Start({});
  sim_.reset();  // killed
  auto backend = Make("");
  ASSERT_TRUE(backend.ok()) << backend.status();
  auto session = (*backend)->Open({}, nullptr);
  EXPECT_EQ(session.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(session.status().message(), "cannot read http://127.0.0.1:")) << session.status();
}

#ifdef LLAMA_SERVER_SIM
TEST_F(OpenAiSimE2eTest, LlamaServerSimBehindV1IsSimulatedFromItsAnswersFingerprint) {
  Env::Default()->CreateDirs(dir_.path() + "/models").IgnoreError();
  std::ofstream(dir_.path() + "/models/tiny.gguf") << "GGUF";
  port_ = benchfleet::testing::FreePort();
  sim_ = std::make_unique<benchfleet::testing::Subprocess>(
      std::vector<std::string>{LLAMA_SERVER_SIM, "-m", dir_.path() + "/models/tiny.gguf", "--alias", "m", "--port",
                               std::to_string(port_), "-c", "256", "--sim-load-ms", "20", "--sim-gpu-tps", "2000",
                               "--sim-cpu-tps", "2000"},
      std::map<std::string, std::string>{}, dir_.path() + "/sim.log");
  AllowConfig allow;
  allow.backends = {"openai"};
  allow.urls = {"http://127.0.0.1:" + std::to_string(port_)};
  allow.workflow_dirs = {dir_.path()};
  allow_ = std::make_unique<AllowList>(allow, "agent.yaml");
  prompts_ = dir_.path() + "/prompts.jsonl";
  std::ofstream(prompts_) << "{\"id\":\"a\",\"prompt\":\"one\"}\n{\"id\":\"b\",\"prompt\":\"two\"}\n";
  auto backend = Make("concurrency: 1\n");
  ASSERT_TRUE(backend.ok()) << backend.status();
  // Real time: the simulator's model load (503 meanwhile) ends on its own clock.
  absl::StatusOr<std::unique_ptr<BackendSession>> session = absl::UnavailableError("not tried");
  for (int i = 0; i < 500 && !session.ok(); ++i) {
    session = (*backend)->Open({}, nullptr);
    if (!session.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(session.ok()) << session.status() << "\n" << Log();
  // /v1/models says nothing of a simulator ...
  EXPECT_EQ((*session)->info().backend_version, "llamacpp");
  EXPECT_FALSE((*session)->info().simulated);
  // ... the first answer does: that record and every later one are simulated.
  v1::RunRecord cold, warm;
  (*session)->Run(RunInput{v1::PHASE_COLD, 1, 1, 0}, &cold);
  ASSERT_EQ(cold.status().code(), v1::RunStatus::CODE_OK) << cold.status().message();
  EXPECT_TRUE(cold.simulated());
  EXPECT_EQ(cold.params().at("system_fingerprint"), "b10587-benchfleet-sim (SIMULATED)");
  EXPECT_EQ(cold.params().at("simulated_by"), "answer system_fingerprint: b10587-benchfleet-sim (SIMULATED)");
  EXPECT_TRUE((*session)->info().simulated);
  EXPECT_EQ((*session)->info().params.at("simulated_by"),
            "answer system_fingerprint: b10587-benchfleet-sim (SIMULATED)");
  (*session)->Run(RunInput{v1::PHASE_WARM, 1, 1, 0}, &warm);
  ASSERT_EQ(warm.status().code(), v1::RunStatus::CODE_OK) << warm.status().message();
  EXPECT_EQ(warm.requests_size(), 2);
  EXPECT_TRUE(warm.simulated());
}
#endif

}  // namespace
}  // namespace benchfleet::agent
