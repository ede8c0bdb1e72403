#include "agent/uplink/enrollment.h"

#include <chrono>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchfleet/v1/auth.grpc.pb.h"
#include "common/grpc_channel.h"
#include "common/grpc_status.h"
#include "common/proto_time.h"
#include "common/tls/certificates.h"

namespace benchfleet::agent {
namespace {

constexpr char kKeyFile[] = "/agent-key.pem";
constexpr char kCertFile[] = "/agent.pem";
constexpr char kNextKeyFile[] = "/agent-key.next.pem";
constexpr char kNextCertFile[] = "/agent.next.pem";

std::chrono::system_clock::time_point DeadlineIn(absl::Duration timeout) {
  return std::chrono::system_clock::now() + std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout));
}

// What comes back must be ours: the certificate for our key, signed by the CA we trust.
absl::Status CheckIssued(const std::string& key_pem, const v1::EnrollResponse& response, const std::string& ca_pem) {
  if (absl::Status s = tls::CheckKeyMatchesCertificate(key_pem, response.certificate_pem()); !s.ok()) {
    return absl::InternalError(absl::StrCat("the coordinator's certificate is not for this agent's key: ", s.message()));
  }
  if (absl::Status s = tls::VerifyCertificate(response.certificate_pem(), ca_pem, absl::Now()); !s.ok()) {
    return absl::InternalError(absl::StrCat("the certificate does not verify against the fleet CA: ", s.message()));
  }
  return absl::OkStatus();
}

// Makes the call on a channel to each of the coordinator addresses in turn (several: agent.yaml's
// list) until one answers: only UNAVAILABLE moves on, as that one never saw the call (a token is
// used once). *used is the address that answered last.
template <typename Call>
absl::StatusOr<grpc::Status> CallFirstReachable(const std::string& addresses, const ChannelSecurity& security,
                                                const Call& call, std::string* used) {
  grpc::Status status(grpc::StatusCode::UNAVAILABLE, "no coordinator address");
  for (const std::string& address : SplitCoordinatorAddresses(addresses)) {
    auto channel = NewCoordinatorChannel(address, security);
    if (!channel.ok()) return channel.status();
    *used = address;
    status = call(*channel);
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE) break;
  }
  return status;
}

}  // namespace

absl::StatusOr<EnrollmentResult> Enroll(const EnrollmentRequest& request) {
  if (request.ca_cert_pem.empty()) {
    return absl::InvalidArgumentError(
        "enrollment needs the fleet CA certificate to verify the coordinator (--ca-cert or ca_cert:)");
  }
  if (request.token.empty()) return absl::InvalidArgumentError("enrollment needs a token");
  auto key = tls::NewPrivateKeyPem();
  if (!key.ok()) return key.status();
  auto csr = tls::NewCsrPem(*key, absl::StrCat("agent:", request.agent_id));
  if (!csr.ok()) return csr.status();

  ChannelSecurity security;
  security.ca_cert_pem = request.ca_cert_pem;
  v1::EnrollRequest call;
  call.set_token(request.token);
  call.set_agent_id(request.agent_id);
  call.set_csr_pem(*csr);
  v1::EnrollResponse response;
  std::string address;
  const auto status = CallFirstReachable(
      request.coordinator, security,
      [&](const std::shared_ptr<grpc::Channel>& channel) {
        grpc::ClientContext context;
        context.set_deadline(DeadlineIn(request.timeout));
        return v1::Enrollment::NewStub(channel)->Enroll(&context, call, &response);
      },
      &address);
  if (!status.ok()) return status.status();
  if (!status->ok()) {
    return FromGrpcStatus(*status, absl::StrCat("enrollment at ", address));
  }
  if (absl::Status s = CheckIssued(*key, response, request.ca_cert_pem); !s.ok()) return s;

  Env* env = request.env;
  if (absl::Status s = env->CreateDirWithMode(request.tls_dir, 0700); !s.ok()) return s;
  const std::string key_path = request.tls_dir + kKeyFile;
  const std::string cert_path = request.tls_dir + kCertFile;
  // The key first: a certificate without its key would be useless, a key alone is re-enrolled.
  const std::vector<std::tuple<std::string, std::string, mode_t>> files = {
      {key_path, *key, 0600},
      {request.tls_dir + "/ca.pem", request.ca_cert_pem, 0644},
      {cert_path, response.certificate_pem(), 0644}};
  for (const auto& [path, contents, mode] : files) {
    if (absl::Status s = env->WriteFileWithMode(path, contents, mode, /*exclusive=*/false); !s.ok()) return s;
  }
  EnrollmentResult result;
  result.certificate_path = cert_path;
  result.not_after = ToTime(response.not_after());
  return result;
}

