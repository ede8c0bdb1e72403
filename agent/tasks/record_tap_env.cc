#include "agent/tasks/record_tap_env.h"

#include <utility>

#include "common/proto_json.h"

namespace benchfleet::agent {
namespace {

// Buffers what is appended and, on a successful Sync, parses every complete line as a record.
class TapFile : public WritableFile {
 public:
  TapFile(std::unique_ptr<WritableFile> file, const std::function<void(const v1::RunRecord&)>* on_record)
      : file_(std::move(file)), on_record_(on_record) {}

  absl::Status Append(std::string_view data) override {
    absl::Status s = file_->Append(data);
    if (s.ok()) buffer_.append(data);
    return s;
  }

  absl::Status Sync() override {
    absl::Status s = file_->Sync();
    if (!s.ok()) return s;
    size_t start = 0;
    for (size_t end = buffer_.find('\n'); end != std::string::npos; end = buffer_.find('\n', start)) {
      v1::RunRecord record;
      // A line that does not parse back is the folder's business (its reader says so), not progress.
      if (JsonToMessage(std::string_view(buffer_).substr(start, end - start), &record, true).ok() &&
          *on_record_) {
        (*on_record_)(record);
      }
      start = end + 1;
    }
    buffer_.erase(0, start);
    return s;
  }

  absl::Status Close() override { return file_->Close(); }

 private:
  std::unique_ptr<WritableFile> file_;
  const std::function<void(const v1::RunRecord&)>* on_record_;
  std::string buffer_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<WritableFile>> RecordTapEnv::NewAppendableFile(const std::string& path) {
  auto file = EnvWrapper::NewAppendableFile(path);
  if (!file.ok() || path != jsonl_path_) return file;
  return std::unique_ptr<WritableFile>(new TapFile(std::move(*file), &on_record_));
}

}  // namespace benchfleet::agent
