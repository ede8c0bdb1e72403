#include "agent/backends/llama_server/completion_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/hashing.h"
#include "tests/unit/agent/llama_server/replay_server.h"

namespace benchfleet::agent::llama_server {
namespace {

using ::benchfleet::agent::testing::Fixture;
using ::benchfleet::agent::testing::ReplyFromCapture;

// sha256 of completion_1's content, JSON-decoded to UTF-8 (145 bytes), computed independently
// with Python: hashlib.sha256(json.loads(body)["content"].encode()).hexdigest().
constexpr char kContentSha256[] = "fde6613c7ec84a5a874e19a92bb85fa0b6781066684b5d8429be49a5793db832";

std::string Body(const std::string& fixture) { return ReplyFromCapture(Fixture(fixture)).body; }

struct M {
  std::string name;
  double value;
  std::string unit;
};

void ExpectMetrics(const std::vector<v1::Metric>& actual, const std::vector<M>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(actual[i].name(), expected[i].name) << i;
    EXPECT_DOUBLE_EQ(actual[i].value(), expected[i].value) << expected[i].name;
    EXPECT_EQ(actual[i].unit(), expected[i].unit) << expected[i].name;
  }
}

TEST(CompletionParserTest, ParsesTheCapturedCompletion) {
  absl::StatusOr<Completion> completion = ParseCompletionJson(Body("completion_1.txt"));
  ASSERT_TRUE(completion.ok()) << completion.status();
  EXPECT_EQ(completion->content.size(), 145u);
  EXPECT_EQ(Sha256Hex(completion->content), kContentSha256);
  EXPECT_EQ(completion->stop_type, "limit");
  EXPECT_EQ(completion->tokens_predicted, 24);
  EXPECT_EQ(completion->tokens_evaluated, 11);
  EXPECT_EQ(completion->tokens_cached, 34);
  EXPECT_EQ(completion->timing("cache_n"), 0.0);
  EXPECT_EQ(completion->timing("absent"), std::nullopt);

  ExpectMetrics(CompletionMetrics(*completion),
                {{"cache_n", 0, "tokens"},
                 {"prompt_n", 11, "tokens"},
                 {"prompt_seconds", 0.004366, "s"},
                 {"prompt_per_token_seconds", 0.0003969090909090909, "s/token"},
                 {"prompt_per_second", 2519.4686211635367, "tokens/s"},
                 {"predicted_n", 24, "tokens"},
                 {"predicted_seconds", 0.005779, "s"},
                 {"predicted_per_token_seconds", 0.00025126086956521737, "s/token"},
                 {"predicted_per_second", 3979.9273230662743, "tokens/s"},
                 {"tokens_predicted", 24, "tokens"},
                 {"tokens_evaluated", 11, "tokens"},
                 {"tokens_cached", 34, "tokens"}});
}

TEST(CompletionParserTest, ParsesTheCapturedStreamIntoTheSameContent) {
  absl::StatusOr<Completion> completion = ParseCompletionStream(Body("completion_stream.txt"));
  ASSERT_TRUE(completion.ok()) << completion.status();
  // The 24 pieces joined are the non-streamed content, byte for byte.
  EXPECT_EQ(Sha256Hex(completion->content), kContentSha256);
  EXPECT_EQ(completion->stop_type, "limit");
  EXPECT_EQ(completion->tokens_predicted, 24);
  EXPECT_EQ(completion->tokens_evaluated, 11);
  ExpectMetrics(CompletionMetrics(*completion),
                {{"cache_n", 0, "tokens"},
                 {"prompt_n", 11, "tokens"},
                 {"prompt_seconds", 0.000611, "s"},
                 {"prompt_per_token_seconds", 0.000055545454545454544, "s/token"},
                 {"prompt_per_second", 18003.27332242226, "tokens/s"},
                 {"predicted_n", 24, "tokens"},
                 {"predicted_seconds", 0.006061, "s"},
                 {"predicted_per_token_seconds", 0.0002635217391304348, "s/token"},
                 {"predicted_per_second", 3794.7533410328333, "tokens/s"},
                 {"tokens_predicted", 24, "tokens"},
                 {"tokens_evaluated", 11, "tokens"},
                 {"tokens_cached", 34, "tokens"}});
}

TEST(CompletionParserTest, StreamWithCarriageReturnsAndWithoutFinalBlankLine) {
  absl::StatusOr<Completion> completion = ParseCompletionStream(
      "data: {\"content\":\"a\",\"stop\":false}\r\n\r\n"
      "data: {\"content\":\"b\",\"stop\":true,\"stop_type\":\"eos\",\"timings\":{\"predicted_n\":2}}");
  ASSERT_TRUE(completion.ok()) << completion.status();
  EXPECT_EQ(completion->content, "ab");
  EXPECT_EQ(completion->stop_type, "eos");
  EXPECT_EQ(completion->timing("predicted_n"), 2.0);
}

TEST(CompletionParserTest, StreamWithoutItsFinalEventIsDataLoss) {
  const std::string body = Body("completion_stream.txt");
  const std::string cut = body.substr(0, body.find("data: {\"index\":0,\"content\":\"\",\"tokens\":[]"));
  absl::StatusOr<Completion> completion = ParseCompletionStream(cut);
  EXPECT_EQ(completion.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(completion.status().message(), "the stream ended after 24 events without its final event (\"stop\": true)");
}

TEST(CompletionParserTest, StreamErrorsAreReported) {
  EXPECT_EQ(ParseCompletionStream("data: {\"content\":\"a\",\"stop\":false}\n\n"
                                  "error: {\"code\":500,\"message\":\"slot unavailable\",\"type\":\"server_error\"}\n\n")
                .status()
                .message(),
            "the stream carried an error (server_error): slot unavailable");
  EXPECT_EQ(ParseCompletionStream("data: {\"error\":{\"code\":400,\"message\":\"bad\",\"type\":\"invalid_request_error\"}}\n\n")
                .status()
                .message(),
            "the stream carried an error (invalid_request_error): bad");
  EXPECT_EQ(ParseCompletionStream("data: {\"content\":\n\n").status().message(),
            "event 1 of the stream is not JSON: [json.exception.parse_error.101] parse error at line 1, column 12: "
            "syntax error while parsing value - unexpected end of input; expected '[', '{', or a literal");
}

TEST(CompletionParserTest, BodiesThatAreNotCompletions) {
  absl::StatusOr<Completion> html = ParseCompletionJson("<html>502 Bad Gateway</html>");
  EXPECT_EQ(html.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(html.status().message(),
            "[json.exception.parse_error.101] parse error at line 1, column 1: syntax error while parsing value - "
            "invalid literal; last read: '<'");
  EXPECT_EQ(ParseCompletionJson("[1]").status().message(), "the answer is JSON but not an object");
  absl::StatusOr<Completion> no_timings = ParseCompletionJson(R"({"content":"x"})");
  EXPECT_EQ(no_timings.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(no_timings.status().message(), "the answer has no timings object");
  // A body cut in the middle.
  const std::string body = Body("completion_1.txt");
  EXPECT_EQ(ParseCompletionJson(body.substr(0, 911)).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CompletionParserTest, TokenWatcherFiresAtTheFirstCompleteTokenEvent) {
  const std::string body = Body("completion_stream.txt");
  const size_t first_event_end = body.find("\n\n") + 2;
  SseTokenWatcher watcher;
  size_t fired_at = 0;
  int fired = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    if (watcher.Feed(body.substr(i, 1))) {
      fired_at = i + 1;
      ++fired;
    }
  }
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(fired_at, first_event_end);
}

TEST(CompletionParserTest, TokenWatcherIgnoresAFinalEventAlone) {
  SseTokenWatcher watcher;
  EXPECT_FALSE(watcher.Feed("data: {\"content\":\"\",\"stop\":true,\"timings\":{}}\n\n"));
}

TEST(CompletionParserTest, ServerErrors) {
  std::optional<ServerError> too_long = ParseServerError(Body("error_prompt_too_long.txt"));
  ASSERT_TRUE(too_long.has_value());
  EXPECT_EQ(too_long->code, 400);
  EXPECT_EQ(too_long->type, "exceed_context_size_error");
  EXPECT_EQ(too_long->message,
            "request (1491 tokens) exceeds the available context size (256 tokens), try increasing it");
  std::optional<ServerError> malformed = ParseServerError(Body("error_malformed_json.txt"));
  ASSERT_TRUE(malformed.has_value());
  EXPECT_EQ(malformed->code, 500);
  EXPECT_EQ(malformed->type, "server_error");
  std::optional<ServerError> loading = ParseServerError(Body("health_loading.txt"));
  ASSERT_TRUE(loading.has_value());
  EXPECT_EQ(loading->message, "Loading model");
  EXPECT_EQ(ParseServerError(R"({"error":"plain"})")->message, "plain");
  EXPECT_FALSE(ParseServerError("<html>").has_value());
  EXPECT_FALSE(ParseServerError(R"({"status":"ok"})").has_value());
}

TEST(CompletionParserTest, TimingNamesAndUnits) {
  auto metric = [](std::string_view field, double value) {
    v1::Metric m = TimingMetric(field, value);
    return M{m.name(), m.value(), m.unit()};
  };
  const M ms = metric("predicted_ms", 1500);
  EXPECT_EQ(ms.name, "predicted_seconds");
  EXPECT_DOUBLE_EQ(ms.value, 1.5);
  EXPECT_EQ(ms.unit, "s");
  EXPECT_EQ(metric("prompt_per_token_ms", 2).unit, "s/token");
  EXPECT_EQ(metric("draft_n", 3).unit, "tokens");
  EXPECT_EQ(metric("draft_n_accepted", 3).unit, "tokens");
  EXPECT_EQ(metric("predicted_per_second", 3).unit, "tokens/s");
  const M other = metric("n_ctx_slot_ratio", 0.5);
  EXPECT_EQ(other.name, "n_ctx_slot_ratio");
  EXPECT_EQ(other.unit, "");
}

}  // namespace
}  // namespace benchfleet::agent::llama_server
