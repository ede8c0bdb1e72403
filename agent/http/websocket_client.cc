#include "agent/http/websocket_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace benchfleet::agent {
namespace {

constexpr size_t kMaxMessageBytes = size_t{64} << 20;
constexpr char kGuid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

uint32_t Rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

// A deadline on the monotonic clock of the kernel, for poll(). Real time on purpose: the
// socket waits are real waits; callers that simulate time inject a fake connection instead.
class Deadline {
 public:
  explicit Deadline(absl::Duration timeout)
      : end_(std::chrono::steady_clock::now() + absl::ToChronoMilliseconds(timeout)) {}
  int RemainingMs() const {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end_ - std::chrono::steady_clock::now());
    return left.count() < 0 ? 0 : static_cast<int>(std::min<int64_t>(left.count(), 1 << 30));
  }

 private:
  std::chrono::steady_clock::time_point end_;
};

struct ParsedUrl {
  std::string host;
  std::string port;
  std::string target;  // path and query
};

absl::StatusOr<ParsedUrl> ParseUrl(const std::string& url) {
  std::string_view rest = url;
  if (rest.starts_with("ws://")) {
    rest.remove_prefix(5);
  } else if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("websocket URL \"", url, "\" must start with ws:// or http:// (no TLS)"));
  }
  ParsedUrl out;
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  out.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  const size_t colon = authority.rfind(':');
  if (colon == std::string_view::npos || (authority.front() == '[' && authority.find(']') > colon)) {
    out.host = std::string(authority);
    out.port = "80";
  } else {
    out.host = std::string(authority.substr(0, colon));
    out.port = std::string(authority.substr(colon + 1));
  }
  if (!out.host.empty() && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  int port = 0;
  if (out.host.empty() || !absl::SimpleAtoi(out.port, &port) || port <= 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("websocket URL \"", url, "\" has no usable host and port"));
  }
  return out;
}

class SocketConnection : public WebSocketConnection {
 public:
  SocketConnection(int fd, std::string url, std::string buffered)
      : fd_(fd), url_(std::move(url)), in_(std::move(buffered)) {}
  ~SocketConnection() override { Close(); }

  absl::StatusOr<std::string> ReceiveText(absl::Duration timeout) override {
    Deadline deadline(timeout);
    std::string message;
    bool in_text = false;
    bool in_binary = false;
    while (true) {
      uint8_t opcode = 0;
      bool fin = false;
      std::string payload;
      if (absl::Status s = ReadFrame(deadline, &fin, &opcode, &payload); !s.ok()) return s;
      switch (opcode) {
        case 0x0:  // continuation
          if (!in_text && !in_binary) return Broken("a continuation frame without a message to continue");
          if (in_text) message += payload;
          if (fin) {
            if (in_text) return message;
            in_binary = false;
          }
          break;
        case 0x1:
          if (in_text || in_binary) return Broken("a new text frame inside a fragmented message");
          if (fin) return payload;
          in_text = true;
          message = std::move(payload);
          break;
        case 0x2:
          if (in_text || in_binary) return Broken("a new binary frame inside a fragmented message");
          in_binary = !fin;
          break;
        case 0x8:
          (void)SendFrame(0x8, payload.substr(0, 2));
          CloseSocket();
          return absl::UnavailableError(absl::StrCat("websocket ", url_, ": the server closed the connection"));
        case 0x9:
          if (absl::Status s = SendFrame(0xA, payload); !s.ok()) return s;
          break;
        case 0xA:
          break;
        default:
          return Broken(absl::StrCat("unknown opcode ", opcode));
      }
      if (message.size() > kMaxMessageBytes) return Broken("a message over 64 MiB");
    }
  }

  absl::Status SendText(std::string_view text) override { return SendFrame(0x1, text); }

  void Close() override {
    if (fd_ < 0) return;
    (void)SendFrame(0x8, std::string("\x03\xe8", 2));
    CloseSocket();
  }

 private:
  absl::Status Broken(std::string_view what) {
    CloseSocket();
    return absl::DataLossError(absl::StrCat("websocket ", url_, ": the server sent ", std::string(what)));
  }

