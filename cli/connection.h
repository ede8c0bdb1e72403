// How the `benchfleet` command reaches a coordinator: Main sets the security once from
// --ca-cert / $BENCHFLEET_CA_CERT and --token-file / $BENCHFLEET_TOKEN_FILE / $BENCHFLEET_TOKEN
// (never a token on the command line), before any client is made; every client's channel comes
// from CoordinatorChannel. Set once, then read-only: thread-safe after that.
#ifndef BENCHFLEET_CLI_CONNECTION_H_
#define BENCHFLEET_CLI_CONNECTION_H_

#include <grpcpp/channel.h>
#include <grpcpp/support/status.h>
#include <grpcpp/support/channel_arguments.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/grpc_channel.h"

namespace benchfleet::cli {

void SetClientSecurity(ChannelSecurity security);
const ChannelSecurity& ClientSecurity();

// Resolves the security from the flags (empty: not given) and the environment, reading the files.
absl::StatusOr<ChannelSecurity> ResolveClientSecurity(const std::string& ca_cert_flag,
                                                      const std::string& token_file_flag);

// A channel to `address` with the security set; INVALID_ARGUMENT when it cannot be used for
// that address (plaintext off loopback, a token without TLS).
absl::StatusOr<std::shared_ptr<grpc::Channel>> CoordinatorChannel(const std::string& address,
                                                                  const grpc::ChannelArguments& args);

// The error of a failed call `what` ("ListRuns") to the coordinator at `address`, with the code
// the coordinator answered: "WHAT on coordinator ADDRESS: its message", or, when it could not be
// reached, "cannot reach the coordinator at ADDRESS (...); is it running? (--coordinator or
// BENCHFLEET_COORDINATOR)". Every client of the command reads its calls' failures this way.
absl::Status CoordinatorCallError(const grpc::Status& status, const std::string& address, std::string_view what);

// Notes the command line's secrets: every argument that looks like a benchfleet token (bft_...,
// bfe_...) and the value given to an option whose name says token, password or secret (other
// than --token-file), as "--token X" or "--token=X". Called once by Main, before parsing.
void NoteCommandLineSecrets(int argc, const char* const* argv);

// Returns text with each noted secret replaced by "<hidden>": every error the command prints
// goes through it, so a token typed on the command line by mistake is never echoed back.
std::string HideSecrets(std::string_view text);

}  // namespace benchfleet::cli

#endif  // BENCHFLEET_CLI_CONNECTION_H_
