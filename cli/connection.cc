#include "cli/connection.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/string_views.h"

namespace benchfleet::cli {
namespace {

std::vector<std::string>& Secrets() {
  static std::vector<std::string>* secrets = new std::vector<std::string>();
  return *secrets;
}

bool LooksLikeToken(std::string_view arg) { return arg.starts_with("bft_") || arg.starts_with("bfe_"); }

// An option whose value is a secret: --token, --api-token, --password, --client-secret, ...
bool IsSecretOption(std::string_view name) {
  if (!name.starts_with("-") || name == "--token-file") return false;
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("token") != std::string::npos || lower.find("password") != std::string::npos ||
         lower.find("secret") != std::string::npos;
}

ChannelSecurity& Security() {
  static ChannelSecurity* security = new ChannelSecurity();
  return *security;
}

std::string GetEnv(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

absl::Status CoordinatorCallError(const grpc::Status& status, const std::string& address, std::string_view what) {
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    return absl::UnavailableError(absl::StrCat("cannot reach the coordinator at ", address, " (", status.error_message(),
                                               "); is it running? (--coordinator or BENCHFLEET_COORDINATOR)"));
  }
  return FromGrpcStatus(status, absl::StrCat(ToAbsl(what), " on coordinator ", address));
}

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

void NoteCommandLineSecrets(int argc, const char* const* argv) {
  std::vector<std::string>& secrets = Secrets();
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (const size_t eq = arg.find('='); eq != std::string_view::npos && IsSecretOption(arg.substr(0, eq))) {
      if (eq + 1 < arg.size()) secrets.emplace_back(arg.substr(eq + 1));
    } else if (IsSecretOption(arg) && i + 1 < argc) {
      secrets.emplace_back(argv[i + 1]);
    }
    if (LooksLikeToken(arg)) secrets.emplace_back(arg);
    // "--token-file=bft_..." or a token glued to any option: hide the token part.
    if (const size_t at = std::min(arg.find("bft_"), arg.find("bfe_")); at != std::string_view::npos && at > 0) {
      secrets.emplace_back(arg.substr(at));
    }
  }
  // Longest first, so that a secret containing another is hidden whole.
  std::sort(secrets.begin(), secrets.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string HideSecrets(std::string_view text) {
  std::string out(text);
  for (const std::string& secret : Secrets()) {
    if (secret.empty()) continue;
    for (size_t at = out.find(secret); at != std::string::npos; at = out.find(secret, at + 8)) {
      out.replace(at, secret.size(), "<hidden>");
    }
  }
  return out;
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> CoordinatorChannel(const std::string& address,
                                                                  const grpc::ChannelArguments& args) {
  return NewCoordinatorChannel(address, ClientSecurity(), args);
}

}  // namespace benchfleet::cli
