// RecordQueue: what the uplink drains. The Outbox (durable, for live runs) and MemoryRecordQueue
// (for imports, whose files are already durable) implement it. Implementations are thread-safe:
// the uplink's threads and the producers call them concurrently.
#ifndef BENCHFLEET_AGENT_OUTBOX_RECORD_QUEUE_H_
#define BENCHFLEET_AGENT_OUTBOX_RECORD_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace benchfleet::agent {

// One record waiting for its Ack.
struct PendingRecord {
  // Position in the queue, increasing in append order; only meaningful within one process.
  uint64_t seq = 0;
  std::string run_id;
  // The serialized benchfleet.v1.RunRecord, exactly as it will be sent.
  std::string bytes;
};

class RecordQueue {
 public:
  virtual ~RecordQueue() = default;

  // Returns up to max_records unacknowledged records with seq > after_seq, oldest first, stopping
  // before max_bytes of payload is exceeded (at least one record is returned when any is left, so
  // a single large record is never stuck).
  virtual std::vector<PendingRecord> Pending(size_t max_records, size_t max_bytes,
                                             uint64_t after_seq) = 0;

  // Drops the records with these run_ids: the coordinator stored them (or had them already).
  // Unknown run_ids are ignored.
  virtual absl::Status Ack(const std::vector<std::string>& run_ids) = 0;

  // Drops the record with this run_id for good, keeping it aside with the coordinator's reason:
  // re-sending the same bytes would get the same rejection.
  virtual absl::Status Reject(const std::string& run_id, const std::string& reason) = 0;

  // Returns how many records wait for an Ack.
  virtual size_t depth() = 0;

  // Calls listener (outside any lock of the queue) after records are added, so the uplink wakes
  // without polling. An empty function removes it.
  virtual void SetAppendListener(std::function<void()> listener) = 0;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_OUTBOX_RECORD_QUEUE_H_
