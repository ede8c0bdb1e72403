// HttpClient: the small HTTP client the backends speak to the servers they measure with (GET and
// POST of JSON, and streamed bodies such as server-sent events with a per-chunk callback so the
// caller can time the first token). One interface, one libcurl implementation; tests inject a
// fake or point the real one at an in-test server. Owner: agent/http. Thread-safe (every request
// uses its own connection, so a request's timing never depends on an earlier one).
#ifndef BENCHFLEET_AGENT_HTTP_HTTP_CLIENT_H_
#define BENCHFLEET_AGENT_HTTP_HTTP_CLIENT_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace benchfleet::agent {

struct HttpRequest {
  std::string method = "GET";  // "GET" or "POST"
  std::string url;
  std::string body;  // sent with POST
  std::string content_type = "application/json";
  // Time allowed to open the TCP connection, and for the whole exchange (connect included).
  absl::Duration connect_timeout = absl::Seconds(5);
  absl::Duration total_timeout = absl::Seconds(60);
};

struct HttpResponse {
  int status = 0;  // the HTTP status; any status is a response, not an error
  std::string content_type;
  std::string body;  // the whole body, also when it was streamed
};

// Called with each piece of the body as it arrives; returning false aborts the transfer
// (Send then returns CANCELLED).
using ChunkCallback = std::function<bool(std::string_view chunk)>;

class HttpClient {
 public:
  virtual ~HttpClient() = default;

  // Performs one exchange. Errors, with the method and URL in the message:
  //   UNAVAILABLE        connection refused, reset, or closed before any answer
  //   DEADLINE_EXCEEDED  connect_timeout or total_timeout passed
  //   DATA_LOSS          the body ended before its announced length (curl's CURLE_PARTIAL_FILE)
  //   CANCELLED          on_chunk returned false
  //   INVALID_ARGUMENT   a bad URL or method; INTERNAL otherwise
  // on_chunk, when given, sees every piece of the body as it arrives.
  virtual absl::StatusOr<HttpResponse> Send(const HttpRequest& request, const ChunkCallback& on_chunk = nullptr) = 0;
};

// Returns the libcurl client. Loopback addresses never go through a proxy.
std::unique_ptr<HttpClient> NewCurlHttpClient();

// Returns the start of an unexpected answer's body for an error message: at most 200 bytes,
// with "..." when it was longer.
std::string QuoteBody(std::string_view body);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_HTTP_HTTP_CLIENT_H_