absl::StatusOr<EnrollmentResult> RenewCertificate(const RenewalRequest& request) {
  if (request.security.cert_pem.empty() || request.security.ca_cert_pem.empty()) {
    return absl::FailedPreconditionError("renewal needs the fleet CA and the current certificate (enroll first)");
  }
  auto info = tls::ParseCertificate(request.security.cert_pem);
  if (!info.ok()) return info.status();
  auto key = tls::NewPrivateKeyPem();
  if (!key.ok()) return key.status();
  auto csr = tls::NewCsrPem(*key, info->common_name);
  if (!csr.ok()) return csr.status();

  v1::RenewRequest call;
  call.set_csr_pem(*csr);
  v1::EnrollResponse response;
  std::string address;
  const auto status = CallFirstReachable(
      request.coordinator, request.security,
      [&](const std::shared_ptr<grpc::Channel>& channel) {
        grpc::ClientContext context;
        context.set_deadline(DeadlineIn(request.timeout));
        return v1::Enrollment::NewStub(channel)->Renew(&context, call, &response);
      },
      &address);
  if (!status.ok()) return status.status();
  if (!status->ok()) {
    return FromGrpcStatus(*status, absl::StrCat("renewal at ", address));
  }
  if (absl::Status s = CheckIssued(*key, response, request.security.ca_cert_pem); !s.ok()) return s;
  auto issued = tls::ParseCertificate(response.certificate_pem());
  if (!issued.ok()) return issued.status();
  if (issued->common_name != info->common_name) {
    return absl::InternalError(absl::StrCat("the renewed certificate is for '", issued->common_name, "', not '",
                                            info->common_name, "'"));
  }

  // Staged beside the current pair, key first, then put in place (FinishStagedRenewal).
  Env* env = request.env;
  if (absl::Status s = env->WriteFileWithMode(request.tls_dir + kNextKeyFile, *key, 0600, /*exclusive=*/false);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = env->WriteFileWithMode(request.tls_dir + kNextCertFile, response.certificate_pem(), 0644,
                                              /*exclusive=*/false);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = FinishStagedRenewal(env, request.tls_dir); !s.ok()) return s;
  EnrollmentResult result;
  result.certificate_path = request.tls_dir + kCertFile;
  result.not_after = issued->not_after;
  return result;
}

absl::Status FinishStagedRenewal(Env* env, const std::string& tls_dir) {
  const std::string next_key = tls_dir + kNextKeyFile;
  const std::string next_cert = tls_dir + kNextCertFile;
  const bool have_key = env->FileExists(next_key);
  const bool have_cert = env->FileExists(next_cert);
  if (have_key && !have_cert) {
    // The certificate never came: the current pair is still the one in use.
    if (absl::Status s = env->RemoveFile(next_key); !s.ok()) return s;
    return env->SyncDir(tls_dir);
  }
  if (!have_cert) return absl::OkStatus();
  if (have_key) {
    if (absl::Status s = env->RenameFile(next_key, tls_dir + kKeyFile); !s.ok()) return s;
  }
  if (absl::Status s = env->RenameFile(next_cert, tls_dir + kCertFile); !s.ok()) return s;
  return env->SyncDir(tls_dir);
}

bool RenewalDue(absl::Time not_after, absl::Time now, absl::Duration renew_before) {
  return not_after - now < renew_before;
}

}  // namespace benchfleet::agent
