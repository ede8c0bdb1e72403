#include "agent/backends/workflow/workflow_results.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

namespace benchfleet::agent::workflow {
namespace {

std::map<std::string, double> ByName(const std::vector<v1::Metric>& metrics) {
  std::map<std::string, double> out;
  for (const v1::Metric& m : metrics) out[m.name()] = m.value();
  return out;
}

TEST(PercentileTest, InterpolatesLinearlyBetweenClosestRanks) {
  const std::vector<double> v = {4, 1, 3, 2, 5};  // sorted: 1 2 3 4 5
  EXPECT_DOUBLE_EQ(*Percentile(v, 50), 3.0);
  EXPECT_DOUBLE_EQ(*Percentile(v, 90), 4.6);
  EXPECT_DOUBLE_EQ(*Percentile(v, 99), 4.96);
  EXPECT_DOUBLE_EQ(*Percentile(v, 0), 1.0);
  EXPECT_DOUBLE_EQ(*Percentile(v, 100), 5.0);
  EXPECT_DOUBLE_EQ(*Percentile({7.5}, 99), 7.5);
  EXPECT_FALSE(Percentile({}, 50).has_value());
}

TEST(WorkflowResultsTest, ParsesTheDocumentedSchemaAndSummarises) {
  absl::StatusOr<WorkflowResults> r = ParseResults(R"({
    "tool": "workflow-standin 1", "simulated": true, "duration_seconds": 2.0,
    "requests": [
      {"prompt_id": "p1", "latency_seconds": 0.1, "output_tokens": 10, "time_to_first_token_seconds": 0.02},
      {"prompt_id": 2, "latency_seconds": 0.3, "output_tokens": 30, "time_to_first_token_seconds": 0.04},
      {"prompt_id": "p3", "error": "CUDA out of memory"}
    ]})", ResultsFormat{});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->requests.size(), 3u);
  EXPECT_EQ(r->requests[1].prompt_id(), "2");
  EXPECT_DOUBLE_EQ(r->requests[1].latency_seconds(), 0.3);
  EXPECT_EQ(r->requests[1].output_tokens(), 30u);
  EXPECT_DOUBLE_EQ(r->requests[0].time_to_first_token_seconds(), 0.02);
  EXPECT_EQ(r->requests[0].token_source(), "results file");
  EXPECT_EQ(r->requests[2].error(), "CUDA out of memory");
  EXPECT_EQ(r->tool, "workflow-standin 1");
  EXPECT_TRUE(r->simulated);
  EXPECT_EQ(*r->duration_seconds, 2.0);

  const auto m = ByName(SummaryMetrics(*r, absl::Seconds(10)));
  EXPECT_EQ(m.at("requests"), 3);
  EXPECT_EQ(m.at("failed_requests"), 1);
  EXPECT_EQ(m.at("output_tokens"), 40);
  EXPECT_DOUBLE_EQ(m.at("latency_mean_seconds"), 0.2);
  EXPECT_DOUBLE_EQ(m.at("latency_p50_seconds"), 0.2);
  EXPECT_DOUBLE_EQ(m.at("latency_p90_seconds"), 0.28);
  EXPECT_DOUBLE_EQ(m.at("latency_p99_seconds"), 0.298);
  EXPECT_DOUBLE_EQ(m.at("time_to_first_token_p50_seconds"), 0.03);
  // Over the results' own duration (2 s), not the command's 10 s.
  EXPECT_DOUBLE_EQ(m.at("output_tokens_per_second"), 20.0);
  EXPECT_DOUBLE_EQ(m.at("requests_per_second"), 1.0);
  EXPECT_EQ(ThroughputBasis(*r), "results duration_seconds");
}

TEST(WorkflowResultsTest, RatesFallBackToTheCommandsWallTimeAndTtftNeedsEveryRequest) {
  absl::StatusOr<WorkflowResults> r = ParseResults(
      R"({"requests": [{"prompt_id": "a", "latency_seconds": 1, "output_tokens": 8},
                       {"prompt_id": "b", "latency_seconds": 3, "output_tokens": 8, "time_to_first_token_seconds": 1}]})",
      ResultsFormat{});
  ASSERT_TRUE(r.ok()) << r.status();
  const auto m = ByName(SummaryMetrics(*r, absl::Seconds(4)));
  EXPECT_DOUBLE_EQ(m.at("output_tokens_per_second"), 4.0);
  EXPECT_DOUBLE_EQ(m.at("requests_per_second"), 0.5);
  EXPECT_EQ(m.count("time_to_first_token_mean_seconds"), 0u);
  EXPECT_EQ(ThroughputBasis(*r), "command wall time (start-up and model load included)");
}

