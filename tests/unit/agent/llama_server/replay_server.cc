#include "tests/unit/agent/llama_server/replay_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace benchfleet::agent::testing {
namespace {

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads one request (head and Content-Length body). False when the peer went away first.
bool ReadRequest(int fd, ReceivedRequest* request) {
  std::string data;
  char buf[4096];
  size_t head_end = std::string::npos;
  size_t need = 0;
  while (true) {
    if (head_end == std::string::npos) {
      head_end = data.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        request->head = data.substr(0, head_end + 4);
        for (absl::string_view line : absl::StrSplit(request->head, "\r\n")) {
          if (absl::StartsWithIgnoreCase(line, "content-length:")) {
            (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(15)), &need);
          }
        }
        const std::vector<std::string> words = absl::StrSplit(request->head.substr(0, request->head.find("\r\n")), ' ');
        request->method_and_path = words.size() >= 2 ? absl::StrCat(words[0], " ", words[1]) : "";
      }
    }
    if (head_end != std::string::npos && data.size() >= head_end + 4 + need) {
      request->body = data.substr(head_end + 4, need);
      return true;
    }
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.append(buf, static_cast<size_t>(n));
  }
}

// Splits a server-sent-event body into its events, each with its blank line.
std::vector<std::string> SseChunks(const std::string& body) {
  std::vector<std::string> chunks;
  size_t start = 0;
  while (start < body.size()) {
    size_t end = body.find("\n\n", start);
    end = end == std::string::npos ? body.size() : end + 2;
    chunks.push_back(body.substr(start, end - start));
    start = end;
  }
  return chunks;
}

}  // namespace

std::string Fixture(const std::string& name) {
  const std::string path = std::string(BENCHFLEET_LLAMA_FIXTURES) + "/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read fixture " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Reply ReplyFromCapture(std::string_view capture) {
  Reply reply;
  const size_t end = capture.find("\r\n\r\n");
  if (end == std::string_view::npos) throw std::runtime_error("not a curl -i capture");
  reply.head = std::string(capture.substr(0, end + 4));
  reply.body = std::string(capture.substr(end + 4));
  reply.chunked = absl::StrContains(absl::AsciiStrToLower(reply.head), "transfer-encoding: chunked");
  return reply;
}

Reply JsonReply(int status, std::string body, std::string content_type) {
  const char* reason = status == 200 ? "OK" : status == 400 ? "Bad Request" : status == 404 ? "Not Found"
                       : status == 500 ? "Internal Server Error" : status == 502 ? "Bad Gateway"
                       : status == 503 ? "Service Unavailable" : "Status";
  Reply reply;
  reply.head = absl::StrCat("HTTP/1.1 ", status, " ", reason, "\r\nServer: llama.cpp\r\nContent-Type: ", content_type,
                            "\r\nContent-Length: ", body.size(), "\r\nConnection: close\r\n\r\n");
  reply.body = std::move(body);
  return reply;
}

ReplayServer::ReplayServer() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_, 64) != 0 || ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw std::runtime_error("ReplayServer cannot listen");
  }
  port_ = ntohs(addr.sin_port);
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

ReplayServer::~ReplayServer() { Stop(); }

std::string ReplayServer::base_url() const { return absl::StrCat("http://127.0.0.1:", port_); }

void ReplayServer::On(const std::string& method_and_path, std::vector<Reply> replies) {
  std::lock_guard<std::mutex> lock(mu_);
  replies_[method_and_path] = std::move(replies);
  served_[method_and_path] = 0;
}

std::vector<ReceivedRequest> ReplayServer::requests() {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

int ReplayServer::count(const std::string& method_and_path) {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const ReceivedRequest& r : requests_) n += r.method_and_path == method_and_path ? 1 : 0;
  return n;
}

void ReplayServer::Stop() {
  std::vector<std::thread> handlers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  stopping_cv_.notify_all();
  ::shutdown(listen_fd_, SHUT_RDWR);
  accept_thread_.join();
  ::close(listen_fd_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    handlers.swap(handlers_);
  }
  for (std::thread& t : handlers) t.join();
}

void ReplayServer::AcceptLoop() {
  while (true) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      if (fd >= 0) ::close(fd);
      return;
    }
    if (fd < 0) continue;
    open_fds_.insert(fd);
    handlers_.emplace_back([this, fd] { Serve(fd); });
  }
}

Reply ReplayServer::Next(const std::string& method_and_path) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = replies_.find(method_and_path);
  if (it == replies_.end() || it->second.empty()) {
    return JsonReply(404, R"({"error":{"code":404,"message":"File Not Found","type":"not_found_error"}})");
  }
  size_t& served = served_[method_and_path];
  const Reply& reply = it->second[std::min(served, it->second.size() - 1)];
  ++served;
  return reply;
}

void ReplayServer::Serve(int fd) {
  ReceivedRequest request;
  if (ReadRequest(fd, &request)) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request);
    }
    const Reply reply = Next(request.method_and_path);
    if (reply.before) reply.before();
    switch (reply.fault) {
      case Reply::Fault::kHang: {
        std::unique_lock<std::mutex> lock(mu_);
        stopping_cv_.wait(lock, [this] { return stopping_; });
        break;
      }
      case Reply::Fault::kCloseWithoutAnswer:
        break;
      case Reply::Fault::kNone:
      case Reply::Fault::kTruncate: {
        const size_t limit = reply.fault == Reply::Fault::kTruncate ? reply.truncate_at : reply.body.size();
        if (!WriteAll(fd, reply.head)) break;
        if (!reply.chunked) {
          WriteAll(fd, std::string_view(reply.body).substr(0, limit));
          break;
        }
        size_t sent = 0;
        bool complete = true;
        for (const std::string& chunk : SseChunks(reply.body)) {
          if (sent >= limit) {
            complete = false;
            break;
          }
          if (reply.chunk_delay > absl::ZeroDuration()) {
            std::this_thread::sleep_for(absl::ToChronoNanoseconds(reply.chunk_delay));
          }
          char size[32];
          std::snprintf(size, sizeof(size), "%zx\r\n", chunk.size());
          if (!WriteAll(fd, absl::StrCat(size, chunk, "\r\n"))) break;
          sent += chunk.size();
        }
        if (complete && reply.fault == Reply::Fault::kNone) WriteAll(fd, "0\r\n\r\n");
        break;
      }
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  open_fds_.erase(fd);
  ::close(fd);
}

}  // namespace benchfleet::agent::testing