  void CloseSocket() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // Makes in_ hold at least n bytes.
  absl::Status Fill(size_t n, const Deadline& deadline) {
    while (in_.size() < n) {
      if (fd_ < 0) return absl::UnavailableError(absl::StrCat("websocket ", url_, ": the connection is closed"));
      pollfd p{fd_, POLLIN, 0};
      const int ready = ::poll(&p, 1, deadline.RemainingMs());
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) return absl::DeadlineExceededError(absl::StrCat("websocket ", url_, ": no message in time"));
      char buf[65536];
      const ssize_t got = ::recv(fd_, buf, sizeof buf, 0);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {
        CloseSocket();
        return absl::UnavailableError(absl::StrCat("websocket ", url_, ": the server closed the connection"));
      }
      in_.append(buf, static_cast<size_t>(got));
    }
    return absl::OkStatus();
  }

  // Reads one whole frame; a frame that does not arrive whole in time stays buffered.
  absl::Status ReadFrame(const Deadline& deadline, bool* fin, uint8_t* opcode, std::string* payload) {
    if (absl::Status s = Fill(2, deadline); !s.ok()) return s;
    const auto b0 = static_cast<uint8_t>(in_[0]);
    const auto b1 = static_cast<uint8_t>(in_[1]);
    if (b1 & 0x80) return Broken("a masked frame (servers must not mask)");
    if (b0 & 0x70) return Broken("a frame with reserved bits set (no extension was negotiated)");
    size_t header = 2;
    uint64_t length = b1 & 0x7f;
    if (length == 126 || length == 127) {
      const size_t extra = length == 126 ? 2 : 8;
      if (absl::Status s = Fill(2 + extra, deadline); !s.ok()) return s;
      length = 0;
      for (size_t i = 0; i < extra; ++i) length = (length << 8) | static_cast<uint8_t>(in_[2 + i]);
      header += extra;
    }
    if (length > kMaxMessageBytes) return Broken("a frame over 64 MiB");
    if (absl::Status s = Fill(header + length, deadline); !s.ok()) return s;
    *fin = (b0 & 0x80) != 0;
    *opcode = b0 & 0x0f;
    *payload = in_.substr(header, length);
    in_.erase(0, header + length);
    return absl::OkStatus();
  }

  absl::Status SendFrame(uint8_t opcode, std::string_view payload) {
    if (fd_ < 0) return absl::UnavailableError(absl::StrCat("websocket ", url_, ": the connection is closed"));
    std::string frame;
    frame.push_back(static_cast<char>(0x80 | opcode));
    if (payload.size() < 126) {
      frame.push_back(static_cast<char>(0x80 | payload.size()));
    } else if (payload.size() <= 0xffff) {
      frame.push_back(static_cast<char>(0x80 | 126));
      frame.push_back(static_cast<char>(payload.size() >> 8));
      frame.push_back(static_cast<char>(payload.size() & 0xff));
    } else {
      frame.push_back(static_cast<char>(0x80 | 127));
      for (int i = 7; i >= 0; --i) frame.push_back(static_cast<char>((uint64_t{payload.size()} >> (8 * i)) & 0xff));
    }
    char mask[4];
    for (char& m : mask) m = static_cast<char>(rng_() & 0xff);
    frame.append(mask, 4);
    for (size_t i = 0; i < payload.size(); ++i) frame.push_back(static_cast<char>(payload[i] ^ mask[i % 4]));
    size_t sent = 0;
    while (sent < frame.size()) {
      const ssize_t n = ::send(fd_, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        CloseSocket();
        return absl::UnavailableError(absl::StrCat("websocket ", url_, ": sending failed: ", std::strerror(errno)));
      }
      sent += static_cast<size_t>(n);
    }
    return absl::OkStatus();
  }

  int fd_;
  std::string url_;
  std::string in_;
  std::mt19937 rng_{std::random_device{}()};
};

absl::StatusOr<int> ConnectTcp(const ParsedUrl& u, const std::string& url, const Deadline& deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(u.host.c_str(), u.port.c_str(), &hints, &found); rc != 0) {
    return absl::UnavailableError(absl::StrCat("websocket ", url, ": cannot resolve ", u.host, ": ", gai_strerror(rc)));
  }
  std::string last_error = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc < 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = ::poll(&p, 1, deadline.RemainingMs());
      if (rc == 0) {
        ::close(fd);
        ::freeaddrinfo(found);
        return absl::DeadlineExceededError(absl::StrCat("websocket ", url, ": connecting timed out"));
      }
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err == 0 ? 0 : -1;
      errno = err;
    }
    if (rc == 0) {
      ::freeaddrinfo(found);
      return fd;
    }
    last_error = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return absl::UnavailableError(absl::StrCat("websocket ", url, ": cannot connect: ", last_error));
}

}  // namespace

