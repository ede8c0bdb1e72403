// WebSocketClient: a small RFC 6455 client for the servers the backends measure (ComfyUI's
// /ws?clientId=...): plain ws:// over TCP, the opening handshake with its Sec-WebSocket-Accept
// check, masked client frames, text messages (fragmented or not), ping answered with pong, close.
// Binary messages (ComfyUI's preview images) are skipped. Every wait has a deadline.
// Owner: agent/http. A connection is used from one thread at a time.
#ifndef BENCHFLEET_AGENT_HTTP_WEBSOCKET_CLIENT_H_
#define BENCHFLEET_AGENT_HTTP_WEBSOCKET_CLIENT_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace benchfleet::agent {

class WebSocketConnection {
 public:
  virtual ~WebSocketConnection() = default;

  // Returns the next text message. Errors: DEADLINE_EXCEEDED when none arrived within timeout
  // (the connection stays usable), UNAVAILABLE when the server closed the connection,
  // DATA_LOSS for a frame that breaks the protocol.
  virtual absl::StatusOr<std::string> ReceiveText(absl::Duration timeout) = 0;

  // Sends one text message (masked, as a client must).
  virtual absl::Status SendText(std::string_view text) = 0;

  // Sends a close frame and closes the socket. Idempotent.
  virtual void Close() = 0;
};

// Connects to url ("ws://host:port/path?query"; "http://" is taken as "ws://") and performs the
// opening handshake within timeout. Errors: INVALID_ARGUMENT for a URL it cannot use (wss:// among
// them), UNAVAILABLE when the connection is refused or the server does not upgrade (its status
// line in the message), DEADLINE_EXCEEDED, DATA_LOSS for a wrong Sec-WebSocket-Accept.
absl::StatusOr<std::unique_ptr<WebSocketConnection>> ConnectWebSocket(const std::string& url,
                                                                      absl::Duration timeout);

// Returns the 20-byte SHA-1 digest of data (the handshake's only use of SHA-1).
std::string Sha1(std::string_view data);

// Returns data in base64 with padding (RFC 4648).
std::string Base64Encode(std::string_view data);

// Returns the Sec-WebSocket-Accept value a server must answer to key.
std::string WebSocketAcceptFor(std::string_view key);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_HTTP_WEBSOCKET_CLIENT_H_
