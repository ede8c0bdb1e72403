// An in-memory Env for the fuzz targets of the file importers: files are a map from path to
// content and directories are the paths' parents, so ReadMeasurementFiles reads fuzzer bytes
// without touching the disk. Only what the readers call is implemented; writes fail. Not
// thread-safe (one per fuzz input).
#ifndef BENCHFLEET_TESTS_FUZZ_MEMORY_ENV_H_
#define BENCHFLEET_TESTS_FUZZ_MEMORY_ENV_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clock.h"
#include "common/env.h"

namespace benchfleet::fuzz {

class MemoryEnv : public Env {
 public:
  void AddFile(const std::string& path, std::string_view content) { files_[path] = std::string(content); }

  Clock& clock() override { return clock_; }
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) override {
    return absl::UnimplementedError("MemoryEnv is read-only");
  }
  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    auto it = files_.find(path);
    if (it == files_.end()) return absl::NotFoundError(path);
    return it->second;
  }
  absl::Status WriteFileAtomically(const std::string& path, std::string_view content) override {
    return absl::UnimplementedError("MemoryEnv is read-only");
  }
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) override {
    std::vector<std::string> names;
    for (const auto& [path, content] : files_) {
      if (DirName(path) == dir) names.push_back(path.substr(dir.size() + 1));
    }
    return names;
  }
  absl::Status WriteFileWithMode(const std::string& path, std::string_view content, uint32_t mode,
                                 bool exclusive) override {
    return absl::UnimplementedError("MemoryEnv is read-only");
  }
  absl::Status CreateDirs(const std::string& dir) override { return absl::UnimplementedError("read-only"); }
  absl::Status CreateDirWithMode(const std::string& dir, uint32_t mode) override {
    return absl::UnimplementedError("read-only");
  }
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    return absl::UnimplementedError("read-only");
  }
  absl::Status RemoveFile(const std::string& path) override { return absl::UnimplementedError("read-only"); }
  absl::Status RenameFile(const std::string& from, const std::string& to) override {
    return absl::UnimplementedError("read-only");
  }
  bool FileExists(const std::string& path) override { return files_.count(path) > 0 || IsDirectory(path); }
  bool IsDirectory(const std::string& path) override {
    for (const auto& [file, content] : files_) {
      if (DirName(file) == path) return true;
    }
    return false;
  }
  absl::Status SyncDir(const std::string& dir) override { return absl::OkStatus(); }

 private:
  SimulatedClock clock_;
  std::map<std::string, std::string> files_;
};

}  // namespace benchfleet::fuzz

#endif  // BENCHFLEET_TESTS_FUZZ_MEMORY_ENV_H_
