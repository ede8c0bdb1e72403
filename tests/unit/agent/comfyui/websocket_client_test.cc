// Tests of agent/http/websocket_client against an in-test loopback server that speaks raw
// RFC 6455 frames (so each test decides exactly what bytes the client sees).
#include "agent/http/websocket_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace benchfleet::agent {
namespace {

std::string Frame(uint8_t first_byte, const std::string& payload) {
  std::string f;
  f.push_back(static_cast<char>(first_byte));
  if (payload.size() < 126) {
    f.push_back(static_cast<char>(payload.size()));
  } else if (payload.size() <= 0xffff) {
    f.push_back(126);
    f.push_back(static_cast<char>(payload.size() >> 8));
    f.push_back(static_cast<char>(payload.size() & 0xff));
  } else {
    f.push_back(127);
    for (int i = 7; i >= 0; --i) f.push_back(static_cast<char>((uint64_t{payload.size()} >> (8 * i)) & 0xff));
  }
  return f + payload;
}

// One-connection loopback server: accepts, reads the handshake, then runs `script` with the
// connected socket and the handshake text.
class TinyServer {
 public:
  explicit TinyServer(std::function<void(int fd, const std::string& handshake)> script) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(listen_fd_, 1);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this, script] {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      std::string in;
      char buf[4096];
      while (in.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        in.append(buf, n);
      }
      script(fd, in);
      ::close(fd);
    });
  }
  ~TinyServer() {
    thread_.join();
    ::close(listen_fd_);
  }
  std::string url(const std::string& path = "/ws?clientId=abc") const {
    return absl::StrCat("ws://127.0.0.1:", port_, path);
  }

 private:
  int listen_fd_;
  int port_ = 0;
  std::thread thread_;
};

void SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += n;
  }
}

std::string KeyOf(const std::string& handshake) {
  const size_t at = handshake.find("Sec-WebSocket-Key: ");
  return handshake.substr(at + 19, handshake.find("\r\n", at) - at - 19);
}

std::string Upgrade(const std::string& handshake) {
  return absl::StrCat("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Accept: ",
                      WebSocketAcceptFor(KeyOf(handshake)), "\r\n\r\n");
}

// Reads one masked client frame and returns (opcode, unmasked payload); payloads under 126 bytes.
std::pair<int, std::string> ReadClientFrame(int fd) {
  unsigned char head[2];
  if (::recv(fd, head, 2, MSG_WAITALL) != 2) return {-1, ""};
  EXPECT_TRUE(head[1] & 0x80) << "client frames must be masked";
  const size_t len = head[1] & 0x7f;
  unsigned char mask[4];
  ::recv(fd, mask, 4, MSG_WAITALL);
  std::string payload(len, '\0');
  if (len > 0) ::recv(fd, payload.data(), len, MSG_WAITALL);
  for (size_t i = 0; i < len; ++i) payload[i] = static_cast<char>(payload[i] ^ mask[i % 4]);
  return {head[0] & 0x0f, payload};
}

