// Repeat until stable (runs.warm.until) with the scripted fake backend: warm calls that settle stop
// early and say "stable", noisy ones stop at the maximum and say "max", excluded and FAILED calls
// count toward the maximum but not toward the interval, every combination and repetition is judged
// on its own, and the end-of-series report says what ended each. The expected intervals come from
// an independent Python computation (the splitmix64 bootstrap of common/stats/spread.h written
// out by hand, seed 20261202, 2,000 resamples, 95%: the values of spread_test.cc reproduced first).
#include "agent/runner/warm_until.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "agent/runner/figures.h"
#include "agent/runner/series_runner.h"
#include "agent/runner/series_summary.h"
#include "common/record_validation.h"
#include "tests/unit/agent/runner/fake_backend.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::CacheHit;
using testing::Dying;
using testing::Fail;
using testing::FakeBackend;
using testing::FakeRun;
using testing::Ok;
using testing::ScopedTempDir;

constexpr char kHead[] = "series: s1\ntask: t1\nbackend: fake\n";

// The real filesystem with a simulated clock (the specs here have no pause).
class ClockEnv : public EnvWrapper {
 public:
  ClockEnv() : EnvWrapper(Env::Default()) {}
  Clock& clock() override { return clock_; }

 private:
  SimulatedClock clock_;
};

// The cold run, then the warm figures (nullopt-like markers are FakeRuns of their own).
std::vector<FakeRun> ColdThen(std::vector<FakeRun> warm) {
  warm.insert(warm.begin(), Ok(48.1));
  return warm;
}

std::vector<FakeRun> Values(std::initializer_list<double> values) {
  std::vector<FakeRun> runs;
  for (double v : values) runs.push_back(Ok(v));
  return runs;
}

// "warm 7" for each record (with " STOP" on the one carrying warm_stop).
std::vector<std::string> Calls(const SeriesResult& result) {
  std::vector<std::string> out;
  for (const RunResult& run : result.runs) {
    out.push_back(absl::StrCat(run.record.mode(), " ", PhaseName(run.record.phase()), " ", run.record.call_index(),
                               run.record.has_warm_stop() ? " STOP" : ""));
  }
  return out;
}

class WarmUntilTest : public ::testing::Test {
 protected:
  WarmUntilTest() : allow_(AllowConfig{{"fake"}, {}, {}, {}}, "agent.yaml"), backend_(&env_) {}

  RunnerOptions Options() {
    RunnerOptions options;
    options.env = &env_;
    options.allow = &allow_;
    options.agent_id = "1b4e28ba-2fa1-41d2-883f-0016d3cca427";
    options.task_id = "9f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f";
    options.out_dir = tmp_.path() + "/series";
    options.progress = [this](std::string_view line) { progress_.emplace_back(line); };
    return options;
  }

  absl::StatusOr<std::unique_ptr<SeriesRunner>> Runner(const std::string& yaml) {
    auto spec = ParseSeriesSpec(yaml, "spec.yaml");
    if (!spec.ok()) return spec.status();
    return SeriesRunner::Create(*spec, &backend_, Options());
  }

  SeriesResult RunSeries(const std::string& yaml) {
    auto runner = Runner(yaml);
    EXPECT_TRUE(runner.ok()) << runner.status();
    if (!runner.ok()) return {};
    auto result = (*runner)->Run();
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? std::move(*result) : SeriesResult{};
  }

  ScopedTempDir tmp_;
  ClockEnv env_;
  AllowList allow_;
  FakeBackend backend_;
  std::vector<std::string> progress_;
};

