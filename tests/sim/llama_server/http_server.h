// A small HTTP/1.1 server for the simulator: one thread per connection, keep-alive, fixed-length
// and chunked responses with the headers in the order the handler gives them, and the raw access
// the fault modes need (a lying Content-Length, a connection dropped mid-stream). Only what
// llama-server's clients use: no TLS, no ranges, no multipart. Owner: tests/sim. Thread-safe:
// handlers run concurrently, one per connection.
#ifndef BENCHFLEET_TESTS_SIM_LLAMA_SERVER_HTTP_SERVER_H_
#define BENCHFLEET_TESTS_SIM_LLAMA_SERVER_HTTP_SERVER_H_

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace benchfleet::sim {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;
  std::string target;  // as sent, with the query
  std::string path;    // without the query
  HeaderList headers;
  std::string body;

  // Returns the value of the first header with this name (any case), or "".
  std::string Header(std::string_view name) const;
};

// The response side of one request. The first Send or BeginChunked commits the status line and
// headers: `headers` in their order, then Content-Type, Content-Length or Transfer-Encoding, and
// Connection: close (status >= 400, or the client asked) or Keep-Alive, as cpp-httplib writes them
// for llama-server.
class HttpResponder {
 public:
  HttpResponder(int fd, bool client_wants_close, bool last_on_connection)
      : fd_(fd), client_wants_close_(client_wants_close), last_on_connection_(last_on_connection) {}

  bool Send(int status, const HeaderList& headers, const std::string& content_type,
            const std::string& body);
  bool BeginChunked(int status, const HeaderList& headers, const std::string& content_type);
  // One chunk; returns false once the client is gone.
  bool WriteChunk(std::string_view data);
  bool EndChunked();
  // Like Send, but writes only the first `sent` bytes of the body (whose full length the
  // Content-Length announces) and closes the connection: a truncated response.
  bool SendPrefix(int status, const HeaderList& headers, const std::string& content_type,
                  const std::string& body, size_t sent);
  // Writes bytes as they are (a fault mode composes its own broken response).
  bool WriteRaw(std::string_view bytes);
  // Gives up on this request without an answer; the connection is closed.
  void Drop() {
    committed_ = true;
    close_ = true;
  }
  // Ends the connection after this response whatever the headers said.
  void CloseConnection() { close_ = true; }

  bool committed() const { return committed_; }
  // The connection's socket, for a handler that takes the connection over (a websocket upgrade);
  // such a handler ends with Drop() so the server closes it afterwards.
  int fd() const { return fd_; }
  bool closes() const { return close_; }
  // Returns true when the peer has closed its side (checked without blocking).
  bool PeerClosed() const;

 private:
  std::string Head(int status, const HeaderList& headers, const std::string& content_type,
                   const std::string& length_header);

  const int fd_;
  const bool client_wants_close_;
  const bool last_on_connection_;
  bool committed_ = false;
  bool close_ = false;
  bool failed_ = false;
};

using HttpHandler = std::function<void(const HttpRequest&, HttpResponder&)>;

class HttpServer {
 public:
  HttpServer() = default;
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens on host:port; false with a reason when that fails.
  bool Bind(const std::string& host, int port, std::string* error);
  // Accepts connections on a background thread from now on; `handler` answers every request.
  void Start(HttpHandler handler);

 private:
  void AcceptLoop();
  void Serve(int fd);

  int listen_fd_ = -1;
  HttpHandler handler_;
};

// Returns the reason phrase cpp-httplib uses for a status ("Service Unavailable").
const char* StatusReason(int status);

}  // namespace benchfleet::sim

#endif  // BENCHFLEET_TESTS_SIM_LLAMA_SERVER_HTTP_SERVER_H_
