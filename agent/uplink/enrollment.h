// Enrollment: trades a one-time token for this agent's certificate (auth.proto Enrollment.Enroll,
// coordinator/auth/README.md). Makes a P-256 key and a CSR, calls the coordinator over TLS
// verified with the fleet CA (no client certificate yet), and writes <tls_dir>/agent.pem,
// agent-key.pem (0600) and ca.pem. The only gRPC client of Enrollment; called at start-up.
#ifndef BENCHFLEET_AGENT_UPLINK_ENROLLMENT_H_
#define BENCHFLEET_AGENT_UPLINK_ENROLLMENT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace benchfleet::agent {

struct EnrollmentRequest {
  std::string coordinator;  // HOST:PORT
  std::string ca_cert_pem;  // verifies the coordinator; required
  std::string agent_id;
  std::string token;        // bfe_...
  std::string tls_dir;      // where the files go (created 0700)
  absl::Duration timeout = absl::Seconds(30);
};

struct EnrollmentResult {
  std::string certificate_path;
  absl::Time not_after;
};

// UNAUTHENTICATED / PERMISSION_DENIED as the coordinator says (token unknown, used, expired,
// for another agent), UNAVAILABLE when it cannot be reached or its certificate does not verify.
absl::StatusOr<EnrollmentResult> Enroll(const EnrollmentRequest& request);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_UPLINK_ENROLLMENT_H_
