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

  // Returns the names (not paths) of the entries of dir, sorted.
  virtual absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) = 0;

  // Creates dir and its missing parents. OK when it exists.
  virtual absl::Status CreateDirs(const std::string& dir) = 0;

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
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) override {
    return target_->ListDir(dir);
  }
  absl::Status CreateDirs(const std::string& dir) override { return target_->CreateDirs(dir); }
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
