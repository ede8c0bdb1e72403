#include "agent/uplink/enrollment.h"

#include <sys/stat.h>

#include <chrono>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchfleet/v1/auth.grpc.pb.h"
#include "common/grpc_channel.h"
#include "common/tls/certificates.h"
#include "common/tls/fleet_ca.h"

namespace benchfleet::agent {

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
  auto channel = NewCoordinatorChannel(request.coordinator, security);
  if (!channel.ok()) return channel.status();
  auto stub = v1::Enrollment::NewStub(*channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(absl::ToInt64Milliseconds(request.timeout)));
  v1::EnrollRequest call;
  call.set_token(request.token);
  call.set_agent_id(request.agent_id);
  call.set_csr_pem(*csr);
  v1::EnrollResponse response;
  const grpc::Status status = stub->Enroll(&context, call, &response);
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        absl::StrCat("enrollment at ", request.coordinator, ": ", status.error_message()));
  }
  // What comes back must be ours: the certificate for our key, signed by the CA we trust.
  if (absl::Status s = tls::CheckKeyMatchesCertificate(*key, response.certificate_pem()); !s.ok()) {
    return absl::InternalError(absl::StrCat("the coordinator's certificate is not for this agent's key: ", s.message()));
  }
  if (absl::Status s = tls::VerifyCertificate(response.certificate_pem(), request.ca_cert_pem, absl::Now()); !s.ok()) {
    return absl::InternalError(absl::StrCat("the certificate does not verify against the fleet CA: ", s.message()));
  }

  ::mkdir(request.tls_dir.c_str(), 0700);
  const std::string key_path = request.tls_dir + "/agent-key.pem";
  const std::string cert_path = request.tls_dir + "/agent.pem";
  // The key first: a certificate without its key would be useless, a key alone is re-enrolled.
  const std::vector<std::tuple<std::string, std::string, mode_t>> files = {
      {key_path, *key, 0600},
      {request.tls_dir + "/ca.pem", request.ca_cert_pem, 0644},
      {cert_path, response.certificate_pem(), 0644}};
  for (const auto& [path, contents, mode] : files) {
    if (absl::Status s = tls::WriteSecretFile(path, contents, mode); !s.ok()) return s;
  }
  EnrollmentResult result;
  result.certificate_path = cert_path;
  result.not_after = absl::FromUnixSeconds(response.not_after().seconds());
  return result;
}

}  // namespace benchfleet::agent
