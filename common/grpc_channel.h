// How every client (agent, CLI) reaches a coordinator: TLS verified against the fleet CA, with
// an agent's client certificate or a person's API token; plaintext only to a loopback address
// unless allowed explicitly (coordinator/auth/README.md). Thread-safe, no state.
#ifndef BENCHFLEET_COMMON_GRPC_CHANNEL_H_
#define BENCHFLEET_COMMON_GRPC_CHANNEL_H_

#include <grpcpp/channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace benchfleet {

struct ChannelSecurity {
  // The fleet CA (PEM) that verifies the coordinator; empty: plaintext.
  std::string ca_cert_pem;
  // An agent's certificate and key (PEM); both or neither.
  std::string cert_pem;
  std::string key_pem;
  // A person's or tool's API token (bft_...), sent as "authorization: Bearer ..." over TLS only.
  std::string bearer_token;
  // Plaintext to a non-loopback address (the coordinator's --insecure counterpart).
  bool allow_plaintext_off_loopback = false;
};

// Returns the coordinator addresses in `addresses`: one gRPC target ("host:port", "dns:///name:port",
// "ipv4:10.0.0.1:7443,10.0.0.2:7443", ...) or several separated by commas ("a:7443,b:7443", what an
// agent fails over between, in order). A target with an "ipv4:" or "ipv6:" scheme is one target even
// with commas: gRPC picks among its addresses itself. Surrounding spaces and empty entries go.
std::vector<std::string> SplitCoordinatorAddresses(std::string_view addresses);

// True when every address `target` names is a literal loopback address (an IPv4 address in
// 127.0.0.0/8, parsed as an IP; ::1 bare or in brackets) or the name localhost, each with or
// without a port, under no scheme, "dns:" / "dns:///", "ipv4:" or "ipv6:", or a comma-separated
// list of such addresses (SplitCoordinatorAddresses). Any other name is not, even "127.x.example":
// what it resolves to is not ours to know. A "dns://SERVER/" authority is not either.
bool IsLoopbackTarget(const std::string& target);

// The credentials for `target`. INVALID_ARGUMENT for plaintext to a non-loopback target without
// allow_plaintext_off_loopback, for a token without TLS, or a certificate without its key.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(const std::string& target,
                                                                                 const ChannelSecurity& security);

// CreateCustomChannel with MakeChannelCredentials.
absl::StatusOr<std::shared_ptr<grpc::Channel>> NewCoordinatorChannel(const std::string& target,
                                                                     const ChannelSecurity& security,
                                                                     const grpc::ChannelArguments& args = {});

// Reads a PEM or token file: NOT_FOUND / INVALID_ARGUMENT naming `what` and the path (but never a
// "path" that is a token, bft_... or bfe_..., given by mistake: INVALID_ARGUMENT without it). A
// token's surrounding whitespace is stripped.
absl::StatusOr<std::string> ReadCredentialFile(const std::string& path, const std::string& what);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_GRPC_CHANNEL_H_
