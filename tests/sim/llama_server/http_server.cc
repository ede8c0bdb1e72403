#include "tests/sim/llama_server/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <thread>

namespace benchfleet::sim {
namespace {

// cpp-httplib's limits as llama-server configures them.
constexpr int kKeepAliveTimeoutSec = 5;
constexpr int kKeepAliveMaxCount = 100;
constexpr size_t kHeaderMaxBytes = 8192;
constexpr size_t kBodyMaxBytes = 256u << 20;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) b++;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) e--;
  return std::string(s.substr(b, e - b));
}

bool WriteAll(int fd, std::string_view data) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Buffered reads from a socket, with the keep-alive idle timeout on the first byte.
class Reader {
 public:
  explicit Reader(int fd) : fd_(fd) {}

  // Waits up to timeout_ms for data; false on timeout, EOF or error.
  bool Fill(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    int r;
    do {
      r = ::poll(&p, 1, timeout_ms);
    } while (r < 0 && errno == EINTR);
    if (r <= 0) return false;
    char buf[16384];
    ssize_t n;
    do {
      n = ::recv(fd_, buf, sizeof(buf), 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return false;
    data_.append(buf, static_cast<size_t>(n));
    return true;
  }

  // Reads through the next "\r\n" (or "\n"); false when the line would exceed `max` bytes.
  bool Line(std::string* line, size_t max, int timeout_ms) {
    for (;;) {
      const size_t nl = data_.find('\n', pos_);
      if (nl != std::string::npos) {
        *line = data_.substr(pos_, nl - pos_);
        if (!line->empty() && line->back() == '\r') line->pop_back();
        pos_ = nl + 1;
        Compact();
        return true;
      }
      if (data_.size() - pos_ > max) return false;
      if (!Fill(timeout_ms)) return false;
    }
  }

  bool Bytes(size_t n, std::string* out, int timeout_ms) {
    while (data_.size() - pos_ < n) {
      if (!Fill(timeout_ms)) return false;
    }
    out->append(data_, pos_, n);
    pos_ += n;
    Compact();
    return true;
  }

  bool HasBuffered() const { return pos_ < data_.size(); }

 private:
  void Compact() {
    if (pos_ > 65536) {
      data_.erase(0, pos_);
      pos_ = 0;
    }
  }

  const int fd_;
  std::string data_;
  size_t pos_ = 0;
};

enum class ReadStatus { kOk, kClosed, kBad };

ReadStatus ReadRequest(Reader& in, int fd, HttpRequest* req) {
  std::string line;
  // Idle keep-alive connections end quietly after the timeout.
  if (!in.Line(&line, kHeaderMaxBytes, kKeepAliveTimeoutSec * 1000)) return ReadStatus::kClosed;
  const size_t sp1 = line.find(' ');
  const size_t sp2 = line.rfind(' ');
  if (sp1 == std::string::npos || sp2 == sp1) return ReadStatus::kBad;
  req->method = line.substr(0, sp1);
  req->target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string version = line.substr(sp2 + 1);
  if (version.rfind("HTTP/1.", 0) != 0) return ReadStatus::kBad;
  req->path = req->target.substr(0, req->target.find('?'));
  size_t header_bytes = line.size();
  for (;;) {
    if (!in.Line(&line, kHeaderMaxBytes, kKeepAliveTimeoutSec * 1000)) return ReadStatus::kBad;
    if (line.empty()) break;
    header_bytes += line.size();
    if (header_bytes > kHeaderMaxBytes) return ReadStatus::kBad;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) return ReadStatus::kBad;
    req->headers.emplace_back(Trim(line.substr(0, colon)), Trim(line.substr(colon + 1)));
  }
  if (EqualsIgnoreCase(req->Header("Expect"), "100-continue")) {
    WriteAll(fd, "HTTP/1.1 100 Continue\r\n\r\n");
  }
  if (EqualsIgnoreCase(req->Header("Transfer-Encoding"), "chunked")) {
    for (;;) {
      if (!in.Line(&line, 1024, kKeepAliveTimeoutSec * 1000)) return ReadStatus::kBad;
      const size_t n = std::strtoul(line.c_str(), nullptr, 16);
      if (n == 0) {
        do {  // trailers
          if (!in.Line(&line, kHeaderMaxBytes, kKeepAliveTimeoutSec * 1000)) return ReadStatus::kBad;
        } while (!line.empty());
        break;
      }
      if (req->body.size() + n > kBodyMaxBytes) return ReadStatus::kBad;
      if (!in.Bytes(n, &req->body, kKeepAliveTimeoutSec * 1000)) return ReadStatus::kBad;
      if (!in.Line(&line, 2, kKeepAliveTimeoutSec * 1000)) return ReadStatus::kBad;
    }
  } else {
    const std::string length = req->Header("Content-Length");
    if (!length.empty()) {
      char* end = nullptr;
      const unsigned long long n = std::strtoull(length.c_str(), &end, 10);
      if (end == length.c_str() || *end != '\0' || n > kBodyMaxBytes) return ReadStatus::kBad;
      if (!in.Bytes(static_cast<size_t>(n), &req->body, kKeepAliveTimeoutSec * 1000)) {
        return ReadStatus::kBad;
      }
    }
  }
  return ReadStatus::kOk;
}

}  // namespace

