// The fleet CA on disk: what `benchfleet-coordinator ca init` writes (coordinator/auth/README.md),
// through the Env's mode-keeping writes (Env::WriteFileWithMode). Owned by common/; thread-safe,
// and two processes initialising one directory at once cannot both create a CA there.
#ifndef BENCHFLEET_COMMON_TLS_FLEET_CA_H_
#define BENCHFLEET_COMMON_TLS_FLEET_CA_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/env.h"

namespace benchfleet::tls {

// The CA certificate's subject CN.
inline constexpr char kFleetCaCommonName[] = "benchfleet fleet CA";

// Paths of the files InitFleetCa wrote.
struct FleetCaFiles {
  std::string ca_cert;      // <out_dir>/ca.pem, 0644
  std::string ca_key;       // <out_dir>/ca-key.pem, 0600
  std::string server_cert;  // <out_dir>/server.pem, 0644
  std::string server_key;   // <out_dir>/server-key.pem, 0600
};

struct FleetCaOptions {
  std::string out_dir;
  // DNS names or IP literals; the first is the server certificate's CN, all are its SANs.
  std::vector<std::string> server_names = {"localhost", "127.0.0.1"};
  int ca_days = 3650;
  int server_days = 825;  // capped at the CA's own expiry
  // Required (the caller's clock; a default absl::Time is refused). Both certificates are valid
  // from one hour before it, so hosts whose clocks lag a little accept them at once.
  absl::Time now;
  // The files: folders made and keys written through it.
  Env* env = Env::Default();
};

// Writes ca.pem, ca-key.pem (0600), server.pem and server-key.pem (0600) into out_dir, creating
// it (0700) and its parents when missing: a new P-256 fleet CA (CN kFleetCaCommonName, CA:TRUE)
// and a P-256 server certificate (serverAuth) it issued. ALREADY_EXISTS when out_dir already holds
// a ca-key.pem: a CA is never overwritten. INVALID_ARGUMENT on bad options, nothing written then.
absl::StatusOr<FleetCaFiles> InitFleetCa(const FleetCaOptions& options);

}  // namespace benchfleet::tls

#endif  // BENCHFLEET_COMMON_TLS_FLEET_CA_H_
