// The simulator spends real time per token: the rates it reports are the rates it was given
// (never faster: it sleeps to absolute deadlines), the throttle hits exactly the requests it
// names, and the wall time of a request covers what its timings claim.
#include <chrono>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/sim/sim_test_support.h"

namespace benchfleet::sim::testing {
namespace {

using ::testing::HasSubstr;

constexpr double kTolerance = 0.10;

double PredictedRate(const Json& r) { return r["timings"]["predicted_per_second"]; }

void ExpectRate(double got, double want) {
  EXPECT_LE(got, want * 1.001) << "faster than configured";
  EXPECT_GE(got, want * (1 - kTolerance));
}

TEST(TimingTest, OffloadedLayersDecodeAtTheGpuRate) {
  Sim sim({"-c", "256", "-ngl", "99", "--sim-load-ms", "10"});
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  const auto t0 = std::chrono::steady_clock::now();
  const Response r = sim.Post("/completion", CaptureRequest(16));
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.status, 200) << r.body;
  const Json j = r.JsonBody();
  ExpectRate(PredictedRate(j), 52.9);
  // 15 decode steps at 52.9/s (the first token comes with the prompt).
  EXPECT_GE(j["timings"]["predicted_ms"].get<double>(), 15 / 52.9 * 1000 - 0.001);
  EXPECT_GE(wall_ms, j["timings"]["predicted_ms"].get<double>() + j["timings"]["prompt_ms"].get<double>());
}

TEST(TimingTest, NoOffloadDecodesAtTheCpuRate) {
  Sim sim({"-c", "256", "-ngl", "0", "--sim-load-ms", "10"});
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  const Json j = sim.Post("/completion", CaptureRequest(6)).JsonBody();
  ExpectRate(PredictedRate(j), 9.6);
}

TEST(TimingTest, ACpuOnlyBuildIgnoresTheGpuLayers) {
  Sim sim({"-c", "256", "-ngl", "99", "--sim-gpu-device", "none", "--sim-cpu-tps", "20", "--sim-load-ms", "10"});
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  ExpectRate(PredictedRate(sim.Post("/completion", CaptureRequest(6)).JsonBody()), 20);
  EXPECT_THAT(sim.log(), HasSubstr("warning: no usable GPU found, --gpu-layers option will be ignored\n"));
}

TEST(TimingTest, ThrottleSlowsExactlyTheNamedRequests) {
  Sim sim({"-c", "256", "-ngl", "99", "--sim-gpu-tps", "100", "--sim-throttle", "3:0.5,4:0.25", "--sim-load-ms",
           "10"});
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  // Both endpoints count: request 2 goes through the OpenAI one.
  const std::string oai =
      R"({"prompt":"Explain in one sentence what a GPU is.","max_tokens":11,"cache_prompt":false})";
  std::vector<double> rates;
  for (int n = 1; n <= 5; n++) {
    const Response r = n == 2 ? sim.Post("/v1/completions", oai) : sim.Post("/completion", CaptureRequest(11));
    ASSERT_EQ(r.status, 200) << r.body;
    rates.push_back(PredictedRate(r.JsonBody()));
  }
  ExpectRate(rates[0], 100);
  ExpectRate(rates[1], 100);
  ExpectRate(rates[2], 50);
  ExpectRate(rates[3], 25);
  ExpectRate(rates[4], 100);
}

TEST(TimingTest, PromptsAreProcessedAtThePromptRate) {
  Sim sim({"-ngl", "99", "--sim-prompt-tps", "2000", "--sim-load-ms", "10"});
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  const Json j = sim.Post("/completion", Json{{"prompt", PromptOfTokens(201)}, {"n_predict", 2}}.dump()).JsonBody();
  EXPECT_EQ(j["timings"]["prompt_n"], 201);
  ExpectRate(j["timings"]["prompt_per_second"], 2000);
}

TEST(TimingTest, TheLogsTimingLinesAreTheResponsesTimings) {
  Sim sim({"-c", "256", "-ngl", "99", "--sim-load-ms", "10"});
  ASSERT_TRUE(sim.WaitReady()) << sim.log();
  const Json t = sim.Post("/completion", CaptureRequest(8)).JsonBody()["timings"];
  ASSERT_TRUE(sim.WaitLog("stop processing"));
  char prompt_line[256], eval_line[256];
  std::snprintf(prompt_line, sizeof(prompt_line),
                "prompt eval time = %10.2f ms / %5d tokens (%8.2f ms per token, %8.2f tokens per second)",
                t["prompt_ms"].get<double>(), t["prompt_n"].get<int>(), t["prompt_per_token_ms"].get<double>(),
                t["prompt_per_second"].get<double>());
  std::snprintf(eval_line, sizeof(eval_line),
                "       eval time = %10.2f ms / %5d tokens (%8.2f ms per token, %8.2f tokens per second)",
                t["predicted_ms"].get<double>(), t["predicted_n"].get<int>(),
                t["predicted_per_token_ms"].get<double>(), t["predicted_per_second"].get<double>());
  const std::string log = sim.log();
  EXPECT_THAT(log, HasSubstr(std::string("I slot print_timing: id  3 | task 0 | ") + prompt_line + "\n"));
  EXPECT_THAT(log, HasSubstr(std::string("I slot print_timing: id  3 | task 0 | ") + eval_line + "\n"));
}

}  // namespace
}  // namespace benchfleet::sim::testing
