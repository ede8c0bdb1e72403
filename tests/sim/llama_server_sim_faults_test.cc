// Each --sim-fail mode, start-up failures and signals: what the client sees, what the log says,
// how the process ends.
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/sim/sim_test_support.h"

namespace benchfleet::sim::testing {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;

std::vector<std::string> FastArgs(std::vector<std::string> more) {
  std::vector<std::string> args = {"-c", "256", "-ngl", "0", "--sim-load-ms", "20", "--sim-cpu-tps", "200"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(FaultTest, ExitDuringLoadLogsALoadErrorAndExits1) {
  Sim sim(FastArgs({"--sim-load-ms", "300", "--sim-fail", "exit-during-load"}));
  ASSERT_TRUE(sim.WaitListening()) << sim.log();
  EXPECT_EQ(sim.Get("/health").status, 503);
  EXPECT_EQ(sim.WaitExit(), 1);
  const std::string log = sim.log();
  EXPECT_THAT(log, HasSubstr(" E llama_model_load: error loading model: unable to allocate CPU buffer\n"));
  EXPECT_THAT(log, HasSubstr(" E srv    load_model: failed to load model, 'tiny.gguf'\n"));
  EXPECT_THAT(log, EndsWith(" E srv  llama_server: exiting due to model loading error\n"));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("model loaded")));
}

TEST(FaultTest, NeverReadyAnswers503UntilKilled) {
  Sim sim(FastArgs({"--sim-fail", "never-ready"}));
  ASSERT_TRUE(sim.WaitListening()) << sim.log();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // ten times the load time
  EXPECT_EQ(sim.Get("/health").CurlForm(), Fixture("health_loading.txt"));
  // Like llama-server, which installs its signal handler only after loading: SIGTERM kills it.
  sim.process().Signal(SIGTERM);
  EXPECT_EQ(sim.WaitExit(), 128 + SIGTERM);
}

TEST(FaultTest, DieOnRequestAbortsDuringTheNthRequest) {
  Sim sim(FastArgs({"--sim-fail", "die-on-request", "2"}));
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  EXPECT_EQ(sim.Post("/completion", CaptureRequest(8)).status, 200);
  const Response r = sim.Post("/completion", CaptureRequest(8));
  EXPECT_EQ(r.status, 0);  // the connection ended without an answer
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(sim.WaitExit(), 128 + SIGABRT);
  EXPECT_THAT(sim.log(), HasSubstr("GGML_ASSERT(!isnan(x)) failed\n"));
}

TEST(FaultTest, DieOnRequestCutsAStreamMidway) {
  Sim sim(FastArgs({"--sim-fail", "die-on-request", "1"}));
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  const Response r = sim.Post("/completion", CaptureRequest(8, 42, /*stream=*/true));
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.chunks.size(), 4u);  // half the tokens arrived
  EXPECT_EQ(sim.WaitExit(), 128 + SIGABRT);
}

TEST(FaultTest, HangOnRequestNeverAnswersTheNthButStaysHealthy) {
  Sim sim(FastArgs({"--sim-fail", "hang-on-request", "2"}));
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  EXPECT_EQ(sim.Post("/completion", CaptureRequest(4)).status, 200);
  const Response r = sim.Post("/completion", CaptureRequest(4), std::chrono::milliseconds(1500));
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(sim.Get("/health").status, 200);
  EXPECT_EQ(sim.Post("/completion", CaptureRequest(4)).status, 200);  // another slot serves request 3
  sim.process().Signal(SIGTERM);
  EXPECT_EQ(sim.WaitExit(), 0);
}

TEST(FaultTest, Http500OnRequestAnswersAComputeError) {
  Sim sim(FastArgs({"--sim-fail", "http500-on-request", "1"}));
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  const Response r = sim.Post("/completion", CaptureRequest(4));
  EXPECT_EQ(r.status_line, "HTTP/1.1 500 Internal Server Error");
  EXPECT_EQ(r.body, R"({"error":{"code":500,"message":"Compute error.","type":"server_error"}})");
  EXPECT_EQ(r.Header("Connection"), "close");
  EXPECT_EQ(sim.Post("/completion", CaptureRequest(4)).status, 200);
  EXPECT_THAT(sim.log(), HasSubstr(" E srv    send_error: task id = 0, error: Compute error.\n"));
}

TEST(FaultTest, GarbageOnRequestAnswers200WithABodyThatIsNotJson) {
  Sim sim(FastArgs({"--sim-fail", "garbage-on-request", "1"}));
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  const Response r = sim.Post("/completion", CaptureRequest(4));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("Content-Type"), "application/json; charset=utf-8");
  EXPECT_EQ(r.body, "llama-server-sim garbage-on-request: \x01\x02 this is not JSON }{\n");
  EXPECT_FALSE(Json::accept(r.body));
  EXPECT_TRUE(Json::accept(sim.Post("/completion", CaptureRequest(4)).body));
}