TEST_F(WarmUntilTest, FiguresThatSettleStopEarlyAndSayStable) {
  backend_.Script("gpu", ColdThen(Values({40, 60, 52, 53, 51, 52.5, 52, 52.2, 51.8, 52.1, 52.3, 52.0})));
  const SeriesResult result = RunSeries(absl::StrCat(
      kHead, "runs:\n  warm: {until: {ci_halfwidth: 2%, max: 12}}\nmatrix:\n  mode: [gpu]\n"));
  EXPECT_THAT(Calls(result), ElementsAre("gpu cold 1", "gpu warm 1", "gpu warm 2", "gpu warm 3", "gpu warm 4",
                                         "gpu warm 5", "gpu warm 6", "gpu warm 7 STOP"));
  ASSERT_EQ(result.runs.size(), 8u);
  const v1::WarmStop& stop = result.runs.back().record.warm_stop();
  // Python: calls 1-7 give median 52, interval (51, 53): half-width 1 / 52 = 1.923%. At call 6
  // (median 52.25, interval (45.5, 56.5)) it was 10.5%; at call 5, (40, 60) around 52: 19.2%.
  EXPECT_EQ(stop.reason(), v1::WarmStop::REASON_STABLE);
  EXPECT_EQ(stop.message(), "stopped: stable, CI half-width 1.9% <= 2% after 7 warm calls");
  EXPECT_EQ(stop.metric(), "predicted_per_second");
  EXPECT_EQ(stop.warm_calls(), 7u);
  EXPECT_EQ(stop.accepted_calls(), 7u);
  EXPECT_DOUBLE_EQ(stop.max_ci_halfwidth(), 0.02);
  EXPECT_EQ(stop.min_calls(), 5u);
  EXPECT_EQ(stop.max_calls(), 12u);
  EXPECT_EQ(stop.median(), 52);
  EXPECT_EQ(stop.ci_low(), 51);
  EXPECT_EQ(stop.ci_high(), 53);
  EXPECT_EQ(stop.ci_level(), 0.95);
  EXPECT_DOUBLE_EQ(stop.ci_halfwidth(), 1.0 / 52);
  EXPECT_TRUE(ValidateRecord(result.runs.back().record).ok());
  // The plan was kept: the session closed after the last warm call, nothing counts as stopped early.
  EXPECT_EQ(backend_.events().back(), "close gpu");
  EXPECT_TRUE(result.clean());
  EXPECT_EQ(result.stopped_early, 0);
  EXPECT_THAT(result.notes, IsEmpty());
  EXPECT_THAT(progress_, Contains("gpu warm: stopped: stable, CI half-width 1.9% <= 2% after 7 warm calls"));
}

TEST_F(WarmUntilTest, FiguresThatStayNoisyStopAtTheMaximumAndSayMax) {
  backend_.Script("gpu", ColdThen(Values({30, 70, 35, 65, 40, 60, 30, 70, 35, 65, 40, 60, 50, 50})));
  const SeriesResult result = RunSeries(absl::StrCat(
      kHead, "runs:\n  warm: {until: {ci_halfwidth: 2%, max: 12}}\nmatrix:\n  mode: [gpu]\n"));
  ASSERT_EQ(result.runs.size(), 13u);
  for (size_t i = 0; i + 1 < result.runs.size(); ++i) EXPECT_FALSE(result.runs[i].record.has_warm_stop()) << i;
  const v1::WarmStop& stop = result.runs.back().record.warm_stop();
  // Python: the 12 calls give median 50, interval (35, 65): half-width 15 / 50 = 30%.
  EXPECT_EQ(stop.reason(), v1::WarmStop::REASON_MAX);
  EXPECT_EQ(stop.message(), "stopped: max 12 warm calls, CI half-width 30.0% > 2%");
  EXPECT_EQ(stop.warm_calls(), 12u);
  EXPECT_EQ(stop.accepted_calls(), 12u);
  EXPECT_EQ(stop.median(), 50);
  EXPECT_EQ(stop.ci_low(), 35);
  EXPECT_EQ(stop.ci_high(), 65);
  EXPECT_DOUBLE_EQ(stop.ci_halfwidth(), 0.3);
  EXPECT_EQ(result.runs.back().record.call_index(), 12u);
  EXPECT_TRUE(result.clean());
  EXPECT_THAT(progress_, Contains("gpu warm: stopped: max 12 warm calls, CI half-width 30.0% > 2%"));
}

