// A RecordBatch's way through the gateway: PrepareBatch parses, validates and formats every
// record on the stream's own thread (never on the committer's); BuildAck turns the group
// commit's results into the Ack. Used by AgentGatewayService. Pure functions; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_INGEST_BATCH_H_
#define BENCHFLEET_COORDINATOR_INGEST_BATCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "benchfleet/v1/gateway.pb.h"
#include "coordinator/store/run_store.h"

namespace benchfleet::coordinator {

struct PreparedBatch {
  uint64_t batch_id = 0;

  // The records to store, in batch order; run_ids[i], indexes[i] and records[i] belong to
  // runs.runs[i].
  PreparedRuns runs;
  std::vector<std::string> run_ids;  // as the agent sent them (the Ack echoes them)
  std::vector<uint32_t> indexes;     // positions in the batch
  // The parsed records, kept so that what follows their commit (metrics, the scheduler) does
  // not parse them again.
  std::vector<v1::RunRecord> records;

  // The records refused on receipt, by index, and a short code per rejection for metrics.
  std::vector<v1::Rejection> rejections;
  std::vector<std::string> rejection_codes;
};

// Parses and validates each record of `batch` and formats the good ones with store.PrepareRun.
// With `required_agent_id` set (an agent's certificate), a record naming another agent is
// rejected ("permission_denied") and nothing of it is stored.
PreparedBatch PrepareBatch(const v1::RecordBatch& batch, const RunStore& store,
                           const std::string& required_agent_id = "");

// Returns the metrics code of a rejection reason, e.g. "missing_run_id", "unknown_phase",
// "malformed", "too_large", "out_of_bounds" (OUT_OF_RANGE: past a record bound): one of
// kRejectionCodes (common/rejection_codes.h).
std::string RejectionCode(const absl::Status& status);

// Returns the Ack of `batch` given one store result per prepared run (empty when it had none):
// a run refused by the database or in conflict with a stored one (StoreOutcome::kConflict)
// is a Rejection with the store's reason ("conflict: run_id X already stored with different
// content").
v1::Ack BuildAck(const PreparedBatch& batch, absl::Span<const RunStoreResult> results);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_INGEST_BATCH_H_
