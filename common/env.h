// Env: every touch of the operating system that a component makes (files, time) goes through
// one injected Env, so tests can swap in a failing filesystem or a simulated clock
// (LevelDB's Env pattern). Env::Default() is thread-safe; a WritableFile is not.
#ifndef BENCHFLEET_COMMON_ENV_H_
#define BENCHFLEET_COMMON_ENV_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clock.h"

namespace benchfleet {

// A file opened for appending. Append buffers nothing of its own: data reaches the kernel on
// Append and the disk on Sync.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual absl::Status Append(std::string_view data) = 0;
  // Makes everything appended so far durable (fdatasync).
  virtual absl::Status Sync() = 0;
  virtual absl::Status Close() = 0;
  // Cuts the file to its first `size` bytes (ftruncate): a failed append is taken back without
  // writing anything, so it works on a full disk. UNIMPLEMENTED where a file cannot do it.
  virtual absl::Status Truncate(uint64_t size) {
    (void)size;
    return absl::UnimplementedError("this file cannot be truncated");
  }
};

// An exclusive lock on a file (flock(2)), held until destroyed; the kernel releases it when the
// process ends, however it ends.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

class Env {
 public:
  virtual ~Env() = default;

  // Returns the process-wide Env over the real filesystem and SystemClock().
  static Env* Default();

  virtual Clock& clock() = 0;

  // Opens path for appending, creating it when missing.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) = 0;

  // Reads the whole file. NOT_FOUND when it does not exist.
  virtual absl::StatusOr<std::string> ReadFile(const std::string& path) = 0;

  // Replaces path's content durably: writes a temporary file beside it, syncs it, renames it over
  // path and syncs the directory. A crash leaves either the old or the new content; an error
  // (a full disk) leaves the old content and removes the temporary file.
  virtual absl::Status WriteFileAtomically(const std::string& path, std::string_view content) = 0;

  // Writes path durably with the permission bits `mode`, never wider at any moment: the content
  // goes to a temporary file created 0600 beside it, which is given `mode`, synced and moved into
  // place, then the directory is synced. For secrets (keys: 0600) and what sits beside them.
  // With `exclusive`, ALREADY_EXISTS (and nothing changed) when path exists, so of two writers
  // at once exactly one succeeds; otherwise path is replaced as WriteFileAtomically does.
  virtual absl::Status WriteFileWithMode(const std::string& path, std::string_view content, uint32_t mode,
                                         bool exclusive) = 0;

  // Returns the names (not paths) of the entries of dir, sorted.
  virtual absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) = 0;

  // Creates dir and its missing parents. OK when it exists.
  virtual absl::Status CreateDirs(const std::string& dir) = 0;

  // As CreateDirs, dir itself with the permission bits `mode` (less the umask), e.g. 0700 for a
  // folder of secrets; a dir that exists keeps its mode.
  virtual absl::Status CreateDirWithMode(const std::string& dir, uint32_t mode) = 0;

  // Takes an exclusive lock on path (created 0644 when missing) and writes this process's id in
  // it. FAILED_PRECONDITION "held by pid N" when another holder (this process included) has it.
  virtual absl::StatusOr<std::unique_ptr<FileLock>> LockFile(const std::string& path) = 0;

  virtual absl::Status RemoveFile(const std::string& path) = 0;
  virtual absl::Status RenameFile(const std::string& from, const std::string& to) = 0;
  virtual bool FileExists(const std::string& path) = 0;
  virtual bool IsDirectory(const std::string& path) = 0;

  // Makes the directory's entries (creations, renames, removals) durable.
  virtual absl::Status SyncDir(const std::string& dir) = 0;
};

// An Env that forwards every call to another one; fault-injecting test Envs override a single
// call of it.
class EnvWrapper : public Env {
 public:
  explicit EnvWrapper(Env* target) : target_(target) {}

  Clock& clock() override { return target_->clock(); }
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) override {
    return target_->NewAppendableFile(path);
  }
  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    return target_->ReadFile(path);
  }
  absl::Status WriteFileAtomically(const std::string& path, std::string_view content) override {
    return target_->WriteFileAtomically(path, content);
  }
  absl::Status WriteFileWithMode(const std::string& path, std::string_view content, uint32_t mode,
                                 bool exclusive) override {
    return target_->WriteFileWithMode(path, content, mode, exclusive);
  }
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) override {
    return target_->ListDir(dir);
  }
  absl::Status CreateDirs(const std::string& dir) override { return target_->CreateDirs(dir); }
  absl::Status CreateDirWithMode(const std::string& dir, uint32_t mode) override {
    return target_->CreateDirWithMode(dir, mode);
  }
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    return target_->LockFile(path);
  }
  absl::Status RemoveFile(const std::string& path) override { return target_->RemoveFile(path); }
  absl::Status RenameFile(const std::string& from, const std::string& to) override {
    return target_->RenameFile(from, to);
  }
  bool FileExists(const std::string& path) override { return target_->FileExists(path); }
  bool IsDirectory(const std::string& path) override { return target_->IsDirectory(path); }
  absl::Status SyncDir(const std::string& dir) override { return target_->SyncDir(dir); }

  Env* target() { return target_; }

 private:
  Env* target_;
};

// Returns the directory part of path ("." when it has none).
std::string DirName(const std::string& path);

// Joins two path parts with one '/'.
std::string JoinPath(std::string_view a, std::string_view b);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_ENV_H_
