// Reads llama-server's answers to POST /completion: the JSON body, the server-sent-event stream
// (`"stream": true`), and error bodies, and turns a completion into named metrics with units.
// Owner: the llama-server backend. Pure functions and a small incremental SSE reader (one per
// request, not thread-safe).
#ifndef BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_COMPLETION_PARSER_H_
#define BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_COMPLETION_PARSER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "benchfleet/v1/record.pb.h"

namespace benchfleet::agent::llama_server {

struct Completion {
  std::string content;    // JSON-decoded (UTF-8 bytes); the stream's pieces joined
  std::string stop_type;  // "limit", "eos", "word", "none"
  std::optional<int64_t> tokens_predicted;
  std::optional<int64_t> tokens_evaluated;
  std::optional<int64_t> tokens_cached;
  // Every numeric field of `timings`, in the server's order (cache_n, prompt_n, prompt_ms, ...).
  std::vector<std::pair<std::string, double>> timings;

  // Returns timings[name] when present.
  std::optional<double> timing(std::string_view name) const;
};

// Parses a POST /completion JSON body. INVALID_ARGUMENT when it is not JSON or not an object,
// FAILED_PRECONDITION when it lacks `timings` (a server too old or not llama-server).
absl::StatusOr<Completion> ParseCompletionJson(std::string_view body);

// Parses a whole streamed body: `data: {...}` events separated by blank lines, the last one
// (`"stop": true`) carrying stop_type, token counts and timings. An event with an `error`
// object is reported as that error (INTERNAL, with the server's message); a stream without the
// final event is DATA_LOSS.
absl::StatusOr<Completion> ParseCompletionStream(std::string_view body);

// Reads a stream as it arrives, to see when the first generated token comes.
class SseTokenWatcher {
 public:
  // Feeds the next piece of the body. Returns true the first time a complete event carrying a
  // generated token (`"stop": false`) has arrived; false otherwise.
  bool Feed(std::string_view chunk);

 private:
  std::string pending_;
  bool seen_token_ = false;
};

// An error body of llama-server: {"error": {"code": 400, "message": "...", "type": "..."}}.
struct ServerError {
  int code = 0;
  std::string type;
  std::string message;
};

// Returns the error of an error body; nullopt when the body is not of that shape.
std::optional<ServerError> ParseServerError(std::string_view body);

// Returns the metrics of a completion, in this order:
//   every timings field: `*_ms` becomes `*_seconds` in s (`*_per_token_ms` in s/token),
//   `*_per_second` keeps its name in tokens/s, `*_n` (and `*_n_*`) keeps its name in tokens,
//   anything else keeps its name without a unit;
//   then tokens_predicted, tokens_evaluated, tokens_cached (tokens) when present.
std::vector<v1::Metric> CompletionMetrics(const Completion& completion);

// Returns the metric of one timings field, following the rules above.
v1::Metric TimingMetric(std::string_view field, double value);

}  // namespace benchfleet::agent::llama_server

#endif  // BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_COMPLETION_PARSER_H_
