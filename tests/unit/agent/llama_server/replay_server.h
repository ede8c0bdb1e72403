// ReplayServer: a loopback HTTP/1.1 server for the llama-server tests that answers with captured
// exchanges (the `curl -i` captures of tests/fixtures/llama-server) byte for byte, and misbehaves
// on request: a truncated body, a hang, a connection closed without an answer, a hook run first
// (e.g. to kill the server process mid-run). Binds port 0; one request per connection.
// Raw sockets rather than cpp-httplib: httplib 0.11 rewrites headers and cannot lie about
// Content-Length or stop mid-body. Thread-safe; Stop() (or the destructor) joins every thread.
#ifndef BENCHFLEET_TESTS_UNIT_AGENT_LLAMA_SERVER_REPLAY_SERVER_H_
#define BENCHFLEET_TESTS_UNIT_AGENT_LLAMA_SERVER_REPLAY_SERVER_H_

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/time/time.h"

namespace benchfleet::agent::testing {

struct Reply {
  enum class Fault {
    kNone,
    kTruncate,            // send truncate_at bytes of the body, then close
    kHang,                // read the request, never answer (until Stop)
    kCloseWithoutAnswer,  // read the request, close
  };
  std::string head;      // status line and headers, with the final "\r\n\r\n"
  std::string body;      // the decoded body
  bool chunked = false;  // send the body chunked, one chunk per server-sent event
  absl::Duration chunk_delay = absl::ZeroDuration();  // pause before each chunk
  Fault fault = Fault::kNone;
  size_t truncate_at = 0;
  std::function<void()> before;  // runs when the request has been read, before answering
};

// Returns the text of tests/fixtures/llama-server/<name>.
std::string Fixture(const std::string& name);

// Builds a reply from a `curl -i` capture: head up to the blank line, the rest as the body
// (re-chunked when the head says Transfer-Encoding: chunked).
Reply ReplyFromCapture(std::string_view capture);

// Builds a plain reply with Content-Length and Connection: close.
Reply JsonReply(int status, std::string body, std::string content_type = "application/json; charset=utf-8");

struct ReceivedRequest {
  std::string method_and_path;  // "POST /completion"
  std::string head;
  std::string body;
};

class ReplayServer {
 public:
  ReplayServer();
  ~ReplayServer();
  ReplayServer(const ReplayServer&) = delete;
  ReplayServer& operator=(const ReplayServer&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:PORT"
  std::string base_url() const;

  // Sets the answers to a request ("GET /health"): one per request in order, the last repeated.
  // A request without answers gets 404.
  void On(const std::string& method_and_path, std::vector<Reply> replies);

  std::vector<ReceivedRequest> requests();
  int count(const std::string& method_and_path);

  // Stops accepting, releases hanging answers and joins every thread. Idempotent.
  void Stop();

 private:
  void AcceptLoop();
  void Serve(int fd);
  Reply Next(const std::string& method_and_path);

  int listen_fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;
  std::mutex mu_;
  std::condition_variable stopping_cv_;
  bool stopping_ = false;                              // guarded by mu_
  std::map<std::string, std::vector<Reply>> replies_;  // guarded by mu_
  std::map<std::string, size_t> served_;               // guarded by mu_
  std::vector<ReceivedRequest> requests_;              // guarded by mu_
  std::vector<std::thread> handlers_;                  // guarded by mu_
  std::set<int> open_fds_;                             // guarded by mu_
};

}  // namespace benchfleet::agent::testing

#endif  // BENCHFLEET_TESTS_UNIT_AGENT_LLAMA_SERVER_REPLAY_SERVER_H_
