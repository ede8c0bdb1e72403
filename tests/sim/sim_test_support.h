// Test helpers for the llama-server simulator: start the built program on a free port, talk raw
// HTTP/1.1 to it (so headers, their order and chunk framing are visible byte for byte), and read
// the real llama-server captures in tests/fixtures/llama-server. Owner: tests/sim. Not
// thread-safe.
#ifndef BENCHFLEET_TESTS_SIM_SIM_TEST_SUPPORT_H_
#define BENCHFLEET_TESTS_SIM_SIM_TEST_SUPPORT_H_

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/support/subprocess.h"

namespace benchfleet::sim::testing {

using Json = nlohmann::ordered_json;
using Headers = std::vector<std::pair<std::string, std::string>>;

// One HTTP response as read off the socket.
struct Response {
  int status = 0;             // 0: the connection ended before a status line
  std::string status_line;    // "HTTP/1.1 200 OK"
  Headers headers;            // in the order sent
  std::string body;           // de-chunked when chunked
  std::vector<std::string> chunks;  // the chunks as framed, when chunked
  bool complete = false;      // the body arrived whole (Content-Length or the last chunk)
  bool timed_out = false;     // no more bytes within the timeout
  // "status line CRLF headers CRLF CRLF body": what `curl -i` prints, the captures' form.
  std::string CurlForm() const;
  std::string Header(const std::string& name) const;
  Json JsonBody() const { return Json::parse(body); }
};

// Sends one request on a new connection to 127.0.0.1:port and reads the response.
Response Exchange(int port, const std::string& method, const std::string& path, const std::string& body = "",
                  std::chrono::milliseconds timeout = std::chrono::seconds(20),
                  const Headers& extra_headers = {});

// Returns the request curl sends for `curl -d BODY URL` (the captures were made with curl).
std::string CurlRequest(int port, const std::string& method, const std::string& path, const std::string& body);

// Parses a `curl -i` capture into a Response (body de-chunked as curl showed it).
Response ParseCapture(const std::string& text);

// Returns the text of tests/fixtures/llama-server/<name>.
std::string Fixture(const std::string& name);
std::string ReadFile(const std::string& path);

// Returns the key paths of a JSON value, depth first, in order ("timings.cache_n", ...); arrays
// of objects contribute their first element's keys under "name[]".
std::vector<std::string> KeyPaths(const Json& j, const std::string& prefix = "");
// Returns the top-level keys in order.
std::vector<std::string> Keys(const Json& j);

// Returns the log lines without their timestamp ("0.00.059.784 ") prefix.
std::vector<std::string> LogMessages(const std::string& log);
// Returns the line with every run of digits replaced by '#' and every run of spaces by one
// space, for comparing the shapes of lines whose numbers differ.
std::string DigitsOut(const std::string& line);
// Splits text into lines (without the '\n').
std::vector<std::string> Lines(const std::string& text);

// A prompt of n tokens for the simulator's tokenizer, BOS included ("a a a ...": n - 1 words).
std::string PromptOfTokens(int n);

// The capture's request: {"prompt":"Explain in one sentence what a GPU is.","n_predict":N,...}.
std::string CaptureRequest(int n_predict, int seed = 42, bool stream = false, bool cache_prompt = false);

// A running llama-server-sim. Its working directory is a fresh temp dir holding the model file
// "tiny.gguf" (so -m tiny.gguf reads as in the captures); stderr goes to log(). The destructor
// kills the process and removes the directory unless the current test failed.
class Sim {
 public:
  // Starts `llama-server-sim -m tiny.gguf --host 127.0.0.1 --port P <args>`.
  explicit Sim(std::vector<std::string> args, bool add_model = true);
  ~Sim();

  int port() const { return port_; }
  const std::string& dir() const { return dir_; }
  std::string log() const;
  benchfleet::testing::Subprocess& process() { return *process_; }

  // Waits until /health answers 200; false when the process ended or the time ran out.
  bool WaitReady(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Waits until the port accepts connections (the server binds before it loads).
  bool WaitListening(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Waits for the process to end; returns its exit code (128 + signal), or -1 on timeout.
  int WaitExit(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Waits until the log contains `text`.
  bool WaitLog(const std::string& text, std::chrono::milliseconds timeout = std::chrono::seconds(10));

  Response Get(const std::string& path) { return Exchange(port_, "GET", path); }
  Response Post(const std::string& path, const std::string& body,
                std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    return Exchange(port_, "POST", path, body, timeout);
  }

 private:
  std::string dir_;
  std::string log_path_;
  int port_ = 0;
  std::unique_ptr<benchfleet::testing::Subprocess> process_;
};

}  // namespace benchfleet::sim::testing

#endif  // BENCHFLEET_TESTS_SIM_SIM_TEST_SUPPORT_H_
