// Readers of OpenAI-compatible answers: the server-sent-event stream of /v1/completions and
// /v1/chat/completions (`data: {...}` events, `data: [DONE]` at the end, a usage-only chunk with
// empty `choices` before it when stream_options.include_usage is set), fed piece by piece as the
// bytes arrive so the caller can time each token, and the whole (non-streamed) answer.
// Owner: the openai backend. A StreamReader is used by one thread; the functions are pure.
#ifndef BENCHFLEET_AGENT_BACKENDS_OPENAI_OPENAI_STREAM_H_
#define BENCHFLEET_AGENT_BACKENDS_OPENAI_OPENAI_STREAM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace benchfleet::agent::openai {

// The `usage` object of an answer.
struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t total_tokens = 0;
};

// What an answer said, streamed or not.
struct Answer {
  std::string text;                // the generated text, concatenated
  std::optional<Usage> usage;      // when the server sent one
  std::string finish_reason;       // "length", "stop", ... ("" when never sent)
  std::string system_fingerprint;  // the last non-empty one seen
  std::string model;
};

// Reads an SSE stream incrementally. Events may be split across pieces or share one; lines end
// with "\n" or "\r\n"; comment lines (":...") and fields other than `data` are ignored.
class StreamReader {
 public:
  // Feeds the next piece of the body; returns how many token events it completed (events whose
  // choice carries a non-empty `text` (completions) or `delta.content` (chat)). Events after an
  // error or after [DONE] are not read.
  int Feed(std::string_view piece);

  // True once `data: [DONE]` was read.
  bool done() const { return done_; }
  // Token events read so far (the "chunks" count of a server that sends no usage).
  int64_t token_events() const { return token_events_; }
  // Events read so far, [DONE] excluded.
  int64_t events() const { return events_; }
  // Set when an event was not JSON, or was an error object ({"error": {...}}): what it said.
  const std::optional<std::string>& error() const { return error_; }
  const Answer& answer() const { return answer_; }

 private:
  void Line(std::string_view line, int* tokens);
  void Event(int* tokens);

  std::string pending_;  // an incomplete line
  std::string data_;     // the data lines of the event being read
  bool has_data_ = false;
  bool done_ = false;
  int64_t token_events_ = 0;
  int64_t events_ = 0;
  std::optional<std::string> error_;
  Answer answer_;
};

// Parses a whole (non-streamed) answer: `choices[0].text` (completions) or
// `choices[0].message.content` (chat), `usage`, `finish_reason`, `system_fingerprint`.
// INVALID_ARGUMENT when the body is not such an object (an error object's message included).
absl::StatusOr<Answer> ParseAnswer(std::string_view body);

// Returns the message of an OpenAI error body ({"error": {"message": ...}}, or vLLM's
// {"object": "error", "message": ...}); nullopt when the body is not one.
std::optional<std::string> ParseErrorMessage(std::string_view body);

}  // namespace benchfleet::agent::openai

#endif  // BENCHFLEET_AGENT_BACKENDS_OPENAI_OPENAI_STREAM_H_