TEST(FaultTest, TruncatedOnRequestPromisesMoreThanItSends) {
  Sim sim(FastArgs({"--sim-fail", "truncated-on-request", "2"}));
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  const Response whole = sim.Post("/completion", CaptureRequest(4));
  ASSERT_TRUE(whole.complete);
  const Response r = sim.Post("/completion", CaptureRequest(4));
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.complete);
  EXPECT_FALSE(r.timed_out);  // the server closed the connection
  const size_t promised = std::stoul(r.Header("Content-Length"));
  EXPECT_EQ(r.body.size(), promised / 2);
  // What did arrive is the start of the real answer (the same text; the timings differ).
  const size_t text_end = whole.body.find(",\"tokens\"");
  EXPECT_EQ(r.body.substr(0, text_end), whole.body.substr(0, text_end));
  EXPECT_EQ(sim.Get("/health").status, 200);  // the server lives on
}

TEST(FaultTest, TruncatedOnRequestCutsAStreamInsideAChunk) {
  Sim sim(FastArgs({"--sim-fail", "truncated-on-request", "1"}));
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  const Response r = sim.Post("/completion", CaptureRequest(8, 42, true));
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.complete);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.chunks.size(), 3u);  // three whole chunks, the fourth cut
  EXPECT_EQ(sim.Get("/health").status, 200);  // the server lives on
}

TEST(FaultTest, CacheHitOnRequestReportsCachedTokensDespiteCachePromptFalse) {
  Sim sim(FastArgs({"--sim-fail", "cache-hit-on-request", "2"}));
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  EXPECT_EQ(sim.Post("/completion", CaptureRequest(4)).JsonBody()["timings"]["cache_n"], 0);
  const Json r = sim.Post("/completion", CaptureRequest(4)).JsonBody();
  EXPECT_EQ(r["generation_settings"].contains("cache_prompt"), false);
  EXPECT_EQ(r["timings"]["cache_n"], 10);
  EXPECT_EQ(r["timings"]["prompt_n"], 1);
  EXPECT_EQ(sim.Post("/completion", CaptureRequest(4)).JsonBody()["timings"]["cache_n"], 0);
}

TEST(StartupTest, AMissingModelFailsTheLoadLikeLlamaServer) {
  Sim sim(FastArgs({"-m", "missing.gguf"}), /*add_model=*/false);
  EXPECT_EQ(sim.WaitExit(), 1);
  const std::string log = sim.log();
  EXPECT_THAT(log, HasSubstr(" E gguf_init_from_file: failed to open GGUF file 'missing.gguf' (No such file or "
                             "directory)\n"));
  EXPECT_THAT(log, EndsWith(" E srv  llama_server: exiting due to model loading error\n"));
}

TEST(StartupTest, AnUnknownFlagIsAnInvalidArgument) {
  Sim sim({"--no-such-flag"});
  EXPECT_EQ(sim.WaitExit(), 1);
  EXPECT_EQ(sim.log(), "error: invalid argument: --no-such-flag\n");
}

TEST(StartupTest, APortInUseFailsTheBind) {
  Sim first(FastArgs({}));
  ASSERT_TRUE(first.WaitReady());
  Sim second(FastArgs({"--port", std::to_string(first.port())}));
  EXPECT_EQ(second.WaitExit(), 1);
  EXPECT_THAT(second.log(), HasSubstr(" E srv         start: couldn't bind HTTP server socket, hostname: 127.0.0.1, "
                                      "port: " + std::to_string(first.port()) + "\n"));
  EXPECT_THAT(second.log(), EndsWith(" E srv  llama_server: exiting due to HTTP server error\n"));
}

TEST(SignalTest, SigtermAfterLoadingExitsCleanly) {
  Sim sim(FastArgs({}));
  ASSERT_TRUE(sim.WaitReady());
  sim.process().Signal(SIGTERM);
  EXPECT_EQ(sim.WaitExit(), 0);
  EXPECT_THAT(sim.log(), EndsWith(" I srv    operator(): operator(): cleaning up before exit...\n"));
}

TEST(SignalTest, SigintDuringAGenerationExitsCleanly) {
  Sim sim(FastArgs({"--sim-cpu-tps", "5"}));
  ASSERT_TRUE(sim.WaitReady());
  std::thread client([&] { sim.Post("/completion", CaptureRequest(20)); });
  ASSERT_TRUE(sim.WaitLog("processing task"));
  sim.process().Signal(SIGINT);
  EXPECT_EQ(sim.WaitExit(), 0);
  client.join();
  EXPECT_THAT(sim.log(), EndsWith(" I srv    operator(): operator(): cleaning up before exit...\n"));
}

}  // namespace
}  // namespace benchfleet::sim::testing
