#include "common/tls/fleet_ca.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/errno_status.h"
#include "common/tls/certificates.h"

namespace benchfleet::tls {
namespace {

// Certificates start this long before `now`: a host whose clock lags by less still accepts them.
constexpr absl::Duration kClockSkewAllowance = absl::Hours(1);

std::string DirName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  return absl::EndsWith(dir, "/") ? dir + name : absl::StrCat(dir, "/", name);
}

absl::Status SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open", dir, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus("fsync", dir, err);
  return absl::OkStatus();
}

// Creates dir with `mode`, and its missing parents with 0755 (less the umask). OK when it exists.
absl::Status CreateDir(const std::string& dir, mode_t mode) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(dir, " exists and is not a directory"));
  }
  std::string parent = DirName(dir);
  if (parent != dir) {
    if (absl::Status s = CreateDir(parent, 0755); !s.ok()) return s;
  }
  if (::mkdir(dir.c_str(), mode) != 0 && errno != EEXIST) return ErrnoStatus("mkdir", dir, errno);
  return absl::OkStatus();
}

// Writes contents to a new temporary file beside path with `mode`, synced and closed, and returns
// its name. The caller moves it into place or removes it.
absl::StatusOr<std::string> WriteTemporary(const std::string& path, const std::string& contents, mode_t mode) {
  std::string tmp = path + ".tmp-XXXXXX";
  // mkostemp creates the file 0600: no wider than a secret's final mode at any moment.
  int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("create a temporary file for", path, errno);
  auto fail = [&](absl::string_view what, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return ErrnoStatus(what, tmp, err);
  };
  if (::fchmod(fd, mode) != 0) return fail("fchmod", errno);
  const char* data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("write", errno);
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return fail("fsync", errno);
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoStatus("close", tmp, err);
  }
  return tmp;
}

// Like WriteSecretFile, but ALREADY_EXISTS (and nothing changed) when path exists: link(2) is
// atomic, so of two concurrent writers exactly one succeeds.
absl::Status WriteNewSecretFile(const std::string& path, const std::string& contents, mode_t mode) {
  absl::StatusOr<std::string> tmp = WriteTemporary(path, contents, mode);
  if (!tmp.ok()) return tmp.status();
  int rc = ::link(tmp->c_str(), path.c_str());
  int err = errno;
  ::unlink(tmp->c_str());
  if (rc != 0) return ErrnoStatus("link", path, err);
  return SyncDir(DirName(path));
}

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

absl::Status WriteSecretFile(const std::string& path, const std::string& contents, mode_t mode) {
  absl::StatusOr<std::string> tmp = WriteTemporary(path, contents, mode);
  if (!tmp.ok()) return tmp.status();
  if (::rename(tmp->c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp->c_str());
    return ErrnoStatus("rename to", path, err);
  }
  return SyncDir(DirName(path));
}

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
  if (struct stat st; ::lstat(files.ca_key.c_str(), &st) == 0) return refuse();

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

  if (absl::Status s = CreateDir(options.out_dir, 0700); !s.ok()) return s;
  // The CA key goes first and exclusively: it claims the directory, so a concurrent init cannot
  // replace this CA's files, nor this one replace another's.
  if (absl::Status s = WriteNewSecretFile(files.ca_key, *ca_key, 0600); !s.ok()) {
    return absl::IsAlreadyExists(s) ? refuse() : s;
  }
  if (absl::Status s = WriteSecretFile(files.ca_cert, *ca_cert, 0644); !s.ok()) return s;
  if (absl::Status s = WriteSecretFile(files.server_key, *server_key, 0600); !s.ok()) return s;
  if (absl::Status s = WriteSecretFile(files.server_cert, *server_cert, 0644); !s.ok()) return s;
  return files;
}

}  // namespace benchfleet::tls
