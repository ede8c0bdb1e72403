// agent/runner/steady_state: the steady-state figures of a serving run's requests (MSER-5), on
// simulated latencies with a known warm-up (20 slow requests, then 80 steady ones), against values
// computed independently in Python 3.11 (tests/unit/common/mser_reference.py: the same latencies,
// White's formula with two-pass sums, Hyndman-Fan type 7 percentiles written out, sum of tokens
// over sum of latencies); and the runner adding them to a record, stamped, and the summary line.
#include "agent/runner/steady_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "agent/runner/series_summary.h"
#include "tests/unit/agent/runner/fake_backend.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

// mser_reference.py's latencies(): 3.0 s falling by 0.1 s for 20 requests, then 1.0 s +- 0.05 s;
// request i counts 100 + (i % 3) * 10 output tokens.
std::vector<v1::RequestTiming> WarmUpThenSteady() {
  std::vector<v1::RequestTiming> requests;
  for (int i = 0; i < 100; ++i) {
    v1::RequestTiming& r = requests.emplace_back();
    r.set_prompt_id(absl::StrCat("p", i + 1));
    r.set_latency_seconds(i < 20 ? 3.0 - 0.1 * i : 1.0 + 0.01 * (((i - 20) * 7) % 11 - 5));
    r.set_output_tokens(100 + (i % 3) * 10);
  }
  return requests;
}

v1::RunRecord RecordOf(const std::vector<v1::RequestTiming>& requests) {
  v1::RunRecord record;
  for (const v1::RequestTiming& r : requests) *record.add_requests() = r;
  return record;
}

const v1::Metric* Find(const v1::RunRecord& record, std::string_view name) {
  for (const v1::Metric& m : record.metrics()) {
    if (m.name() == name) return &m;
  }
  return nullptr;
}

TEST(SteadyStateTest, TheTwentySlowRequestsAreTheWarmUp) {
  const std::optional<SteadyState> s = SteadyStateOf(RecordOf(WarmUpThenSteady()));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->truncation.truncated, 20u);
  // Python: the whole run's 100 requests.
  EXPECT_EQ(s->whole.requests, 100u);
  EXPECT_NEAR(s->whole.latency_mean_seconds, 1.2095, 1e-12);
  EXPECT_NEAR(s->whole.latency_p50_seconds, 1.01, 1e-12);
  EXPECT_NEAR(s->whole.latency_p90_seconds, 2.0100000000000007, 1e-12);
  EXPECT_NEAR(*s->whole.output_tokens_per_second, 90.86399338569656, 1e-9);
  // Python: the 80 after the truncation point.
  EXPECT_EQ(s->steady.requests, 80u);
  EXPECT_NEAR(s->steady.latency_mean_seconds, 0.9993749999999999, 1e-12);
  EXPECT_NEAR(s->steady.latency_p50_seconds, 1.0, 1e-12);
  EXPECT_NEAR(s->steady.latency_p90_seconds, 1.04, 1e-12);
  EXPECT_NEAR(*s->steady.output_tokens_per_second, 110.06879299562227, 1e-9);
  EXPECT_EQ(SteadyStateLine(*s),
            "steady state (MSER-5): 20 of 100 requests warm-up; mean latency 1.2 s -> 999 ms, p50 1.0 s -> 1.0 s, "
            "p90 2.0 s -> 1.0 s, tokens/s per request 90.9 -> 110.1");
}

TEST(SteadyStateTest, FailedRequestsAreLeftOut) {
  std::vector<v1::RequestTiming> requests = WarmUpThenSteady();
  v1::RequestTiming failed;
  failed.set_latency_seconds(30);
  failed.set_error("timeout after 30 s");
  requests.insert(requests.begin() + 50, failed);
  const std::optional<SteadyState> s = SteadyStateOf(RecordOf(requests));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->truncation.truncated, 20u);
  EXPECT_EQ(s->whole.requests, 100u);
  EXPECT_NEAR(s->steady.latency_mean_seconds, 0.9993749999999999, 1e-12);
}

TEST(SteadyStateTest, NoFiguresFromTooFewRequestsOrARunThatNeverSettles) {
  std::vector<v1::RequestTiming> requests = WarmUpThenSteady();
  requests.resize(19);  // 3 batches of 5
  EXPECT_EQ(SteadyStateOf(RecordOf(requests)), std::nullopt);
  // Still falling at the end: MSER-5 stops at half the run (mser_test.cc), no steady state.
  std::vector<v1::RequestTiming> falling(20);
  for (int i = 0; i < 20; ++i) falling[i].set_latency_seconds(10 - 0.4 * i);
  EXPECT_EQ(SteadyStateOf(RecordOf(falling)), std::nullopt);
  EXPECT_EQ(SteadyStateOf(v1::RunRecord()), std::nullopt);
}

