// Outbox: the agent's durable queue of RunRecords, so that no measured run is ever lost. A record
// is fsync'd in state_dir/outbox/ before it is sent and dropped only once the coordinator
// acknowledges it; after a crash or restart everything unacknowledged is sent again (the run_id
// makes a re-send harmless). Owned by the agent process; thread-safe (producers + uplink).
//
// On disk (see agent/README.md):
//   segment-<20 digits>.log  8-byte header, then one checksummed frame per serialized RunRecord
//                            (agent/outbox/frame.h; segments of the earlier format are still read)
//   acks.log                 run_ids acknowledged or rejected, one per line, appended
//   rejected.jsonl           records the coordinator refused, with its reason, one JSON per line
// A segment is deleted once all its readable records are acknowledged; a new one is begun past a
// size. Damage inside a segment (a bad sector) costs the records it hit, logged with the file and
// offset: the records after it are still sent.
#ifndef BENCHFLEET_AGENT_OUTBOX_OUTBOX_H_
#define BENCHFLEET_AGENT_OUTBOX_OUTBOX_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/outbox/record_queue.h"
#include "benchfleet/v1/record.pb.h"
#include "common/env.h"

namespace benchfleet::agent {

inline constexpr char kOutboxAckLog[] = "acks.log";
inline constexpr char kOutboxRejectedFile[] = "rejected.jsonl";

struct OutboxOptions {
  // A segment is closed, and a new one begun, once it holds this many bytes. Whole segments are
  // deleted, so smaller segments free disk sooner; larger ones mean fewer files.
  size_t segment_bytes = 4u << 20;

  // acks.log is rewritten with only the run_ids still needed once it grows past this.
  size_t ack_log_compact_bytes = 1u << 20;

  // Receives warnings that need no action from the caller (a torn tail found at open, a segment
  // that could not be deleted). Default: one line on stderr.
  std::function<void(std::string_view)> warn = {};
};

// What Open() found on disk.
struct OutboxRecovery {
  size_t segments = 0;          // segment files read
  size_t records = 0;           // unacknowledged records queued again
  size_t acknowledged = 0;      // records skipped because acks.log lists them
  size_t torn_bytes = 0;        // bytes after the last good frame, all segments together
  // Damage with good frames after it (not a crash, which only cuts the last append short): the
  // skipped ranges and their bytes, all segments together. Each is logged with file and offset.
  size_t damaged_ranges = 0;
  size_t damaged_bytes = 0;
  size_t segments_removed = 0;  // fully acknowledged segments deleted
};

class Outbox final : public RecordQueue {
 public:
  // Opens (creating when missing) the outbox in dir and recovers what a previous process left.
  // The directory is locked while the Outbox lives: FAILED_PRECONDITION when another process
  // has it open.
  static absl::StatusOr<std::unique_ptr<Outbox>> Open(Env* env, std::string dir,
                                                      OutboxOptions options = {});
  ~Outbox() override;
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  // Queues one record durably (written and fsync'd). On error (RESOURCE_EXHAUSTED for a full
  // disk) the record is NOT queued and the caller still owns it: what part of it reached the file
  // is cut off again (ftruncate, which needs no free space), so it never comes back either.
  absl::Status Append(const v1::RunRecord& record);

  // Queues records all together with one fsync: all of them or, on error, none.
  absl::Status AppendBatch(std::span<const v1::RunRecord> records);

  std::vector<PendingRecord> Pending(size_t max_records, size_t max_bytes = SIZE_MAX,
                                     uint64_t after_seq = 0) override;

  // Drops the acknowledged records and logs their run_ids in acks.log (not fsync'd: an ack lost
  // to a crash only makes the record be sent again, and the coordinator answers "duplicate").
  // The records are dropped even when acks.log cannot be written; the error is returned so the
  // caller can report it.
  absl::Status Ack(const std::vector<std::string>& run_ids) override;

  // Moves the record to rejected.jsonl (fsync'd) with the reason, then drops it. When
  // rejected.jsonl cannot be written the record stays queued and the error is returned.
  // NOT_FOUND when no queued record has this run_id.
  absl::Status Reject(const std::string& run_id, const std::string& reason) override;

  size_t depth() override;
  void SetAppendListener(std::function<void()> listener) override;

  const OutboxRecovery& recovery() const { return recovery_; }
  const std::string& dir() const { return dir_; }

 private:
  struct Entry {
    std::string run_id;
    uint64_t segment = 0;
    size_t offset = 0;  // of the payload in the segment file
    uint32_t length = 0;
  };
  struct Segment {
    size_t live = 0;  // records not yet acknowledged
    // run_ids acknowledged while the segment still exists: kept in acks.log by compaction.
    std::vector<std::string> acked_ids;
  };

  Outbox(Env* env, std::string dir, OutboxOptions options);

  absl::Status Recover();
  std::string SegmentPath(uint64_t number) const;
  void Warn(std::string_view message) const;

  // Called with write_mu_ held.
  absl::Status OpenNewSegment();
  void CloseActiveSegment();
  // Deletes the just-closed segment when nothing in it waits for an Ack, else keeps its bytes as
  // the cached segment (its records are still to be sent). Caller holds mu_.
  void RetireActiveContent(uint64_t number);
  void AbandonActiveSegment();

  // Called with mu_ held.
  absl::StatusOr<std::string> ReadEntry(const Entry& entry);
  absl::Status AckLocked(const std::vector<std::string>& run_ids);
  void RemoveSegment(uint64_t number);
  void MaybeCompactAckLog();

  Env* const env_;
  const std::string dir_;
  const OutboxOptions options_;
  OutboxRecovery recovery_;
  std::unique_ptr<FileLock> lock_;  // on DIR/LOCK, held while open

  // Lock order: write_mu_ before mu_. write_mu_ serializes appends (and their fsync) without
  // holding mu_, so acks and Pending() are not stalled behind a disk flush.
  std::mutex write_mu_;
  std::unique_ptr<WritableFile> active_file_ ABSL_GUARDED_BY(write_mu_);
  uint64_t active_file_bytes_ ABSL_GUARDED_BY(write_mu_) = 0;
  uint64_t next_segment_number_ ABSL_GUARDED_BY(write_mu_) = 1;

  std::mutex mu_;
  std::map<uint64_t, Entry> unacked_ ABSL_GUARDED_BY(mu_);  // by seq
  std::unordered_multimap<std::string, uint64_t> seq_by_run_id_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Segment> segments_ ABSL_GUARDED_BY(mu_);  // by number
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;
  // The active segment's bytes, mirrored in memory so sending never re-reads the file being
  // appended; 0 when none is open.
  uint64_t active_segment_ ABSL_GUARDED_BY(mu_) = 0;
  std::string active_content_ ABSL_GUARDED_BY(mu_);
  // One closed segment's bytes, read back when its records are sent (a backlog after an outage).
  uint64_t cached_segment_ ABSL_GUARDED_BY(mu_) = 0;
  std::string cached_content_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<WritableFile> ack_file_ ABSL_GUARDED_BY(mu_);
  size_t ack_log_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  size_t ack_log_compact_at_ ABSL_GUARDED_BY(mu_) = 0;
  std::unique_ptr<WritableFile> rejected_file_ ABSL_GUARDED_BY(mu_);
  bool rejected_needs_newline_ ABSL_GUARDED_BY(mu_) = false;
  std::function<void()> listener_ ABSL_GUARDED_BY(mu_);
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_OUTBOX_OUTBOX_H_
