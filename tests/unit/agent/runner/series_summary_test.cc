// The end-of-series report and the exit code of `benchfleet-agent run`.
#include "agent/runner/series_summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/unit/agent/runner/fake_backend.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using testing::CacheHit;
using testing::FakeBackend;
using testing::FakeOpenFailure;
using testing::Dying;
using testing::Fail;
using testing::FakeRun;
using testing::Ok;
using testing::StatusUnset;
using testing::ScopedTempDir;

constexpr char kHead[] = "series: s1\ntask: t1\nbackend: fake\n";

class SeriesSummaryTest : public ::testing::Test {
 protected:
  SeriesSummaryTest() : allow_(AllowConfig{{"fake"}, {}, {}, {}}, "agent.yaml"), backend_(Env::Default()) {}

  SeriesResult Run(const std::string& yaml) {
    auto spec = ParseSeriesSpec(yaml, "spec.yaml");
    EXPECT_TRUE(spec.ok()) << spec.status();
    RunnerOptions options;
    options.env = Env::Default();
    options.allow = &allow_;
    options.agent_id = "1b4e28ba-2fa1-41d2-883f-0016d3cca427";
    options.out_dir = tmp_.path() + "/series";
    options.run_watcher = watcher_;
    auto runner = SeriesRunner::Create(*spec, &backend_, options);
    EXPECT_TRUE(runner.ok()) << runner.status();
    auto result = (*runner)->Run();
    EXPECT_TRUE(result.ok()) << result.status();
    return *result;
  }

  ScopedTempDir tmp_;
  AllowList allow_;
  FakeBackend backend_;
  RunWatcher* watcher_ = nullptr;
};

// Stands for the device sampler of a GPU that throttles from the fourth run of the series on:
// its SM clock falls from 1410 to 1005 MHz and it reports sw_power_cap.
class ThrottlingWatcher : public RunWatcher {
 public:
  void BeginRun() override {}
  std::vector<std::string> EndRun(v1::RunRecord* record) override {
    const bool throttled = ++runs_ >= 4;
    v1::Metric* samples = record->add_metrics();
    samples->set_name("device_samples");
    samples->set_value(3);
    v1::Metric* clock = record->add_metrics();
    clock->set_name("device_sm_clock_mhz_mean");
    clock->set_value(throttled ? 1005 : 1410);
    if (throttled) {
      v1::Flag* flag = record->add_flags();
      flag->set_code("THROTTLED");
      flag->set_reason("nvidia:0 clocks event reasons sw_power_cap in 3 of 3 samples");
    }
    return {};
  }

 private:
  int runs_ = 0;
};

TEST_F(SeriesSummaryTest, PrintsEveryCallInOrderWithDropsAndFailures) {
  backend_.Script("gpu", {Ok(48.1), Ok(52.9), Ok(52.6), Ok(30.0), Ok(28.2)});
  backend_.Script("cpu", {Ok(9.8), Ok(10.1), Fail("HTTP 500 from /completion: {\"error\": \"boom\"}"),
                          Ok(10.0), Ok(9.9)});
  const SeriesResult result = Run(absl::StrCat(kHead, "runs:\n  warm: 4\n"));
  EXPECT_EQ(FormatSeriesSummary(result),
            "series s1 (task t1, backend fake fake-1.0): 10 runs, 9 OK, 1 FAILED\n"
            "predicted_per_second (tokens/s) of every call, in run order:\n"
            "gpu cold  1: 48.1\n"
            "gpu warm  1: 52.9  2: 52.6  3: 30.0 (THROUGHPUT_DROP -43.0%)  4: 28.2 (THROUGHPUT_DROP -46.4%)\n"
            "cpu cold  1: 9.8\n"
            "cpu warm  1: 10.1  2: FAILED  3: 10.0  4: 9.9\n"
            "THROUGHPUT_DROP: 2 warm call(s) fell more than 15% below the median of the first 3 warm calls of their "
            "combination: 2 unexplained\n"
            // Pettitt over 52.9, 52.6, 30.0, 28.2 (tests/unit/common/change_point_reference.py, tie4).
            "gpu warm: the level fell from 52.8 to 29.1 at warm call 3 (Pettitt p=0.6 over 4 warm calls, not "
            "significant at 5%)\n"
            "FAILED runs:\n"
            "  cpu warm 2: HTTP 500 from /completion: {\"error\": \"boom\"}\n");
  EXPECT_EQ(SeriesExitCode(result, absl::OkStatus()), kSeriesExitNotClean);
}