TEST(WorkflowResultsTest, OtherToolsFormatsThroughJsonPointers) {
  ResultsFormat format;
  format.requests = "/data/items";
  format.prompt_id = "/meta/id";
  format.latency_seconds = "/timing/e2e";
  format.output_tokens = "/usage/completion_tokens";
  absl::StatusOr<WorkflowResults> r = ParseResults(
      R"({"data": {"items": [{"meta": {"id": "q7"}, "timing": {"e2e": 0.5}, "usage": {"completion_tokens": 12}}]}})",
      format);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->requests.size(), 1u);
  EXPECT_EQ(r->requests[0].prompt_id(), "q7");
  EXPECT_DOUBLE_EQ(r->requests[0].latency_seconds(), 0.5);
  EXPECT_EQ(r->requests[0].output_tokens(), 12u);
}

TEST(WorkflowResultsTest, GarbageIsRefusedNamingWhat) {
  auto message = [](const std::string& text) { return std::string(ParseResults(text, ResultsFormat{}).status().message()); };
  EXPECT_EQ(message("Traceback (most recent call last):"), "the results file is not JSON");
  EXPECT_EQ(message(""), "the results file is not JSON");
  EXPECT_EQ(message(R"({"results": []})"), "the results file has no array at /requests");
  EXPECT_EQ(message(R"({"requests": {}})"), "the results file has no array at /requests");
  EXPECT_EQ(message(R"({"requests": []})"), "the results file's /requests is empty: no requests");
  EXPECT_EQ(message(R"({"requests": [{"latency_seconds": 1, "output_tokens": 1}]})"),
            "request 0 (/prompt_id): the prompt id is missing or not a string or integer");
  EXPECT_EQ(message(R"({"requests": [{"prompt_id": "a", "latency_seconds": -1, "output_tokens": 1}]})"),
            "request 0 (/latency_seconds): the latency is missing or not a finite number of seconds >= 0");
  EXPECT_EQ(message(R"({"requests": [{"prompt_id": "a", "latency_seconds": "1", "output_tokens": 1}]})"),
            "request 0 (/latency_seconds): the latency is missing or not a finite number of seconds >= 0");
  EXPECT_EQ(message(R"({"requests": [{"prompt_id": "a", "latency_seconds": 1, "output_tokens": 1.5}]})"),
            "request 0 (/output_tokens): the output tokens are missing or not an integer from 0 to 4294967295");
  EXPECT_EQ(message(R"({"requests": [{"prompt_id": "a", "latency_seconds": 1, "output_tokens": 4294967296}]})"),
            "request 0 (/output_tokens): the output tokens are missing or not an integer from 0 to 4294967295");
  EXPECT_EQ(message(R"({"requests": [{"prompt_id": "a", "latency_seconds": 1, "output_tokens": 1,
                      "time_to_first_token_seconds": "fast"}]})"),
            "request 0 (/time_to_first_token_seconds): the time to first token is not a finite number >= 0");
  EXPECT_EQ(message(R"({"duration_seconds": 0, "requests": [{"prompt_id": "a", "latency_seconds": 1, "output_tokens": 1}]})"),
            "/duration_seconds: the duration is not a number > 0");
  ResultsFormat bad;
  bad.requests = "/a~2b";  // an invalid escape: never an exception
  EXPECT_EQ(ParseResults(R"({"a": []})", bad).status().message(), "the results file has no array at /a~2b");
}

}  // namespace
}  // namespace benchfleet::agent::workflow