TEST(SteadyStateTest, TheFiguresGoOnTheRecord) {
  v1::RunRecord record = RecordOf(WarmUpThenSteady());
  AddSteadyStateFigures(*SteadyStateOf(record), &record);
  std::vector<std::string> lines;
  for (const v1::Metric& m : record.metrics()) lines.push_back(absl::StrCat(m.name(), " ", m.value(), " ", m.unit()));
  EXPECT_THAT(lines, ::testing::ElementsAre("steady_state_latency_mean_seconds 0.999375 s",
                                            "steady_state_warmup_requests 20 requests",
                                            "steady_state_requests 80 requests",
                                            "steady_state_latency_p50_seconds 1 s",
                                            "steady_state_latency_p90_seconds 1.04 s",
                                            "steady_state_request_output_tokens_per_second 110.069 tokens/s"));
}

class SteadyStateRunnerTest : public ::testing::Test {
 protected:
  SteadyStateRunnerTest() : allow_(AllowConfig{{"fake"}, {}, {}, {}}, "agent.yaml"), backend_(Env::Default()) {}

  SeriesResult Run(const std::string& yaml) {
    auto spec = ParseSeriesSpec(yaml, "spec.yaml");
    EXPECT_TRUE(spec.ok()) << spec.status();
    RunnerOptions options;
    options.env = Env::Default();
    options.allow = &allow_;
    options.agent_id = "1b4e28ba-2fa1-41d2-883f-0016d3cca427";
    options.out_dir = tmp_.path() + "/series";
    auto runner = SeriesRunner::Create(*spec, &backend_, options);
    EXPECT_TRUE(runner.ok()) << runner.status();
    auto result = (*runner)->Run();
    EXPECT_TRUE(result.ok()) << result.status();
    return *result;
  }

  testing::ScopedTempDir tmp_;
  AllowList allow_;
  testing::FakeBackend backend_;
};

TEST_F(SteadyStateRunnerTest, ARunWithRequestsCarriesItsSteadyStateStampedAfterTheBackendsFigures) {
  backend_.set_metric("predicted_per_second");
  testing::FakeRun serving = testing::Ok(90.9);
  serving.requests = WarmUpThenSteady();
  backend_.Script("gpu", {testing::Ok(80), serving});
  const SeriesResult result = Run("series: s1\ntask: t1\nbackend: fake\nruns:\n  warm: 1\n");
  ASSERT_EQ(result.runs.size(), 4u);  // gpu cold, gpu warm, then the cpu mode's two (no requests)
  for (size_t i : {0, 2, 3}) EXPECT_EQ(Find(result.runs[i].record, kSteadyLatencyMeanMetric), nullptr) << i;  // no requests
  const v1::RunRecord& warm = result.runs[1].record;
  const v1::Metric* mean = Find(warm, kSteadyLatencyMeanMetric);
  ASSERT_NE(mean, nullptr);
  EXPECT_NEAR(mean->value(), 0.9993749999999999, 1e-12);
  // The fake declares 1 headline figure and the device sampler 2: the steady state's come 4th and 5th.
  EXPECT_EQ(mean->headline(), 4u);
  EXPECT_EQ(mean->label(), "steady-state mean latency");
  EXPECT_EQ(mean->better(), v1::BETTER_LOWER);
  const v1::Metric* warm_up = Find(warm, kSteadyWarmUpRequestsMetric);
  ASSERT_NE(warm_up, nullptr);
  EXPECT_EQ(warm_up->value(), 20);
  EXPECT_EQ(warm_up->headline(), 5u);
  EXPECT_EQ(warm_up->label(), "MSER-5 warm-up requests");
  const v1::Metric* p90 = Find(warm, kSteadyLatencyP90Metric);
  ASSERT_NE(p90, nullptr);
  EXPECT_EQ(p90->headline(), 0u);
  EXPECT_EQ(p90->distribution(), "steady_state_latency");
  EXPECT_EQ(p90->percentile(), 90u);
  EXPECT_THAT(FormatSeriesSummary(result),
              ::testing::HasSubstr("steady state of the runs with requests (MSER-5 warm-up dropped; whole run -> "
                                   "steady):\n  gpu warm 1: steady state (MSER-5): 20 of 100 requests warm-up; mean "
                                   "latency 1.2 s -> 999 ms, p50 1.0 s -> 1.0 s, p90 2.0 s -> 1.0 s, tokens/s per "
                                   "request 90.9 -> 110.1\n"));
}

}  // namespace
}  // namespace benchfleet::agent
