// AuthStore: the tables of coordinator/auth/README.md (enrollment tokens, issued agent
// certificates, API tokens, the audit log). Secrets are never stored: tokens are kept as their
// SHA-256. PgAuthStore is the PostgreSQL one; every replica on the database sees the same state,
// and RevokeAgent sends NOTIFY benchfleet_auth (payload: the agent id) so each closes the agent's
// open stream at once. Thread-safe.
#ifndef BENCHFLEET_COORDINATOR_STORE_AUTH_STORE_H_
#define BENCHFLEET_COORDINATOR_STORE_AUTH_STORE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "benchfleet/v1/auth.pb.h"

namespace benchfleet::coordinator {

// The NOTIFY channel of revocations.
inline constexpr char kAuthChannel[] = "benchfleet_auth";

struct EnrollmentTokenRow {
  std::string token_sha256;
  std::string agent_id;  // "" when each use binds the agent id presenting it
  int uses = 1;
  std::string created_by;
  absl::Time created;
  absl::Time expires;
};

struct IssuedCertificate {
  std::string fingerprint_sha256;  // hex of the DER's SHA-256
  std::string agent_id;
  std::string serial_hex;
  absl::Time issued;
  absl::Time not_after;
};

struct ApiToken {
  std::string name;
  v1::Role role = v1::ROLE_UNSPECIFIED;
};

struct AuditRow {
  absl::Time at;
  std::string actor;
  v1::Role role = v1::ROLE_UNSPECIFIED;
  std::string action;
  std::string target;
  std::string detail_json = "{}";
};

class AuthStore {
 public:
  virtual ~AuthStore() = default;

  virtual absl::Status CreateEnrollmentToken(const EnrollmentTokenRow& token) = 0;

  // In one transaction: takes one use of the token for `certificate.agent_id` and records the
  // certificate. UNAUTHENTICATED when the token is unknown, used up, expired at `now` or revoked;
  // PERMISSION_DENIED when it is bound to another agent id. Nothing changes on an error.
  virtual absl::Status RedeemEnrollmentToken(const std::string& token_sha256, absl::Time now,
                                             const IssuedCertificate& certificate) = 0;

  // In one transaction: checks that the certificate `presented_sha256` of `certificate.agent_id`
  // is still accepted (locking it, so that a RevokeAgent at the same moment revokes the new one
  // too) and records `certificate`, its renewal. UNAUTHENTICATED when it was revoked meanwhile.
  virtual absl::Status RecordRenewedCertificate(const std::string& presented_sha256,
                                                const IssuedCertificate& certificate) = 0;
  // True when the certificate was issued to `agent_id` by enrollment and is not revoked.
  virtual absl::StatusOr<bool> CertificateAccepted(const std::string& fingerprint_sha256,
                                                   const std::string& agent_id) = 0;

  // Revokes every certificate of the agent and every enrollment token bound to it, then
  // NOTIFYs kAuthChannel. Returns the number of certificates revoked (0 for an unknown agent).
  virtual absl::StatusOr<int> RevokeAgent(const std::string& agent_id, absl::Time now) = 0;

  // ALREADY_EXISTS when a token of that name exists (revoked or not).
  virtual absl::Status CreateApiToken(const ApiToken& token, const std::string& token_sha256,
                                      const std::string& created_by, absl::Time now) = 0;
  // Creates or replaces (and un-revokes) the named token: how --operator-token-file seeds one.
  virtual absl::Status PutApiToken(const ApiToken& token, const std::string& token_sha256,
                                   const std::string& created_by, absl::Time now) = 0;
  // The live (not revoked) token with that hash, if any.
  virtual absl::StatusOr<std::optional<ApiToken>> FindApiToken(const std::string& token_sha256) = 0;
  // NOT_FOUND when no live token has that name.
  virtual absl::Status RevokeApiToken(const std::string& name, absl::Time now) = 0;

  virtual absl::Status Audit(const AuditRow& row) = 0;
  // Newest first.
  virtual absl::StatusOr<std::vector<AuditRow>> ListAudit(int limit) = 0;
};

std::unique_ptr<AuthStore> NewPgAuthStore(const std::string& database_url);

// "viewer" / "operator" as the tables store them; "" for ROLE_UNSPECIFIED.
std::string RoleText(v1::Role role);
v1::Role ParseRole(const std::string& text);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_AUTH_STORE_H_
