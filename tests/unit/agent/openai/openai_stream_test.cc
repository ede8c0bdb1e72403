// The SSE reader of the openai backend: events split across pieces and packed into one, CRLF
// lines, comments, the chat role chunk, the usage-only chunk, [DONE], errors in the stream; and
// the whole-answer and error-body parsers.
#include "agent/backends/openai/openai_stream.h"

#include <string>

#include "gtest/gtest.h"

namespace benchfleet::agent::openai {
namespace {

constexpr char kCompletionStream[] =
    "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"model\":\"m\",\"system_fingerprint\":\"fp-1\","
    "\"choices\":[{\"index\":0,\"text\":\" Hello\",\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n"
    "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"model\":\"m\","
    "\"choices\":[{\"index\":0,\"text\":\" world\",\"logprobs\":null,\"finish_reason\":\"length\"}],\"usage\":null}\n\n"
    "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"model\":\"m\",\"choices\":[],"
    "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"total_tokens\":7}}\n\n"
    "data: [DONE]\n\n";

TEST(StreamReaderTest, ReadsACompletionStreamWithItsUsageChunk) {
  StreamReader reader;
  EXPECT_EQ(reader.Feed(kCompletionStream), 2);
  EXPECT_TRUE(reader.done());
  EXPECT_FALSE(reader.error().has_value());
  EXPECT_EQ(reader.token_events(), 2);
  EXPECT_EQ(reader.events(), 3);
  EXPECT_EQ(reader.answer().text, " Hello world");
  EXPECT_EQ(reader.answer().finish_reason, "length");
  EXPECT_EQ(reader.answer().system_fingerprint, "fp-1");
  ASSERT_TRUE(reader.answer().usage.has_value());
  EXPECT_EQ(reader.answer().usage->prompt_tokens, 5);
  EXPECT_EQ(reader.answer().usage->completion_tokens, 2);
  EXPECT_EQ(reader.answer().usage->total_tokens, 7);
}

TEST(StreamReaderTest, CountsEachTokenWhenItsEventCompletesWhateverThePieces) {
  const std::string stream = kCompletionStream;
  StreamReader reader;
  std::vector<int> tokens;
  // One byte at a time: a token is counted on the blank line that ends its event.
  for (char c : stream) tokens.push_back(reader.Feed(std::string_view(&c, 1)));
  int total = 0;
  for (int t : tokens) total += t;
  EXPECT_EQ(total, 2);
  const size_t first_end = stream.find("\n\n") + 1;  // the second '\n' ends the first event
  EXPECT_EQ(tokens[first_end], 1);
  EXPECT_EQ(tokens[first_end - 1], 0);
  EXPECT_TRUE(reader.done());
  EXPECT_EQ(reader.answer().text, " Hello world");
}

TEST(StreamReaderTest, ReadsChatDeltasWithCrlfCommentsAndNoUsage) {
  StreamReader reader;
  const std::string stream =
      ": keep-alive\r\n\r\n"
      "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
      "\"content\":\"\"},\"finish_reason\":null}]}\r\n\r\n"
      "data:{\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},"
      "\"finish_reason\":null}]}\r\n\r\n"
      "event: ignored\r\n"
      "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there\"},"
      "\"finish_reason\":null}]}\r\n\r\n"
      "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}"
      "\r\n\r\ndata: [DONE]\r\n\r\n";
  EXPECT_EQ(reader.Feed(stream), 2);
  EXPECT_TRUE(reader.done());
  EXPECT_EQ(reader.answer().text, "Hi there");
  EXPECT_EQ(reader.answer().finish_reason, "stop");
  EXPECT_FALSE(reader.answer().usage.has_value());
  EXPECT_EQ(reader.token_events(), 2);
}

TEST(StreamReaderTest, AStreamCutBeforeDoneIsNotDone) {
  const std::string stream = kCompletionStream;
  StreamReader reader;
  // Cut in the middle of the second event: only the first one is read.
  EXPECT_EQ(reader.Feed(stream.substr(0, stream.find("world"))), 1);
  EXPECT_FALSE(reader.done());
  EXPECT_EQ(reader.events(), 1);
  EXPECT_FALSE(reader.answer().usage.has_value());
}

TEST(StreamReaderTest, AnErrorEventOrGarbageStopsTheReading) {
  StreamReader error;
  EXPECT_EQ(error.Feed("data: {\"error\":{\"message\":\"out of memory\",\"type\":\"InternalServerError\"}}\n\n"
                       "data: {\"choices\":[{\"text\":\"x\"}]}\n\ndata: [DONE]\n\n"),
            0);
  EXPECT_EQ(error.error(), "the stream carried an error: out of memory");
  EXPECT_FALSE(error.done());

  StreamReader garbage;
  EXPECT_EQ(garbage.Feed("data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: not json }{\n\n"), 1);
  EXPECT_EQ(garbage.error(), "event 2 is not a JSON object");
}

TEST(ParseAnswerTest, ReadsCompletionsAndChatAnswers) {
  absl::StatusOr<Answer> completion = ParseAnswer(
      R"({"object":"text_completion","system_fingerprint":"fp",)"
      R"("choices":[{"index":0,"text":"abc","finish_reason":"length"}],)"
      R"("usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}})");
  ASSERT_TRUE(completion.ok()) << completion.status();
  EXPECT_EQ(completion->text, "abc");
  EXPECT_EQ(completion->usage->completion_tokens, 4);
  EXPECT_EQ(completion->system_fingerprint, "fp");

  absl::StatusOr<Answer> chat = ParseAnswer(
      R"({"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},)"
      R"("finish_reason":"stop"}]})");
  ASSERT_TRUE(chat.ok()) << chat.status();
  EXPECT_EQ(chat->text, "hi");
  EXPECT_FALSE(chat->usage.has_value());

  EXPECT_EQ(ParseAnswer("nope").status(), absl::InvalidArgumentError("the body is not a JSON object"));
  EXPECT_EQ(ParseAnswer(R"({"choices":[]})").status(), absl::InvalidArgumentError("the answer has no choices"));
}

TEST(ParseErrorMessageTest, ReadsOpenAiAndVllmErrors) {
  EXPECT_EQ(ParseErrorMessage(R"({"error":{"message":"boom","type":"server_error","code":500}})"), "boom");
  EXPECT_EQ(ParseErrorMessage(R"({"object":"error","message":"bad model","type":"NotFoundError","code":404})"),
            "bad model");
  EXPECT_EQ(ParseErrorMessage(R"({"choices":[]})"), std::nullopt);
  EXPECT_EQ(ParseErrorMessage("<html>"), std::nullopt);
}

}  // namespace
}  // namespace benchfleet::agent::openai
