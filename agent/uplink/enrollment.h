// Enrollment: trades a one-time token for this agent's certificate (auth.proto Enrollment.Enroll,
// coordinator/auth/README.md). Makes a P-256 key and a CSR, calls the coordinator over TLS
// verified with the fleet CA (no client certificate yet), and writes <tls_dir>/agent.pem,
// agent-key.pem (0600) and ca.pem. Renewal (Enrollment.Renew) does the same with the current
// certificate as the credential, before it expires. The only gRPC client of Enrollment.
#ifndef BENCHFLEET_AGENT_UPLINK_ENROLLMENT_H_
#define BENCHFLEET_AGENT_UPLINK_ENROLLMENT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/env.h"
#include "common/grpc_channel.h"

namespace benchfleet::agent {

struct EnrollmentRequest {
  std::string coordinator;  // HOST:PORT, or several comma-separated: tried in order while UNAVAILABLE
  std::string ca_cert_pem;  // verifies the coordinator; required
  std::string agent_id;
  std::string token;        // bfe_...
  std::string tls_dir;      // where the files go (created 0700)
  absl::Duration timeout = absl::Seconds(30);
  Env* env = Env::Default();  // the files
};

struct EnrollmentResult {
  std::string certificate_path;
  absl::Time not_after;
};

// UNAUTHENTICATED / PERMISSION_DENIED as the coordinator says (token unknown, used, expired,
// for another agent), UNAVAILABLE when it cannot be reached or its certificate does not verify.
absl::StatusOr<EnrollmentResult> Enroll(const EnrollmentRequest& request);

struct RenewalRequest {
  std::string coordinator;    // HOST:PORT, or several comma-separated: tried in order while UNAVAILABLE
  ChannelSecurity security;   // the fleet CA and the current certificate and key (mutual TLS)
  std::string tls_dir;        // where the new key and certificate go
  absl::Duration timeout = absl::Seconds(30);
  Env* env = Env::Default();  // the files
};

// Gets a new certificate for a new key, presenting the current one, and puts both in place of
// the current ones. The pair is written beside them first (agent-key.next.pem, agent.next.pem),
// then renamed key first: FinishStagedRenewal completes a renewal a crash cut short, so the
// key and the certificate on disk always match. UNAUTHENTICATED when the coordinator no longer
// accepts the current certificate (revoked, expired: enroll again), UNAVAILABLE when it cannot
// be reached.
absl::StatusOr<EnrollmentResult> RenewCertificate(const RenewalRequest& request);

// Completes or drops a renewal staged in tls_dir: both next files there (a crash before the
// renames) -> both renamed over the current ones, key first; only the next certificate (a crash
// between the renames) -> renamed; only the next key (a crash before the certificate came) ->
// removed. Nothing staged: OK, nothing done. Called before the certificate is read.
absl::Status FinishStagedRenewal(Env* env, const std::string& tls_dir);

// True when a certificate valid from not_before to not_after should be renewed at `now`: when
// less than `renew_before` of it is left, or it is no longer valid.
bool RenewalDue(absl::Time not_after, absl::Time now, absl::Duration renew_before);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_UPLINK_ENROLLMENT_H_
