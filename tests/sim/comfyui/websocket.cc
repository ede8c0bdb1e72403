#include "tests/sim/comfyui/websocket.h"

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

namespace benchfleet::sim::comfyui {
namespace {

bool WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

bool ReadExact(int fd, size_t n, std::string* out) {
  out->clear();
  while (out->size() < n) {
    char buf[4096];
    const size_t want = std::min(sizeof(buf), n - out->size());
    const ssize_t r = ::recv(fd, buf, want, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    out->append(buf, static_cast<size_t>(r));
  }
  return true;
}

}  // namespace

std::string WebSocketAccept(const std::string& key) {
  const std::string in = key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(in.data()), in.size(), digest);
  unsigned char out[64];
  const int n = EVP_EncodeBlock(out, digest, SHA_DIGEST_LENGTH);
  return std::string(reinterpret_cast<char*>(out), static_cast<size_t>(n));
}

std::string EncodeFrame(int opcode, const std::string& payload) {
  std::string f;
  f.push_back(static_cast<char>(0x80 | opcode));
  const size_t n = payload.size();
  if (n < 126) {
    f.push_back(static_cast<char>(n));
  } else if (n < 65536) {
    f.push_back(126);
    f.push_back(static_cast<char>(n >> 8));
    f.push_back(static_cast<char>(n & 0xFF));
  } else {
    f.push_back(127);
    for (int i = 7; i >= 0; i--) f.push_back(static_cast<char>((static_cast<uint64_t>(n) >> (8 * i)) & 0xFF));
  }
  return f + payload;
}

bool WebSocket::SendText(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!open_) return false;
  if (!WriteAll(fd_, EncodeFrame(1, text))) open_ = false;
  return open_;
}

void WebSocket::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  open_ = false;
}

void WebSocket::ReadUntilClosed() {
  for (;;) {
    std::string head;
    if (!ReadExact(fd_, 2, &head)) break;
    const int opcode = head[0] & 0x0F;
    const bool masked = (head[1] & 0x80) != 0;
    uint64_t len = head[1] & 0x7F;
    std::string ext;
    if (len == 126) {
      if (!ReadExact(fd_, 2, &ext)) break;
      len = (static_cast<uint8_t>(ext[0]) << 8) | static_cast<uint8_t>(ext[1]);
    } else if (len == 127) {
      if (!ReadExact(fd_, 8, &ext)) break;
      len = 0;
      for (char c : ext) len = (len << 8) | static_cast<uint8_t>(c);
    }
    if (len > (16u << 20)) break;
    std::string mask, payload;
    if (masked && !ReadExact(fd_, 4, &mask)) break;
    if (!ReadExact(fd_, static_cast<size_t>(len), &payload)) break;
    if (masked) {
      for (size_t i = 0; i < payload.size(); i++) payload[i] ^= mask[i % 4];
    }
    if (opcode == 8) {
      std::lock_guard<std::mutex> lock(mu_);
      if (open_) WriteAll(fd_, EncodeFrame(8, payload.substr(0, 2)));
      open_ = false;
      break;
    }
    if (opcode == 9) {
      std::lock_guard<std::mutex> lock(mu_);
      if (open_) WriteAll(fd_, EncodeFrame(10, payload));
    }
    // Text from the client (ComfyUI's frontend sends feature flags) is ignored.
  }
  Close();
}

}  // namespace benchfleet::sim::comfyui
