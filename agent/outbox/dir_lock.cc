#include "agent/outbox/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/env.h"

namespace benchfleet::agent {

absl::StatusOr<std::unique_ptr<DirLock>> DirLock::Acquire(const std::string& dir) {
  const std::string path = JoinPath(dir, "LOCK");
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat("open ", path, ": ", std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char holder[32] = {};
    const ssize_t n = ::pread(fd, holder, sizeof(holder) - 1, 0);
    ::close(fd);
    if (err != EWOULDBLOCK) return absl::InternalError(absl::StrCat("flock ", path, ": ", std::strerror(err)));
    const std::string pid = n > 0 ? std::string(absl::StripAsciiWhitespace(holder)) : "?";
    return absl::FailedPreconditionError(
        absl::StrCat("outbox ", dir, " is in use by another benchfleet-agent (pid ", pid,
                     "); one agent process per state directory: stop it or pass another --state-dir"));
  }
  // Who holds it, for the message above; informative only.
  const std::string pid = absl::StrCat(::getpid(), "\n");
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, pid.data(), pid.size(), 0);
  return std::unique_ptr<DirLock>(new DirLock(fd));
}

DirLock::~DirLock() { ::close(fd_); }  // closing releases the flock

}  // namespace benchfleet::agent