const char* StatusReason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Payload Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Unknown";
  }
}

std::string HttpRequest::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreCase(k, name)) return v;
  }
  return "";
}

std::string HttpResponder::Head(int status, const HeaderList& headers,
                                const std::string& content_type, const std::string& length_header) {
  if (status >= 400 || client_wants_close_ || last_on_connection_) close_ = true;
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + StatusReason(status) + "\r\n";
  for (const auto& [k, v] : headers) head += k + ": " + v + "\r\n";
  if (!content_type.empty()) head += "Content-Type: " + content_type + "\r\n";
  head += length_header;
  if (close_) {
    head += "Connection: close\r\n";
  } else {
    head += "Keep-Alive: timeout=" + std::to_string(kKeepAliveTimeoutSec) +
            ", max=" + std::to_string(kKeepAliveMaxCount) + "\r\n";
  }
  return head + "\r\n";
}

bool HttpResponder::Send(int status, const HeaderList& headers, const std::string& content_type,
                         const std::string& body) {
  if (committed_) return false;
  committed_ = true;
  const std::string head =
      Head(status, headers, content_type, "Content-Length: " + std::to_string(body.size()) + "\r\n");
  failed_ = !WriteAll(fd_, head + body);
  return !failed_;
}

bool HttpResponder::SendPrefix(int status, const HeaderList& headers, const std::string& content_type,
                               const std::string& body, size_t sent) {
  if (committed_) return false;
  committed_ = true;
  const std::string head =
      Head(status, headers, content_type, "Content-Length: " + std::to_string(body.size()) + "\r\n");
  failed_ = !WriteAll(fd_, head + body.substr(0, std::min(sent, body.size())));
  close_ = true;
  return !failed_;
}

bool HttpResponder::BeginChunked(int status, const HeaderList& headers,
                                 const std::string& content_type) {
  if (committed_) return false;
  committed_ = true;
  failed_ = !WriteAll(fd_, Head(status, headers, content_type, "Transfer-Encoding: chunked\r\n"));
  return !failed_;
}

bool HttpResponder::WriteChunk(std::string_view data) {
  if (failed_) return false;
  if (data.empty()) return true;  // an empty chunk would end the body
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  std::string chunk = size;
  chunk.append(data);
  chunk += "\r\n";
  failed_ = !WriteAll(fd_, chunk);
  return !failed_;
}

bool HttpResponder::EndChunked() {
  if (failed_) return false;
  failed_ = !WriteAll(fd_, "0\r\n\r\n");
  return !failed_;
}

bool HttpResponder::WriteRaw(std::string_view bytes) {
  committed_ = true;
  if (failed_) return false;
  failed_ = !WriteAll(fd_, bytes);
  return !failed_;
}

bool HttpResponder::PeerClosed() const {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  if ((p.revents & (POLLHUP | POLLERR)) != 0) return true;
  char c;
  return ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

HttpServer::~HttpServer() {
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

bool HttpServer::Bind(const std::string& host, int port, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* result = nullptr;
  const std::string service = std::to_string(port);
  if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &result) != 0) {
    *error = "cannot resolve " + host;
    return false;
  }
  for (addrinfo* ai = result; ai != nullptr; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
      listen_fd_ = fd;
      break;
    }
    *error = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(result);
  return listen_fd_ >= 0;
}

void HttpServer::Start(HttpHandler handler) {
  handler_ = std::move(handler);
  std::thread([this] { AcceptLoop(); }).detach();
}

void HttpServer::AcceptLoop() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE) continue;
      return;
    }
    int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    std::thread([this, fd] { Serve(fd); }).detach();
  }
}

void HttpServer::Serve(int fd) {
  Reader in(fd);
  for (int count = 1; count <= kKeepAliveMaxCount; count++) {
    HttpRequest req;
    const ReadStatus status = ReadRequest(in, fd, &req);
    if (status == ReadStatus::kClosed) break;
    if (status == ReadStatus::kBad) {
      HttpResponder bad(fd, true, true);
      bad.Send(400, {}, "", "");
      break;
    }
    const bool client_close = EqualsIgnoreCase(req.Header("Connection"), "close");
    HttpResponder res(fd, client_close, count == kKeepAliveMaxCount);
    handler_(req, res);
    if (!res.committed()) res.Send(500, {}, "", "");
    if (res.closes()) break;
  }
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

}  // namespace benchfleet::sim
