#include "coordinator/auth/auth_admin.h"

#include <openssl/rand.h>

#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/hashing.h"
#include "common/proto_time.h"
#include "common/tls/certificates.h"
#include "coordinator/auth/authorizer.h"

namespace benchfleet::coordinator {
namespace {

constexpr uint32_t kMaxEnrollmentUses = 100000;
constexpr uint64_t kDefaultEnrollmentTtlSeconds = 86400;
constexpr uint64_t kMaxEnrollmentTtlSeconds = 86400ull * 365;
constexpr size_t kMaxCsrBytes = 16 * 1024;

}  // namespace

std::string NewSecretToken(std::string_view prefix) {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    // No entropy is not something to go on without: a guessable token is worse than none.
    std::abort();
  }
  return absl::StrCat(std::string(prefix), absl::WebSafeBase64Escape(absl::string_view(reinterpret_cast<const char*>(bytes),
                                                                          sizeof(bytes))));
}

bool ValidAgentId(std::string_view agent_id) {
  if (agent_id.empty() || agent_id.size() > 58) return false;  // "agent:" + id fits a CN (64)
  for (char c : agent_id) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != ':' && c != '-') {
      return false;
    }
  }
  return true;
}

AuthAdmin::AuthAdmin(AuthStore* store, Clock* clock, CaKeyPair ca)
    : store_(store), clock_(clock), ca_(std::move(ca)) {}

absl::StatusOr<v1::CreateEnrollmentTokenResponse> AuthAdmin::CreateEnrollmentToken(
    const v1::CreateEnrollmentTokenRequest& request, const std::string& created_by) {
  if (!request.agent_id().empty() && !ValidAgentId(request.agent_id())) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", request.agent_id(), "' is not an agent id (1 to 58 of A-Z a-z 0-9 . _ : -)"));
  }
  const uint32_t uses = request.uses() == 0 ? 1 : request.uses();
  if (uses > kMaxEnrollmentUses) {
    return absl::InvalidArgumentError(absl::StrCat("uses must be at most ", kMaxEnrollmentUses));
  }
  if (!request.agent_id().empty() && uses != 1) {
    return absl::InvalidArgumentError("a token bound to one agent id has exactly one use");
  }
  const uint64_t ttl = request.ttl_seconds() == 0 ? kDefaultEnrollmentTtlSeconds : request.ttl_seconds();
  if (ttl > kMaxEnrollmentTtlSeconds) return absl::InvalidArgumentError("the lifetime is at most 365 days");

  const std::string token = NewSecretToken(kEnrollmentTokenPrefix);
  EnrollmentTokenRow row;
  row.token_sha256 = Sha256Hex(token);
  row.agent_id = request.agent_id();
  row.uses = static_cast<int>(uses);
  row.created_by = created_by;
  row.created = clock_->Now();
  row.expires = row.created + absl::Seconds(static_cast<int64_t>(ttl));
  if (absl::Status s = store_->CreateEnrollmentToken(row); !s.ok()) return s;
  v1::CreateEnrollmentTokenResponse response;
  response.set_token(token);
  SetTimestamp(row.expires, response.mutable_expire_time());
  return response;
}

absl::StatusOr<AuthAdmin::Signed> AuthAdmin::Sign(const std::string& agent_id, const std::string& csr_pem) {
  if (!ValidAgentId(agent_id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", agent_id, "' is not an agent id (1 to 58 of A-Z a-z 0-9 . _ : -)"));
  }
  if (csr_pem.size() > kMaxCsrBytes) return absl::InvalidArgumentError("the CSR is too large");
  if (ca_.key_pem.empty()) {
    return absl::FailedPreconditionError(
        "this coordinator has no CA key to sign with (start it with --ca-key)");
  }
  auto csr = tls::ParseCsr(csr_pem);
  if (!csr.ok()) return absl::InvalidArgumentError(absl::StrCat("bad CSR: ", csr.status().message()));

  const absl::Time now = clock_->Now();
  tls::CertificateSpec spec;
  spec.common_name = AgentCommonName(agent_id);
  // A minute back, so that a host whose clock is a little behind accepts it at once.
  spec.not_before = now - absl::Minutes(1);
  spec.not_after = now + kAgentCertificateLifetime;
  spec.client = true;
  auto certificate = tls::SignCsrPem(csr_pem, spec, ca_.cert_pem, ca_.key_pem);
  if (!certificate.ok()) return certificate.status();
  auto info = tls::ParseCertificate(*certificate);
  if (!info.ok()) return info.status();

  Signed out;
  out.issued.fingerprint_sha256 = info->sha256_fingerprint_hex;
  out.issued.agent_id = agent_id;
  out.issued.serial_hex = info->serial_hex;
  out.issued.issued = now;
  out.issued.not_after = info->not_after;
  out.response.set_certificate_pem(*certificate);
  out.response.set_ca_certificate_pem(ca_.cert_pem);
  SetTimestamp(info->not_after, out.response.mutable_not_after());
  return out;
}

absl::StatusOr<v1::EnrollResponse> AuthAdmin::Enroll(const v1::EnrollRequest& request) {
  if (request.token().empty()) return absl::UnauthenticatedError("Enroll needs the token `benchfleet agents enroll` printed");
  auto signed_certificate = Sign(request.agent_id(), request.csr_pem());
  if (!signed_certificate.ok()) return signed_certificate.status();
  if (absl::Status s = store_->RedeemEnrollmentToken(Sha256Hex(request.token()), signed_certificate->issued.issued,
                                                     signed_certificate->issued);
      !s.ok()) {
    return s;
  }
  return std::move(signed_certificate->response);
}

absl::StatusOr<v1::EnrollResponse> AuthAdmin::Renew(const std::string& agent_id, const std::string& presented_sha256,
                                                    const std::string& csr_pem) {
  auto signed_certificate = Sign(agent_id, csr_pem);
  if (!signed_certificate.ok()) return signed_certificate.status();
  if (absl::Status s = store_->RecordRenewedCertificate(presented_sha256, signed_certificate->issued); !s.ok()) {
    return s;
  }
  return std::move(signed_certificate->response);
}

absl::StatusOr<std::string> AuthAdmin::CreateApiToken(const v1::CreateApiTokenRequest& request,
                                                      const std::string& created_by) {
  if (request.name().empty() || request.name().size() > 128) {
    return absl::InvalidArgumentError("a token needs a name of 1 to 128 characters");
  }
  if (request.role() != v1::ROLE_VIEWER && request.role() != v1::ROLE_OPERATOR) {
    return absl::InvalidArgumentError("a token's role is viewer or operator");
  }
  const std::string token = NewSecretToken(kApiTokenPrefix);
  if (absl::Status s = store_->CreateApiToken(ApiToken{request.name(), request.role()}, Sha256Hex(token),
                                              created_by, clock_->Now());
      !s.ok()) {
    return s;
  }
  return token;
}

}  // namespace benchfleet::coordinator