// CACHE_HIT runs (e.g. ComfyUI's execution cache) are listed with their reasons and are neither
// the THROUGHPUT_DROP reference nor compared with it.
TEST_F(SeriesSummaryTest, CacheHitRunsAreListedAndSkippedByThroughputDrop) {
  backend_.Script("gpu", {CacheHit(48.1, "cold run: a cold state could not be established"),
                          CacheHit(500.0, "execution_cached lists node(s) 3"), Ok(52.9), Ok(52.6), Ok(30.0),
                          CacheHit(900.0, "execution_cached lists node(s) 3")});
  const SeriesResult result = Run(absl::StrCat(kHead, "runs:\n  warm: 5\n"));
  EXPECT_EQ(FormatSeriesSummary(result),
            "series s1 (task t1, backend fake fake-1.0): 12 runs, 12 OK, 0 FAILED\n"
            "predicted_per_second (tokens/s) of every call, in run order:\n"
            "gpu cold  1: 48.1 (CACHE_HIT)\n"
            "gpu warm  1: 500.0 (CACHE_HIT)  2: 52.9  3: 52.6  4: 30.0 (THROUGHPUT_DROP -43.0%)  5: 900.0 (CACHE_HIT)\n"
            "cpu cold  1: 50.0\n"
            "cpu warm  1: 50.0  2: 50.0  3: 50.0  4: 50.0  5: 50.0\n"
            "THROUGHPUT_DROP: 1 warm call(s) fell more than 15% below the median of the first 3 warm calls of their "
            "combination: 1 unexplained\n"
            "gpu warm: the level fell from 52.8 to 30.0 at warm call 4 (Pettitt p=1 over 3 warm calls, not "
            "significant at 5%)\n"
            "3 run(s) flagged CACHE_HIT: published, excluded from every aggregate\n"
            "  gpu cold 1: cold run: a cold state could not be established\n"
            "  gpu warm 1: execution_cached lists node(s) 3\n"
            "  gpu warm 5: execution_cached lists node(s) 3\n");
  ASSERT_EQ(result.runs[4].record.flags_size(), 1);
  EXPECT_EQ(result.runs[4].record.flags(0).reason(),
            "predicted_per_second 30.0 is 43.0% below the reference 52.6, the median of warm calls 2-4 (threshold "
            "15%); the level fell from 52.8 to 30.0 at warm call 4 (Pettitt p=1 over 3 warm calls, not significant "
            "at 5%); unexplained: no device samples");
}

TEST_F(SeriesSummaryTest, DropsOnAThrottlingDeviceAreCountedAsThrottling) {
  ThrottlingWatcher watcher;
  watcher_ = &watcher;
  backend_.Script("gpu", {Ok(48.1), Ok(52.9), Ok(52.9), Ok(30.0), Ok(28.2)});
  const SeriesResult result = Run(absl::StrCat(kHead, "runs:\n  warm: 4\nmatrix:\n  mode: [gpu]\n"));
  EXPECT_EQ(FormatSeriesSummary(result),
            "series s1 (task t1, backend fake fake-1.0): 5 runs, 5 OK, 0 FAILED\n"
            "predicted_per_second (tokens/s) of every call, in run order:\n"
            "gpu cold  1: 48.1\n"
            "gpu warm  1: 52.9  2: 52.9  3: 30.0 (THROUGHPUT_DROP -43.3%)  4: 28.2 (THROUGHPUT_DROP -46.7%)\n"
            "THROUGHPUT_DROP: 2 warm call(s) fell more than 15% below the median of the first 3 warm calls of their "
            "combination: 2 with the device throttling\n"
            "gpu warm: the level fell from 52.9 to 29.1 at warm call 3 (Pettitt p=0.6 over 4 warm calls, not "
            "significant at 5%)\n");
  // The reference clock is the median of warm calls 1-3 (1410, 1410, 1005).
  EXPECT_THAT(result.runs[3].record.flags(1).reason(),
              ::testing::EndsWith("; the device throttled (SM clock 1410 -> 1005 MHz, nvidia:0 clocks event reasons "
                                  "sw_power_cap in 3 of 3 samples)"));
}

