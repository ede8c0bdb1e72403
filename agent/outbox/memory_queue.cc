#include "agent/outbox/memory_queue.h"

#include "absl/strings/str_cat.h"

namespace benchfleet::agent {

void MemoryRecordQueue::Add(const v1::RunRecord& record) {
  std::function<void()> listener;
  {
    std::lock_guard<std::mutex> l(mu_);
    const uint64_t seq = next_seq_++;
    pending_[seq] = PendingRecord{seq, record.run_id(), record.SerializeAsString()};
    seq_by_run_id_.emplace(record.run_id(), seq);
    listener = listener_;
  }
  if (listener) listener();
}

std::vector<PendingRecord> MemoryRecordQueue::Pending(size_t max_records, size_t max_bytes,
                                                      uint64_t after_seq) {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<PendingRecord> out;
  size_t bytes = 0;
  for (auto it = pending_.upper_bound(after_seq); it != pending_.end() && out.size() < max_records; ++it) {
    if (!out.empty() && bytes + it->second.bytes.size() > max_bytes) break;
    bytes += it->second.bytes.size();
    out.push_back(it->second);
  }
  return out;
}

absl::Status MemoryRecordQueue::Ack(const std::vector<std::string>& run_ids) {
  std::lock_guard<std::mutex> l(mu_);
  for (const std::string& run_id : run_ids) {
    auto range = seq_by_run_id_.equal_range(run_id);
    for (auto it = range.first; it != range.second; ++it) pending_.erase(it->second);
    seq_by_run_id_.erase(range.first, range.second);
  }
  return absl::OkStatus();
}

absl::Status MemoryRecordQueue::Reject(const std::string& run_id, const std::string& reason) {
  std::lock_guard<std::mutex> l(mu_);
  auto range = seq_by_run_id_.equal_range(run_id);
  if (range.first == range.second) return absl::NotFoundError(absl::StrCat("no queued run ", run_id));
  for (auto it = range.first; it != range.second; ++it) pending_.erase(it->second);
  seq_by_run_id_.erase(range.first, range.second);
  rejections_.emplace_back(run_id, reason);
  return absl::OkStatus();
}

size_t MemoryRecordQueue::depth() {
  std::lock_guard<std::mutex> l(mu_);
  return pending_.size();
}

void MemoryRecordQueue::SetAppendListener(std::function<void()> listener) {
  std::lock_guard<std::mutex> l(mu_);
  listener_ = std::move(listener);
}

std::vector<std::pair<std::string, std::string>> MemoryRecordQueue::rejections() {
  std::lock_guard<std::mutex> l(mu_);
  return rejections_;
}

}  // namespace benchfleet::agent
