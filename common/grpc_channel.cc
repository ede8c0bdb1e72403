#include "common/grpc_channel.h"

#include <grpcpp/create_channel.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"


namespace benchfleet {

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(const std::string& target,
                                                                                 const ChannelSecurity& security) {
  if (security.cert_pem.empty() != security.key_pem.empty()) {
    return absl::InvalidArgumentError("a client certificate needs its key, and a key its certificate");
  }
  if (security.ca_cert_pem.empty()) {
    if (!security.cert_pem.empty() || !security.bearer_token.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "credentials for ", target, " need TLS: give the fleet CA certificate (--ca-cert or BENCHFLEET_CA_CERT)"));
    }
    if (!IsLoopbackTarget(target) && !security.allow_plaintext_off_loopback) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no CA certificate to verify ", target,
          " with: give the fleet CA (--ca-cert or BENCHFLEET_CA_CERT); plaintext is only for loopback addresses"));
    }
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = security.ca_cert_pem;
  ssl.pem_cert_chain = security.cert_pem;
  ssl.pem_private_key = security.key_pem;
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::SslCredentials(ssl);
  if (!security.bearer_token.empty()) {
    credentials = grpc::CompositeChannelCredentials(credentials, grpc::AccessTokenCredentials(security.bearer_token));
  }
  return credentials;
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> NewCoordinatorChannel(const std::string& target,
                                                                     const ChannelSecurity& security,
                                                                     const grpc::ChannelArguments& args) {
  auto credentials = MakeChannelCredentials(target, security);
  if (!credentials.ok()) return credentials.status();
  return grpc::CreateCustomChannel(target, *credentials, args);
}

absl::StatusOr<std::string> ReadCredentialFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    // A token given where its file's name goes: say so without echoing it (logs, terminals).
    if (path.rfind("bft_", 0) == 0 || path.rfind("bfe_", 0) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": the name given looks like a token itself (not shown); give the name of a file that holds it"));
    }
    return absl::NotFoundError(absl::StrCat(what, ": cannot read ", path));
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  std::string text(absl::StripAsciiWhitespace(contents.str()));
  if (text.empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": ", path, " is empty"));
  if (text.rfind("-----BEGIN", 0) == 0) text += '\n';  // PEM ends with its newline
  return text;
}

}  // namespace benchfleet