// A CACHE_HIT (excluded) and a FAILED warm call count toward max, not toward the interval.
TEST_F(WarmUntilTest, ExcludedAndFailedCallsAreLeftOutOfTheInterval) {
  backend_.Script("gpu", ColdThen({Ok(52), Fail("HTTP 500"), CacheHit(90, "served from cache"), Ok(51), Ok(53),
                                   Ok(52.5), Ok(51.5), Ok(52)}));
  const SeriesResult result = RunSeries(absl::StrCat(
      kHead, "runs:\n  warm: {until: {ci_halfwidth: 2%, max: 12}}\nmatrix:\n  mode: [gpu]\n"));
  ASSERT_EQ(result.runs.size(), 8u);
  const v1::WarmStop& stop = result.runs.back().record.warm_stop();
  // Python: (52, 51, 53, 52.5, 51.5) give median 52, interval (51, 53): 1.923%.
  EXPECT_EQ(stop.reason(), v1::WarmStop::REASON_STABLE);
  EXPECT_EQ(stop.message(), "stopped: stable, CI half-width 1.9% <= 2% after 7 warm calls (5 accepted)");
  EXPECT_EQ(stop.warm_calls(), 7u);
  EXPECT_EQ(stop.accepted_calls(), 5u);
  EXPECT_EQ(result.failed_runs, 1);
}

TEST_F(WarmUntilTest, TooFewAcceptedCallsAtTheMaximumSaySo) {
  backend_.Script("gpu", ColdThen({Ok(52), CacheHit(90, "cached"), CacheHit(91, "cached"), Ok(53), Ok(51)}));
  const SeriesResult result = RunSeries(absl::StrCat(
      kHead, "runs:\n  warm: {until: {ci_halfwidth: 2%, max: 5}}\nmatrix:\n  mode: [gpu]\n"));
  ASSERT_EQ(result.runs.size(), 6u);
  const v1::WarmStop& stop = result.runs.back().record.warm_stop();
  EXPECT_EQ(stop.reason(), v1::WarmStop::REASON_MAX);
  EXPECT_EQ(stop.message(), "stopped: max 5 warm calls, 3 accepted, fewer than the 5 the test needs");
  EXPECT_EQ(stop.accepted_calls(), 3u);
  EXPECT_EQ(stop.ci_level(), 0);
  EXPECT_EQ(stop.median(), 0);
}

// min raises the calls needed before the test applies: at call 5 the interval would already pass.
TEST_F(WarmUntilTest, MinDelaysTheTest) {
  backend_.Script("gpu", ColdThen(Values({52, 51, 53, 52.5, 51.5, 52, 52, 52})));
  const SeriesResult result = RunSeries(absl::StrCat(
      kHead, "runs:\n  warm: {until: {ci_halfwidth: 2%, min: 6, max: 12}}\nmatrix:\n  mode: [gpu]\n"));
  ASSERT_EQ(result.runs.size(), 7u);
  const v1::WarmStop& stop = result.runs.back().record.warm_stop();
  // Python: (52, 51, 53, 52.5, 51.5, 52) give median 52, interval (51.25, 52.75): 1.442%.
  EXPECT_EQ(stop.message(), "stopped: stable, CI half-width 1.4% <= 2% after 6 warm calls");
  EXPECT_EQ(stop.ci_low(), 51.25);
  EXPECT_EQ(stop.ci_high(), 52.75);
}

TEST_F(WarmUntilTest, EachCombinationAndRepetitionIsJudgedOnItsOwnAndTheReportSaysWhatEndedIt) {
  backend_.Script("gpu", ColdThen(Values({52, 51, 53, 52.5, 51.5})));
  backend_.Script("cpu", ColdThen(Values({30, 70, 35, 65, 40, 60, 30, 70})));
  const SeriesResult result = RunSeries(absl::StrCat(
      kHead, "runs:\n  warm: {until: {ci_halfwidth: 2%, max: 8}}\nmatrix:\n  mode: [gpu, cpu]\n"));
  EXPECT_THAT(Calls(result), ElementsAre("gpu cold 1", "gpu warm 1", "gpu warm 2", "gpu warm 3", "gpu warm 4",
                                         "gpu warm 5 STOP", "cpu cold 1", "cpu warm 1", "cpu warm 2", "cpu warm 3",
                                         "cpu warm 4", "cpu warm 5", "cpu warm 6", "cpu warm 7", "cpu warm 8 STOP"));
  // Python: cpu's 8 calls give median 50, interval (32.5, 67.5): 35%.
  EXPECT_THAT(FormatSeriesSummary(result),
              HasSubstr("warm calls until stable (95% CI of the median of predicted_per_second, half-width <= 2% of "
                        "it, tested from 5 accepted calls, at most 8):\n"
                        "  gpu: stopped: stable, CI half-width 1.9% <= 2% after 5 warm calls\n"
                        "  cpu: stopped: max 8 warm calls, CI half-width 35.0% > 2%\n"));
  EXPECT_TRUE(result.clean());
}

