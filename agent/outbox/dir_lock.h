// DirLock: an exclusive advisory lock (flock(2) on DIR/LOCK) that keeps two processes from
// using one outbox at once: each would recover the same segments and delete the other's.
// Goes to the OS directly because Env has no file-locking call yet (LevelDB's Env::LockFile
// would be its place). Owned by the Outbox; released on destruction or process exit.
#ifndef BENCHFLEET_AGENT_OUTBOX_DIR_LOCK_H_
#define BENCHFLEET_AGENT_OUTBOX_DIR_LOCK_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace benchfleet::agent {

class DirLock {
 public:
  // Locks dir (which must exist). FAILED_PRECONDITION, naming the holder's pid, when another
  // process (or another DirLock of this one) holds it.
  static absl::StatusOr<std::unique_ptr<DirLock>> Acquire(const std::string& dir);
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  explicit DirLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_OUTBOX_DIR_LOCK_H_
