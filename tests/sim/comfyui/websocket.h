// The server side of RFC 6455 for comfyui-sim: the handshake's accept key and frame encoding and
// decoding (text, close, ping/pong; no extensions, no fragmentation on send). Owner: tests/sim.
// Thread-safe: pure functions; a WebSocket's Send may be called from any thread.
#ifndef BENCHFLEET_TESTS_SIM_COMFYUI_WEBSOCKET_H_
#define BENCHFLEET_TESTS_SIM_COMFYUI_WEBSOCKET_H_

#include <mutex>
#include <string>

namespace benchfleet::sim::comfyui {

// Returns base64(sha1(key + RFC 6455 GUID)), the Sec-WebSocket-Accept value.
std::string WebSocketAccept(const std::string& key);

// Returns one unmasked server frame (FIN set) with this opcode (1 text, 8 close, 10 pong).
std::string EncodeFrame(int opcode, const std::string& payload);

// One accepted websocket connection.
class WebSocket {
 public:
  explicit WebSocket(int fd) : fd_(fd) {}
  // Sends a text message; false once the peer is gone.
  bool SendText(const std::string& text);
  // Reads client frames until the peer closes (answering pings and the close frame).
  void ReadUntilClosed();
  // Marks the connection dead so later sends do nothing (it was replaced or closed).
  void Close();

 private:
  const int fd_;
  std::mutex mu_;
  bool open_ = true;  // guarded by mu_
};

}  // namespace benchfleet::sim::comfyui

#endif  // BENCHFLEET_TESTS_SIM_COMFYUI_WEBSOCKET_H_
