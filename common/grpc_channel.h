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
#include "common/coordinator_address.h"

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
