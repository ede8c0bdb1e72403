#include "common/tls/fleet_ca.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/env.h"
#include "common/tls/certificates.h"

namespace benchfleet::tls {
namespace {

// Certificates start this long before `now`: a host whose clock lags by less still accepts them.
constexpr absl::Duration kClockSkewAllowance = absl::Hours(1);

absl::Status ValidateOptions(const FleetCaOptions& options) {
  if (options.out_dir.empty()) return absl::InvalidArgumentError("out_dir is required");
  if (options.server_names.empty()) return absl::InvalidArgumentError("at least one server name is required");
  if (options.ca_days <= 0) return absl::InvalidArgumentError(absl::StrCat("ca_days must be positive, got ", options.ca_days));
  if (options.server_days <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("server_days must be positive, got ", options.server_days));
  }
  if (options.now == absl::Time()) return absl::InvalidArgumentError("now is required");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<FleetCaFiles> InitFleetCa(const FleetCaOptions& options) {
  if (absl::Status s = ValidateOptions(options); !s.ok()) return s;
  FleetCaFiles files{
      .ca_cert = JoinPath(options.out_dir, "ca.pem"),
      .ca_key = JoinPath(options.out_dir, "ca-key.pem"),
      .server_cert = JoinPath(options.out_dir, "server.pem"),
      .server_key = JoinPath(options.out_dir, "server-key.pem"),
  };
  auto refuse = [&] {
    return absl::AlreadyExistsError(absl::StrCat(files.ca_key, " already exists: refusing to overwrite the fleet CA"));
  };
  Env* env = options.env;
  if (env->FileExists(files.ca_key)) return refuse();

  // Everything is made in memory first, so bad options leave the directory untouched.
  const absl::Time not_before = options.now - kClockSkewAllowance;
  CertificateSpec ca_spec{
      .common_name = kFleetCaCommonName,
      .not_before = not_before,
      .not_after = options.now + absl::Hours(24) * options.ca_days,
      .is_ca = true,
      .subject_alt_names = {},
  };
  CertificateSpec server_spec{
      .common_name = options.server_names.front(),
      .not_before = not_before,
      .not_after = std::min(options.now + absl::Hours(24) * options.server_days, ca_spec.not_after),
      .server = true,
      .subject_alt_names = options.server_names,
  };
  absl::StatusOr<std::string> ca_key = NewPrivateKeyPem();
  if (!ca_key.ok()) return ca_key.status();
  absl::StatusOr<std::string> ca_cert = SelfSignedCertificatePem(*ca_key, ca_spec);
  if (!ca_cert.ok()) return ca_cert.status();
  absl::StatusOr<std::string> server_key = NewPrivateKeyPem();
  if (!server_key.ok()) return server_key.status();
  absl::StatusOr<std::string> server_cert = IssueCertificatePem(*server_key, server_spec, *ca_cert, *ca_key);
  if (!server_cert.ok()) return server_cert.status();

  if (absl::Status s = env->CreateDirWithMode(options.out_dir, 0700); !s.ok()) return s;
  // The CA key goes first and exclusively: it claims the directory, so a concurrent init cannot
  // replace this CA's files, nor this one replace another's.
  if (absl::Status s = env->WriteFileWithMode(files.ca_key, *ca_key, 0600, /*exclusive=*/true); !s.ok()) {
    return absl::IsAlreadyExists(s) ? refuse() : s;
  }
  if (absl::Status s = env->WriteFileWithMode(files.ca_cert, *ca_cert, 0644, /*exclusive=*/false); !s.ok()) return s;
  if (absl::Status s = env->WriteFileWithMode(files.server_key, *server_key, 0600, /*exclusive=*/false); !s.ok()) return s;
  if (absl::Status s = env->WriteFileWithMode(files.server_cert, *server_cert, 0644, /*exclusive=*/false); !s.ok()) return s;
  return files;
}

}  // namespace benchfleet::tls
