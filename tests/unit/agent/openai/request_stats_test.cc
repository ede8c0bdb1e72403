// The request statistics of the openai backend: percentiles by linear interpolation, TPOT, the
// run metrics (errors by kind never dropped, rates over successful requests), goodput.
#include "agent/backends/openai/request_stats.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace benchfleet::agent::openai {
namespace {

std::map<std::string, double> ByName(const std::vector<v1::Metric>& metrics) {
  std::map<std::string, double> out;
  for (const v1::Metric& m : metrics) out[m.name()] = m.value();
  return out;
}

RequestResult Ok(double latency, double ttft, uint32_t tokens, std::vector<double> gaps = {}) {
  RequestResult r;
  r.timing.set_latency_seconds(latency);
  r.timing.set_time_to_first_token_seconds(ttft);
  r.timing.set_output_tokens(tokens);
  r.timing.set_token_source("usage");
  for (double g : gaps) r.timing.add_inter_token_seconds(g);
  return r;
}

RequestResult Failed(ErrorKind kind, const std::string& error) {
  RequestResult r;
  r.kind = kind;
  r.timing.set_latency_seconds(0.5);
  r.timing.set_error(error);
  return r;
}

TEST(PercentileTest, InterpolatesBetweenTheClosestRanksLikeNumpy) {
  EXPECT_EQ(Percentile({}, 50), std::nullopt);
  EXPECT_DOUBLE_EQ(*Percentile({7}, 99), 7);
  // Sorted 1 2 3 4: p50 at rank 1.5 -> 2.5; p90 at rank 2.7 -> 3.7; p99 at rank 2.97 -> 3.97.
  EXPECT_DOUBLE_EQ(*Percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(*Percentile({4, 1, 3, 2}, 90), 3.7);
  EXPECT_DOUBLE_EQ(*Percentile({4, 1, 3, 2}, 99), 3.97);
  EXPECT_DOUBLE_EQ(*Percentile({4, 1, 3, 2}, 0), 1);
  EXPECT_DOUBLE_EQ(*Percentile({4, 1, 3, 2}, 100), 4);
}

TEST(TimePerOutputTokenTest, IsTheDecodeTimeOverTheTokensAfterTheFirst) {
  // 1.0 s end to end, first token at 0.2 s, 5 tokens: 0.8 s for 4 tokens.
  EXPECT_DOUBLE_EQ(*TimePerOutputToken(Ok(1.0, 0.2, 5).timing), 0.2);
  EXPECT_EQ(TimePerOutputToken(Ok(1.0, 0.2, 1).timing), std::nullopt);  // one token: no decode step
  EXPECT_EQ(TimePerOutputToken(Ok(1.0, 0, 5).timing), std::nullopt);    // no TTFT (not streamed)
  EXPECT_EQ(TimePerOutputToken(Failed(ErrorKind::kHttp, "HTTP 500").timing), std::nullopt);
}

TEST(RunMetricsTest, SummarisesTheSuccessfulRequestsAndCountsEveryError) {
  const std::vector<RequestResult> requests = {Ok(1.0, 0.2, 5, {0.2, 0.2, 0.2, 0.2}), Ok(2.0, 0.5, 4, {0.5, 0.5, 0.5}),
                                               Failed(ErrorKind::kStreamCut, "stream cut after 2 chunks"),
                                               Failed(ErrorKind::kHttp, "HTTP 500: boom"),
                                               Failed(ErrorKind::kHttp, "HTTP 503: busy")};
  const std::vector<v1::Metric> metrics = RunMetrics(requests, absl::Seconds(3), Slos{});
  std::vector<std::string> names;
  for (const v1::Metric& m : metrics) names.push_back(m.name());
  EXPECT_EQ(names, (std::vector<std::string>{"requests",
                                             "requests_ok",
                                             "errors",
                                             "errors_http",
                                             "errors_stream_cut",
                                             "output_tokens",
                                             "output_tokens_per_second",
                                             "requests_per_second",
                                             "latency_mean_seconds",
                                             "latency_p50_seconds",
                                             "latency_p90_seconds",
                                             "latency_p99_seconds",
                                             "ttft_p50_seconds",
                                             "ttft_p90_seconds",
                                             "ttft_p99_seconds",
                                             "tpot_p50_seconds",
                                             "tpot_p90_seconds",
                                             "tpot_p99_seconds",
                                             "itl_p50_seconds",
                                             "itl_p90_seconds",
                                             "itl_p99_seconds"}));
  auto m = ByName(metrics);
  EXPECT_EQ(m["requests"], 5);
  EXPECT_EQ(m["requests_ok"], 2);
  EXPECT_EQ(m["errors"], 3);
  EXPECT_EQ(m["errors_http"], 2);
  EXPECT_EQ(m["errors_stream_cut"], 1);
  EXPECT_EQ(m["output_tokens"], 9);
  EXPECT_DOUBLE_EQ(m["output_tokens_per_second"], 3);
  EXPECT_DOUBLE_EQ(m["requests_per_second"], 2.0 / 3);
  EXPECT_DOUBLE_EQ(m["latency_mean_seconds"], 1.5);
  EXPECT_DOUBLE_EQ(m["latency_p50_seconds"], 1.5);
  EXPECT_DOUBLE_EQ(m["latency_p90_seconds"], 1.9);
  EXPECT_DOUBLE_EQ(m["ttft_p50_seconds"], 0.35);
  // TPOTs 0.2 and 0.5.
  EXPECT_DOUBLE_EQ(m["tpot_p50_seconds"], 0.35);
  EXPECT_DOUBLE_EQ(m["tpot_p99_seconds"], 0.2 + 0.3 * 0.99);
  // ITL over every gap: four 0.2 and three 0.5; p50 is the 4th of 7 (rank 3) = 0.2.
  EXPECT_DOUBLE_EQ(m["itl_p50_seconds"], 0.2);
  EXPECT_DOUBLE_EQ(m["itl_p90_seconds"], 0.5);
  EXPECT_EQ(m.count("goodput_requests_per_second"), 0u);
}

TEST(RunMetricsTest, GoodputCountsOnlyRequestsMeetingEverySlo) {
  const std::vector<RequestResult> requests = {Ok(1.0, 0.2, 5),  // TTFT 0.2, TPOT 0.2: meets both
                                               Ok(2.0, 0.5, 4),  // TTFT 0.5: misses the TTFT SLO
                                               Ok(1.3, 0.1, 5),  // TPOT 0.3: misses the TPOT SLO
                                               Failed(ErrorKind::kTimeout, "timeout after 1s")};
  Slos slos;
  slos.ttft_seconds = 0.3;
  slos.tpot_seconds = 0.25;
  auto m = ByName(RunMetrics(requests, absl::Seconds(2), slos));
  EXPECT_EQ(m["slo_met_requests"], 1);
  EXPECT_DOUBLE_EQ(m["goodput_requests_per_second"], 0.5);
  EXPECT_EQ(m["errors_timeout"], 1);
}

TEST(RunMetricsTest, AllFailedGivesCountsAndNoRates) {
  auto m = ByName(RunMetrics({Failed(ErrorKind::kConnection, "refused")}, absl::Seconds(1), Slos{}));
  EXPECT_EQ(m["errors"], 1);
  EXPECT_EQ(m["errors_connection"], 1);
  EXPECT_EQ(m["output_tokens_per_second"], 0);
  EXPECT_EQ(m.count("latency_p50_seconds"), 0u);
}

}  // namespace
}  // namespace benchfleet::agent::openai
