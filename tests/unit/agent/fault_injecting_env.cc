#include "tests/unit/agent/fault_injecting_env.h"

namespace benchfleet::agent::testing {
namespace {

class FaultyFile : public WritableFile {
 public:
  FaultyFile(FaultInjectingEnv* env, std::string path, std::unique_ptr<WritableFile> file)
      : env_(env), path_(std::move(path)), file_(std::move(file)) {}

  absl::Status Append(std::string_view data) override {
    if (auto fault = env_->Take(FaultOp::kAppend, path_)) {
      if (fault->partial_bytes > 0) {
        file_->Append(data.substr(0, std::min(fault->partial_bytes, data.size()))).IgnoreError();
      }
      return fault->status;
    }
    return file_->Append(data);
  }
  absl::Status Sync() override {
    env_->CountSync(path_);
    if (auto fault = env_->Take(FaultOp::kSync, path_)) return fault->status;
    return file_->Sync();
  }
  absl::Status Truncate(uint64_t size) override {
    if (auto fault = env_->Take(FaultOp::kTruncate, path_)) return fault->status;
    return file_->Truncate(size);
  }
  absl::Status Close() override { return file_->Close(); }

 private:
  FaultInjectingEnv* env_;
  std::string path_;
  std::unique_ptr<WritableFile> file_;
};

}  // namespace

void FaultInjectingEnv::Inject(FaultOp op, Fault fault) {
  std::lock_guard<std::mutex> lock(mu_);
  faults_[op] = std::move(fault);
}

void FaultInjectingEnv::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  faults_.clear();
}

int FaultInjectingEnv::syncs(const std::string& path_contains) {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const auto& [path, count] : syncs_by_path_) {
    if (path.find(path_contains) != std::string::npos) n += count;
  }
  return n;
}

void FaultInjectingEnv::CountSync(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  ++syncs_by_path_[path];
}

std::unique_ptr<Fault> FaultInjectingEnv::Take(FaultOp op, const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = faults_.find(op);
  if (it == faults_.end() || path.find(it->second.path_contains) == std::string::npos) return nullptr;
  auto fault = std::make_unique<Fault>(it->second);
  if (it->second.times > 0 && --it->second.times == 0) faults_.erase(it);
  return fault;
}

absl::StatusOr<std::unique_ptr<WritableFile>> FaultInjectingEnv::NewAppendableFile(const std::string& path) {
  auto file = target()->NewAppendableFile(path);
  if (!file.ok()) return file.status();
  return std::unique_ptr<WritableFile>(std::make_unique<FaultyFile>(this, path, std::move(*file)));
}

absl::Status FaultInjectingEnv::WriteFileAtomically(const std::string& path, std::string_view content) {
  if (auto fault = Take(FaultOp::kAtomicWrite, path)) return fault->status;
  return target()->WriteFileAtomically(path, content);
}

absl::Status FaultInjectingEnv::RemoveFile(const std::string& path) {
  if (auto fault = Take(FaultOp::kRemove, path)) return fault->status;
  return target()->RemoveFile(path);
}

}  // namespace benchfleet::agent::testing