TEST_F(WarmUntilTest, ASimulatedServersStopIsLabelledSimulated) {
  backend_.set_simulated(true);
  backend_.Script("gpu", ColdThen(Values({52, 51, 53, 52.5, 51.5})));
  const SeriesResult result = RunSeries(absl::StrCat(
      kHead, "runs:\n  warm: {until: {ci_halfwidth: 2%, max: 8}}\nmatrix:\n  mode: [gpu]\n"));
  EXPECT_THAT(FormatSeriesSummary(result),
              HasSubstr("\n  gpu: stopped: stable, CI half-width 1.9% <= 2% after 5 warm calls  SIMULATED\n"));
  EXPECT_THAT(progress_, Contains("gpu warm: stopped: stable, CI half-width 1.9% <= 2% after 5 warm calls SIMULATED"));
  EXPECT_TRUE(result.runs.back().record.simulated());
}

TEST_F(WarmUntilTest, ADyingSessionStopsTheCombinationEarlyWithoutAWarmStop) {
  backend_.Script("gpu", ColdThen({Ok(52), Dying(Ok(51))}));
  const SeriesResult result = RunSeries(absl::StrCat(
      kHead, "runs:\n  warm: {until: {ci_halfwidth: 2%, max: 12}}\nmatrix:\n  mode: [gpu]\n"));
  EXPECT_THAT(Calls(result), ElementsAre("gpu cold 1", "gpu warm 1", "gpu warm 2"));
  EXPECT_EQ(result.stopped_early, 1);
  EXPECT_THAT(result.notes, ElementsAre("gpu: stopped at warm 2, 10 of 13 planned runs not made: the fake session "
                                        "ended"));
}

TEST_F(WarmUntilTest, ABackendWithoutAMainFigureIsRefused) {
  backend_.set_metric("");
  const auto runner = Runner(absl::StrCat(kHead, "runs:\n  warm: {until: {ci_halfwidth: 2%, max: 12}}\n"));
  EXPECT_EQ(runner.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(runner.status().message(),
            "spec.yaml:5: runs.warm.until needs a main figure to judge stability on, and the fake backend declares "
            "none");
}

// The tracker alone: other phases are not looked at, and a median of 0 gives no relative width.
TEST(WarmUntilTrackerTest, OnlyWarmCallsCountAndAZeroMedianIsNeverStable) {
  WarmUntil until;
  until.ci_halfwidth = 0.02;
  until.max = 5;
  WarmUntilTracker tracker(until, "predicted_per_second");
  v1::RunRecord cold;
  cold.set_phase(v1::PHASE_COLD);
  EXPECT_FALSE(tracker.Observe(&cold));
  EXPECT_FALSE(cold.has_warm_stop());
  for (uint32_t call = 1; call <= 5; ++call) {
    v1::RunRecord warm;
    warm.set_phase(v1::PHASE_WARM);
    warm.set_call_index(call);
    warm.mutable_status()->set_code(v1::RunStatus::CODE_OK);
    v1::Metric* metric = warm.add_metrics();
    metric->set_name("predicted_per_second");
    metric->set_value(0);
    EXPECT_EQ(tracker.Observe(&warm), call == 5) << call;
    if (call == 5) {
      EXPECT_EQ(warm.warm_stop().reason(), v1::WarmStop::REASON_MAX);
      EXPECT_EQ(warm.warm_stop().message(), "stopped: max 5 warm calls, a median of 0: no relative half-width");
      EXPECT_EQ(warm.warm_stop().warm_calls(), 5u);
    }
  }
}

}  // namespace
}  // namespace benchfleet::agent
