// MemoryRecordQueue: a RecordQueue held in memory, for records that are already durable elsewhere
// (`benchfleet-agent import` reads them from files, which it can read again). Rejections are kept
// in memory for the caller to report. Thread-safe.
#ifndef BENCHFLEET_AGENT_OUTBOX_MEMORY_QUEUE_H_
#define BENCHFLEET_AGENT_OUTBOX_MEMORY_QUEUE_H_

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "agent/outbox/record_queue.h"
#include "benchfleet/v1/record.pb.h"

namespace benchfleet::agent {

class MemoryRecordQueue final : public RecordQueue {
 public:
  // Queues the record (serialized here).
  void Add(const v1::RunRecord& record);

  std::vector<PendingRecord> Pending(size_t max_records, size_t max_bytes, uint64_t after_seq) override;
  absl::Status Ack(const std::vector<std::string>& run_ids) override;
  absl::Status Reject(const std::string& run_id, const std::string& reason) override;
  size_t depth() override;
  void SetAppendListener(std::function<void()> listener) override;

  // Returns the (run_id, reason) of every rejected record, in rejection order.
  std::vector<std::pair<std::string, std::string>> rejections();

 private:
  std::mutex mu_;
  std::map<uint64_t, PendingRecord> pending_ ABSL_GUARDED_BY(mu_);
  std::unordered_multimap<std::string, uint64_t> seq_by_run_id_ ABSL_GUARDED_BY(mu_);
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;
  std::vector<std::pair<std::string, std::string>> rejections_ ABSL_GUARDED_BY(mu_);
  std::function<void()> listener_ ABSL_GUARDED_BY(mu_);
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_OUTBOX_MEMORY_QUEUE_H_