TEST(WebSocketClientTest, Sha1AndBase64) {
  EXPECT_EQ(absl::BytesToHexString(Sha1("abc")), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(absl::BytesToHexString(Sha1("")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(absl::BytesToHexString(Sha1(std::string(1000, 'a'))), "291e9a6c66994949b57ba5e650361e98fc36b1ba");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  // RFC 6455 section 1.3's example.
  EXPECT_EQ(WebSocketAcceptFor("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

TEST(WebSocketClientTest, HandshakeFramesPingAndClose) {
  std::string seen_handshake;
  std::pair<int, std::string> pong, text_from_client, close_from_client;
  {  // the server's thread is joined at the end of this scope, before its findings are checked
    TinyServer server([&](int fd, const std::string& handshake) {
      seen_handshake = handshake;
      // The upgrade and the first frame in one write: the client must keep what follows the head.
      SendAll(fd, Upgrade(handshake) + Frame(0x81, R"({"type":"status"})"));
      SendAll(fd, Frame(0x01, "frag") + Frame(0x89, "hi") + Frame(0x80, "mented"));
      pong = ReadClientFrame(fd);
      SendAll(fd, Frame(0x82, std::string(10, '\x01')));  // binary: skipped
      SendAll(fd, Frame(0x81, std::string(70000, 'x')));  // 64-bit length
      SendAll(fd, Frame(0x81, std::string(300, 'y')));    // 16-bit length
      text_from_client = ReadClientFrame(fd);
      SendAll(fd, Frame(0x88, "\x03\xe8"));
      close_from_client = ReadClientFrame(fd);
    });
    absl::StatusOr<std::unique_ptr<WebSocketConnection>> ws = ConnectWebSocket(server.url(), absl::Seconds(5));
    ASSERT_TRUE(ws.ok()) << ws.status();
    EXPECT_EQ(*(*ws)->ReceiveText(absl::Seconds(5)), R"({"type":"status"})");
    EXPECT_EQ(*(*ws)->ReceiveText(absl::Seconds(5)), "fragmented");
    EXPECT_EQ((*ws)->ReceiveText(absl::Seconds(5))->size(), 70000u);
    EXPECT_EQ(*(*ws)->ReceiveText(absl::Seconds(5)), std::string(300, 'y'));
    ASSERT_TRUE((*ws)->SendText("hello").ok());
    absl::StatusOr<std::string> closed = (*ws)->ReceiveText(absl::Seconds(5));
    EXPECT_EQ(closed.status().code(), absl::StatusCode::kUnavailable);
  }
  EXPECT_TRUE(absl::StrContains(seen_handshake, "GET /ws?clientId=abc HTTP/1.1\r\n")) << seen_handshake;
  EXPECT_TRUE(absl::StrContains(seen_handshake, "Sec-WebSocket-Version: 13\r\n"));
  EXPECT_EQ(pong, std::make_pair(0xA, std::string("hi")));
  EXPECT_EQ(text_from_client, std::make_pair(0x1, std::string("hello")));
  EXPECT_EQ(close_from_client, std::make_pair(0x8, std::string("\x03\xe8", 2)));
}

TEST(WebSocketClientTest, ReceiveHasADeadline) {
  TinyServer server([&](int fd, const std::string& handshake) {
    SendAll(fd, Upgrade(handshake));
    ReadClientFrame(fd);  // until the client closes
  });
  absl::StatusOr<std::unique_ptr<WebSocketConnection>> ws = ConnectWebSocket(server.url(), absl::Seconds(5));
  ASSERT_TRUE(ws.ok()) << ws.status();
  EXPECT_EQ((*ws)->ReceiveText(absl::Milliseconds(50)).status(),
            absl::DeadlineExceededError(absl::StrCat("websocket ", server.url(), ": no message in time")));
  (*ws)->Close();
}

TEST(WebSocketClientTest, WrongAcceptIsRefused) {
  TinyServer server([&](int fd, const std::string&) {
    SendAll(fd, "HTTP/1.1 101 Switching Protocols\r\nSec-WebSocket-Accept: bogus\r\n\r\n");
  });
  absl::StatusOr<std::unique_ptr<WebSocketConnection>> ws = ConnectWebSocket(server.url(), absl::Seconds(5));
  EXPECT_EQ(ws.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(ws.status().message(), "wrong Sec-WebSocket-Accept \"bogus\"")) << ws.status();
}

TEST(WebSocketClientTest, NoUpgrade) {
  TinyServer server([&](int fd, const std::string&) {
    SendAll(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
  });
  absl::StatusOr<std::unique_ptr<WebSocketConnection>> ws = ConnectWebSocket(server.url(), absl::Seconds(5));
  EXPECT_EQ(ws.status(), absl::UnavailableError(absl::StrCat("websocket ", server.url(),
                                                             ": the server did not upgrade: \"HTTP/1.1 404 Not Found\"")));
}

TEST(WebSocketClientTest, BadUrls) {
  EXPECT_EQ(ConnectWebSocket("wss://h:1/ws", absl::Seconds(1)).status(),
            absl::InvalidArgumentError("websocket URL \"wss://h:1/ws\" must start with ws:// or http:// (no TLS)"));
  EXPECT_EQ(ConnectWebSocket("ws://:0/ws", absl::Seconds(1)).status(),
            absl::InvalidArgumentError("websocket URL \"ws://:0/ws\" has no usable host and port"));
}

}  // namespace
}  // namespace benchfleet::agent
