#include "tests/sim/sim_test_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "gtest/gtest.h"

namespace benchfleet::sim::testing {
namespace {

using Clock = std::chrono::steady_clock;

bool EqualsIgnoreCase(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Parses the status line and headers of `head` (without the blank line).
void ParseHead(const std::string& head, Response* r) {
  std::istringstream in(head);
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (first) {
      r->status_line = line;
      if (line.size() >= 12) r->status = std::atoi(line.substr(9, 3).c_str());
      first = false;
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    r->headers.emplace_back(line.substr(0, colon), value);
  }
}

int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

std::string Response::CurlForm() const {
  std::string out = status_line + "\r\n";
  for (const auto& [k, v] : headers) out += k + ": " + v + "\r\n";
  return out + "\r\n" + body;
}

std::string Response::Header(const std::string& name) const {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreCase(k, name)) return v;
  }
  return "";
}

std::string CurlRequest(int port, const std::string& method, const std::string& path, const std::string& body) {
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                    "\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n";
  if (method == "POST") {
    req += "Content-Length: " + std::to_string(body.size()) +
           "\r\nContent-Type: application/x-www-form-urlencoded\r\n";
  }
  return req + "\r\n" + body;
}

Response Exchange(int port, const std::string& method, const std::string& path, const std::string& body,
                  std::chrono::milliseconds timeout, const Headers& extra_headers) {
  Response r;
  const int fd = Connect(port);
  if (fd < 0) return r;
  std::string req = CurlRequest(port, method, path, body);
  if (!extra_headers.empty()) {
    std::string extra;
    for (const auto& [k, v] : extra_headers) extra += k + ": " + v + "\r\n";
    req.insert(req.find("\r\n") + 2, extra);
  }
  size_t off = 0;
  while (off < req.size()) {
    const ssize_t n = ::send(fd, req.data() + off, req.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  // Read until the response is complete, the peer closes, or nothing comes within `timeout`.
  std::string data;
  size_t head_end = std::string::npos;
  auto done = [&]() -> bool {
    if (head_end == std::string::npos) {
      head_end = data.find("\r\n\r\n");
      if (head_end == std::string::npos) return false;
      ParseHead(data.substr(0, head_end), &r);
    }
    const std::string rest = data.substr(head_end + 4);
    if (EqualsIgnoreCase(r.Header("Transfer-Encoding"), "chunked")) {
      r.body.clear();
      r.chunks.clear();
      size_t pos = 0;
      for (;;) {
        const size_t nl = rest.find("\r\n", pos);
        if (nl == std::string::npos) return false;
        const size_t size = std::strtoul(rest.substr(pos, nl - pos).c_str(), nullptr, 16);
        if (size == 0) return rest.find("\r\n", nl + 2) != std::string::npos;
        if (rest.size() < nl + 2 + size + 2) {
          r.body += rest.substr(nl + 2);  // what arrived of a chunk cut short
          return false;
        }
        r.chunks.push_back(rest.substr(nl + 2, size));
        r.body += r.chunks.back();
        pos = nl + 2 + size + 2;
      }
    }
    const std::string length = r.Header("Content-Length");
    r.body = rest;
    if (!length.empty()) return rest.size() >= std::stoul(length);
    return false;  // until close
  };
  const Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    if (done()) {
      r.complete = true;
      break;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      break;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) {
      r.timed_out = true;
      break;
    }
    char buf[16384];
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      if (head_end != std::string::npos && r.Header("Content-Length").empty() &&
          r.Header("Transfer-Encoding").empty()) {
        r.complete = true;  // a body delimited by the end of the connection
      }
      done();
      break;
    }
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return r;
}

Response ParseCapture(const std::string& text) {
  Response r;
  const size_t head_end = text.find("\r\n\r\n");
  ParseHead(text.substr(0, head_end), &r);
  r.body = text.substr(head_end + 4);
  r.complete = true;
  return r;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Fixture(const std::string& name) { return ReadFile(std::string(BENCHFLEET_LLAMA_FIXTURES) + "/" + name); }

std::vector<std::string> KeyPaths(const Json& j, const std::string& prefix) {
  std::vector<std::string> out;
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
      out.push_back(path);
      for (const std::string& sub : KeyPaths(it.value(), path)) out.push_back(sub);
    }
  } else if (j.is_array() && !j.empty() && j[0].is_object()) {
    for (const std::string& sub : KeyPaths(j[0], prefix + "[]")) out.push_back(sub);
  }
  return out;
}

std::vector<std::string> Keys(const Json& j) {
  std::vector<std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) out.push_back(it.key());
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> LogMessages(const std::string& log) {
  std::vector<std::string> out;
  for (const std::string& line : Lines(log)) {
    // "m.ss.mmm.uuu " then the level letter and the message.
    size_t i = 0;
    int dots = 0;
    while (i < line.size() && (std::isdigit(static_cast<unsigned char>(line[i])) || line[i] == '.')) {
      if (line[i] == '.') dots++;
      i++;
    }
    if (dots == 3 && i < line.size() && line[i] == ' ') {
      out.push_back(line.substr(i + 1));
    } else {
      out.push_back(line);
    }
  }
  return out;
}

std::string DigitsOut(const std::string& line) {
  std::string out;
  for (size_t i = 0; i < line.size(); i++) {
    if (std::isdigit(static_cast<unsigned char>(line[i]))) {
      out += '#';
      while (i + 1 < line.size() && std::isdigit(static_cast<unsigned char>(line[i + 1]))) i++;
    } else if (line[i] == ' ') {
      out += ' ';  // numbers are padded to their width: a run of spaces counts as one
      while (i + 1 < line.size() && line[i + 1] == ' ') i++;
    } else {
      out += line[i];
    }
  }
  return out;
}

std::string PromptOfTokens(int n) {
  std::string out;
  for (int i = 1; i < n; i++) out += i == 1 ? "a" : " a";
  return out;
}

std::string CaptureRequest(int n_predict, int seed, bool stream, bool cache_prompt) {
  Json j = Json::object();
  j["prompt"] = "Explain in one sentence what a GPU is.";
  j["n_predict"] = n_predict;
  j["temperature"] = 0;
  j["cache_prompt"] = cache_prompt;
  j["seed"] = seed;
  if (stream) j["stream"] = true;
  return j.dump();
}

Sim::Sim(std::vector<std::string> args, bool add_model) {
  if (std::getenv("BENCHFLEET_BIN_DIR") == nullptr) ::setenv("BENCHFLEET_BIN_DIR", BENCHFLEET_SIM_DEFAULT_BIN_DIR, 1);
  dir_ = benchfleet::testing::MakeTempDir("llama-sim-");
  std::ofstream(dir_ + "/tiny.gguf") << "GGUF simulated model file";
  log_path_ = dir_ + "/server.log";
  port_ = benchfleet::testing::FreePort();
  std::string cmd = "cd " + Quote(dir_) + " && exec " + Quote(benchfleet::testing::BinaryPath("llama-server-sim"));
  if (add_model) cmd += " -m tiny.gguf";
  cmd += " --host 127.0.0.1 --port " + std::to_string(port_);
  for (const std::string& a : args) cmd += " " + Quote(a);
  process_ = std::make_unique<benchfleet::testing::Subprocess>(std::vector<std::string>{"/bin/sh", "-c", cmd},
                                                               std::map<std::string, std::string>{}, log_path_);
}

Sim::~Sim() {
  process_.reset();  // kills a child still running
  // Keep the model and log of a failed test to look at; drop the rest.
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(dir_);
}

std::string Sim::log() const { return ReadFile(log_path_); }

bool Sim::WaitListening(std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    const int fd = Connect(port_);
    if (fd >= 0) {
      ::close(fd);
      return true;
    }
    if (!process_->running()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

bool Sim::WaitReady(std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (Exchange(port_, "GET", "/health", "", std::chrono::seconds(2)).status == 200) return true;
    if (!process_->running()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

int Sim::WaitExit(std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (!process_->running()) return process_->Wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

bool Sim::WaitLog(const std::string& text, std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (log().find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

}  // namespace benchfleet::sim::testing
