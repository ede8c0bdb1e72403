#include "cli/connection.h"

#include <cstdlib>

namespace benchfleet::cli {
namespace {

ChannelSecurity& Security() {
  static ChannelSecurity* security = new ChannelSecurity();
  return *security;
}

std::string GetEnv(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

void SetClientSecurity(ChannelSecurity security) { Security() = std::move(security); }

const ChannelSecurity& ClientSecurity() { return Security(); }

absl::StatusOr<ChannelSecurity> ResolveClientSecurity(const std::string& ca_cert_flag,
                                                      const std::string& token_file_flag) {
  ChannelSecurity security;
  const std::string ca_path = !ca_cert_flag.empty() ? ca_cert_flag : GetEnv("BENCHFLEET_CA_CERT");
  if (!ca_path.empty()) {
    auto ca = ReadCredentialFile(ca_path, "the fleet CA certificate (--ca-cert / BENCHFLEET_CA_CERT)");
    if (!ca.ok()) return ca.status();
    security.ca_cert_pem = std::move(*ca);
  }
  const std::string token_path = !token_file_flag.empty() ? token_file_flag : GetEnv("BENCHFLEET_TOKEN_FILE");
  if (!token_path.empty()) {
    auto token = ReadCredentialFile(token_path, "the API token file (--token-file / BENCHFLEET_TOKEN_FILE)");
    if (!token.ok()) return token.status();
    security.bearer_token = std::move(*token);
  } else {
    security.bearer_token = GetEnv("BENCHFLEET_TOKEN");
  }
  // A token without TLS would go nowhere (a plaintext coordinator checks none): drop it there.
  if (security.ca_cert_pem.empty()) security.bearer_token.clear();
  return security;
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> CoordinatorChannel(const std::string& address,
                                                                  const grpc::ChannelArguments& args) {
  return NewCoordinatorChannel(address, ClientSecurity(), args);
}

}  // namespace benchfleet::cli
