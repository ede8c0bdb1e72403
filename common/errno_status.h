// ErrnoStatus: an errno as an absl::Status whose code says what kind of failure it was
// (NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED, RESOURCE_EXHAUSTED, else INTERNAL) and whose
// message names the operation and the path. Header-only, so libraries that depend on no other
// benchfleet library (common/tls) can use it. Pure; thread-safe.
#ifndef BENCHFLEET_COMMON_ERRNO_STATUS_H_
#define BENCHFLEET_COMMON_ERRNO_STATUS_H_

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace benchfleet {

inline absl::Status ErrnoStatus(absl::string_view what, const std::string& path, int err) {
  std::string message = absl::StrCat(what, " ", path, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EEXIST:
      return absl::AlreadyExistsError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_ERRNO_STATUS_H_