std::string Sha1(std::string_view data) {
  uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  std::string m(data);
  const uint64_t bits = uint64_t{data.size()} * 8;
  m.push_back(static_cast<char>(0x80));
  while (m.size() % 64 != 56) m.push_back('\0');
  for (int i = 7; i >= 0; --i) m.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  for (size_t chunk = 0; chunk < m.size(); chunk += 64) {
    uint32_t w[80];
    for (int i = 0; i < 16; ++i) {
      w[i] = uint32_t{static_cast<uint8_t>(m[chunk + 4 * i])} << 24 |
             uint32_t{static_cast<uint8_t>(m[chunk + 4 * i + 1])} << 16 |
             uint32_t{static_cast<uint8_t>(m[chunk + 4 * i + 2])} << 8 | uint32_t{static_cast<uint8_t>(m[chunk + 4 * i + 3])};
    }
    for (int i = 16; i < 80; ++i) w[i] = Rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; ++i) {
      uint32_t f, k;
      if (i < 20) {
        f = (b & c) | (~b & d);
        k = 0x5A827999;
      } else if (i < 40) {
        f = b ^ c ^ d;
        k = 0x6ED9EBA1;
      } else if (i < 60) {
        f = (b & c) | (b & d) | (c & d);
        k = 0x8F1BBCDC;
      } else {
        f = b ^ c ^ d;
        k = 0xCA62C1D6;
      }
      const uint32_t t = Rotl(a, 5) + f + e + k + w[i];
      e = d;
      d = c;
      c = Rotl(b, 30);
      b = a;
      a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
  }
  std::string out;
  for (uint32_t v : h) {
    for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  return out;
}

std::string Base64Encode(std::string_view data) {
  static constexpr char kTable[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    const uint32_t v = uint32_t{static_cast<uint8_t>(data[i])} << 16 | uint32_t{static_cast<uint8_t>(data[i + 1])} << 8 |
                       static_cast<uint8_t>(data[i + 2]);
    out += {kTable[v >> 18], kTable[(v >> 12) & 63], kTable[(v >> 6) & 63], kTable[v & 63]};
  }
  if (i + 1 == data.size()) {
    const uint32_t v = uint32_t{static_cast<uint8_t>(data[i])} << 16;
    out += {kTable[v >> 18], kTable[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == data.size()) {
    const uint32_t v = uint32_t{static_cast<uint8_t>(data[i])} << 16 | uint32_t{static_cast<uint8_t>(data[i + 1])} << 8;
    out += {kTable[v >> 18], kTable[(v >> 12) & 63], kTable[(v >> 6) & 63], '='};
  }
  return out;
}

std::string WebSocketAcceptFor(std::string_view key) { return Base64Encode(Sha1(std::string(key) + kGuid)); }

absl::StatusOr<std::unique_ptr<WebSocketConnection>> ConnectWebSocket(const std::string& url,
                                                                      absl::Duration timeout) {
  absl::StatusOr<ParsedUrl> u = ParseUrl(url);
  if (!u.ok()) return u.status();
  Deadline deadline(timeout);
  absl::StatusOr<int> fd = ConnectTcp(*u, url, deadline);
  if (!fd.ok()) return fd.status();

  std::random_device random;
  std::string nonce;
  for (int i = 0; i < 16; ++i) nonce.push_back(static_cast<char>(random() & 0xff));
  const std::string key = Base64Encode(nonce);
  const std::string request = absl::StrCat("GET ", u->target, " HTTP/1.1\r\nHost: ", u->host, ":", u->port,
                                           "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ",
                                           key, "\r\nSec-WebSocket-Version: 13\r\n\r\n");
  auto fail = [&](absl::Status s) {
    ::close(*fd);
    return s;
  };
  size_t sent = 0;
  while (sent < request.size()) {
    pollfd p{*fd, POLLOUT, 0};
    if (::poll(&p, 1, deadline.RemainingMs()) == 0) {
      return fail(absl::DeadlineExceededError(absl::StrCat("websocket ", url, ": handshake timed out")));
    }
    const ssize_t n = ::send(*fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return fail(absl::UnavailableError(absl::StrCat("websocket ", url, ": sending the handshake failed")));
    sent += static_cast<size_t>(n);
  }
  std::string in;
  size_t end = std::string::npos;
  while ((end = in.find("\r\n\r\n")) == std::string::npos) {
    if (in.size() > 65536) return fail(absl::DataLossError(absl::StrCat("websocket ", url, ": handshake answer too long")));
    pollfd p{*fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, deadline.RemainingMs());
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return fail(absl::DeadlineExceededError(absl::StrCat("websocket ", url, ": handshake timed out")));
    char buf[4096];
    const ssize_t got = ::recv(*fd, buf, sizeof buf, 0);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) {
      return fail(absl::UnavailableError(
          absl::StrCat("websocket ", url, ": the server closed the connection during the handshake")));
    }
    in.append(buf, static_cast<size_t>(got));
  }
  const std::string head = in.substr(0, end);
  std::vector<std::string> lines = absl::StrSplit(head, "\r\n");
  if (lines.empty() || !absl::StartsWith(lines[0], "HTTP/1.1 101")) {
    return fail(absl::UnavailableError(absl::StrCat("websocket ", url, ": the server did not upgrade: \"",
                                                    lines.empty() ? "" : lines[0], "\"")));
  }
  std::string accept;
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == std::string::npos) continue;
    if (absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(lines[i].substr(0, colon)), "sec-websocket-accept")) {
      accept = std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
    }
  }
  if (accept != WebSocketAcceptFor(key)) {
    return fail(absl::DataLossError(absl::StrCat("websocket ", url, ": wrong Sec-WebSocket-Accept \"", accept,
                                                 "\" (expected \"", WebSocketAcceptFor(key), "\")")));
  }
  return std::unique_ptr<WebSocketConnection>(new SocketConnection(*fd, url, in.substr(end + 4)));
}

}  // namespace benchfleet::agent