TEST_F(SeriesSummaryTest, OpenFailuresShowTheirLogTailAndWhatWasNotRun) {
  backend_.FailOpen("gpu", FakeOpenFailure{"server exited while loading (exit code 1)",
                                           "llama_model_load: loading\n\nggml_cuda_init: no CUDA devices\n"
                                           "main: error: unable to load model\nexit\n"});
  const SeriesResult result = Run(absl::StrCat(kHead, "runs:\n  warm: 2\n"));
  EXPECT_EQ(FormatSeriesSummary(result),
            "series s1 (task t1, backend fake fake-1.0): 4 runs, 3 OK, 1 FAILED\n"
            "predicted_per_second (tokens/s) of every call, in run order:\n"
            "gpu cold  1: FAILED\n"
            "cpu cold  1: 50.0\n"
            "cpu warm  1: 50.0  2: 50.0\n"
            "FAILED runs:\n"
            "  gpu cold 1: could not open fake: server exited while loading (exit code 1)\n"
            "    | ggml_cuda_init: no CUDA devices\n"
            "    | main: error: unable to load model\n"
            "    | exit\n"
            "notes:\n"
            "  gpu: stopped at cold 1, 2 of 3 planned runs not made: could not open fake\n");
}

TEST_F(SeriesSummaryTest, SimulatedRecordsAreSaidSoOnEveryLine) {
  backend_.set_simulated(true);
  const SeriesResult result = Run(absl::StrCat(kHead, "runs:\n  validation: 1\n  warm: 1\nmatrix:\n  mode: [gpu]\n"));
  EXPECT_EQ(FormatSeriesSummary(result),
            "series s1 (task t1, backend fake fake-1.0): 3 runs, 3 OK, 0 FAILED\n"
            "SIMULATED: the measured server (fake) announced itself as a simulator; its figures are not "
            "measurements of this machine\n"
            "predicted_per_second (tokens/s) of every call, in run order:\n"
            "gpu validation  1: 50.0  SIMULATED\n"
            "gpu cold        1: 50.0  SIMULATED\n"
            "gpu warm        1: 50.0  SIMULATED\n");
  EXPECT_EQ(SeriesExitCode(result, absl::OkStatus()), kSeriesExitClean);
}

TEST_F(SeriesSummaryTest, RepetitionsAndMatrixAxesGetTheirOwnLines) {
  const SeriesResult result =
      Run(absl::StrCat(kHead, "runs:\n  warm: 2\n  repetitions: 2\nmatrix:\n  mode: [gpu]\n  n_predict: [64, 128]\n"));
  EXPECT_EQ(FormatSeriesSummary(result),
            "series s1 (task t1, backend fake fake-1.0): 12 runs, 12 OK, 0 FAILED\n"
            "predicted_per_second (tokens/s) of every call, in run order:\n"
            "gpu n_predict=64 rep 1  cold  1: 50.0\n"
            "gpu n_predict=64 rep 1  warm  1: 50.0  2: 50.0\n"
            "gpu n_predict=128 rep 1 cold  1: 50.0\n"
            "gpu n_predict=128 rep 1 warm  1: 50.0  2: 50.0\n"
            "gpu n_predict=64 rep 2  cold  1: 50.0\n"
            "gpu n_predict=64 rep 2  warm  1: 50.0  2: 50.0\n"
            "gpu n_predict=128 rep 2 cold  1: 50.0\n"
            "gpu n_predict=128 rep 2 warm  1: 50.0  2: 50.0\n");
}

TEST_F(SeriesSummaryTest, ABackendWithoutAThroughputMetricShowsStatuses) {
  backend_.set_metric("");
  backend_.Script("gpu", {FakeRun{}, Fail("timed out after 120s")});
  const SeriesResult result = Run(absl::StrCat(kHead, "runs:\n  warm: 1\nmatrix:\n  mode: [gpu]\n"));
  EXPECT_EQ(FormatSeriesSummary(result),
            "series s1 (task t1, backend fake fake-1.0): 2 runs, 1 OK, 1 FAILED\n"
            "status of every call, in run order:\n"
            "gpu cold  1: OK\n"
            "gpu warm  1: FAILED\n"
            "FAILED runs:\n"
            "  gpu warm 1: timed out after 120s\n");
}

TEST(SeriesExitCodeTest, OnlyACleanDeliveredSeriesExitsZero) {
  SeriesResult clean;
  EXPECT_EQ(SeriesExitCode(clean, absl::OkStatus()), 0);
  EXPECT_EQ(SeriesExitCode(clean, absl::DeadlineExceededError("3 records still unacknowledged")), 1);

  SeriesResult failed;
  failed.failed_runs = 1;
  EXPECT_EQ(SeriesExitCode(failed, absl::OkStatus()), 1);

  SeriesResult stopped;
  stopped.stopped_early = 1;
  EXPECT_EQ(SeriesExitCode(stopped, absl::OkStatus()), 1);

  SeriesResult interrupted;
  interrupted.interrupted = true;
  EXPECT_EQ(SeriesExitCode(interrupted, absl::OkStatus()), 1);
}

}  // namespace
}  // namespace benchfleet::agent
