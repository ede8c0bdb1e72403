// AuthAdmin: enrollment (a token for a certificate), API tokens and agent revocation, as the
// Admin and Enrollment services call them after the Authorizer let the caller in. Tokens are
// random (256 bits), shown once, stored as their SHA-256. Thread-safe.
#ifndef BENCHFLEET_COORDINATOR_AUTH_AUTH_ADMIN_H_
#define BENCHFLEET_COORDINATOR_AUTH_AUTH_ADMIN_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "benchfleet/v1/auth.pb.h"
#include "common/clock.h"
#include "coordinator/store/auth_store.h"

namespace benchfleet::coordinator {

// Prefixes of the two kinds of token, so a leaked one says what it is.
inline constexpr char kEnrollmentTokenPrefix[] = "bfe_";
inline constexpr char kApiTokenPrefix[] = "bft_";
// How long an agent certificate is valid.
inline constexpr absl::Duration kAgentCertificateLifetime = absl::Hours(24 * 90);

// prefix + 43 base64url characters (256 random bits from OpenSSL's RAND_bytes).
std::string NewSecretToken(std::string_view prefix);

struct CaKeyPair {
  std::string cert_pem;
  std::string key_pem;  // empty: this coordinator cannot sign (Enroll answers FAILED_PRECONDITION)
};

class AuthAdmin {
 public:
  // `store` and `clock` must outlive this.
  AuthAdmin(AuthStore* store, Clock* clock, CaKeyPair ca);

  absl::StatusOr<v1::CreateEnrollmentTokenResponse> CreateEnrollmentToken(
      const v1::CreateEnrollmentTokenRequest& request, const std::string& created_by);

  // Checks the request, signs the CSR with CN "agent:<agent_id>" and redeems the token, in that
  // order: a token is used only when a certificate comes out of it.
  absl::StatusOr<v1::EnrollResponse> Enroll(const v1::EnrollRequest& request);

  // Signs a new certificate for `agent_id` from `csr_pem` and records it, if the certificate the
  // agent presented (`presented_sha256`, which the Authorizer accepted) is still not revoked.
  absl::StatusOr<v1::EnrollResponse> Renew(const std::string& agent_id, const std::string& presented_sha256,
                                           const std::string& csr_pem);

  absl::StatusOr<std::string> CreateApiToken(const v1::CreateApiTokenRequest& request,
                                             const std::string& created_by);

 private:
  // A certificate for `agent_id` (CN "agent:<id>", client use, kAgentCertificateLifetime) from
  // `csr_pem`, checked and signed, with what the store keeps of it.
  struct Signed {
    v1::EnrollResponse response;
    IssuedCertificate issued;
  };
  absl::StatusOr<Signed> Sign(const std::string& agent_id, const std::string& csr_pem);

  AuthStore* const store_;
  Clock* const clock_;
  const CaKeyPair ca_;
};

// An agent id enrollment accepts: 1 to 58 characters of [A-Za-z0-9._:-].
bool ValidAgentId(std::string_view agent_id);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_AUTH_AUTH_ADMIN_H_
