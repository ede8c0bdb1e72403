#include "coordinator/ingest/batch.h"

#include <algorithm>

#include "common/record_validation.h"

namespace benchfleet::coordinator {

std::string RejectionCode(const absl::Status& status) {
  // The reasons come from common/record_validation.cc and RunStore::PrepareRun; every code
  // returned here is listed in common/rejection_codes.h (the metrics create each at 0).
  if (absl::IsPermissionDenied(status)) return "permission_denied";
  // CheckRecordBounds (record_validation.h): NaN, a negative or inverted time, a call_index
  // past its maximum, ...
  if (absl::IsOutOfRange(status)) return "out_of_bounds";
  const std::string_view m(status.message().data(), status.message().size());
  if (m == "run_id is missing") return "missing_run_id";
  if (m.starts_with("run_id \"")) return "invalid_run_id";
  if (m.starts_with("phase ")) return "unknown_phase";
  if (m.starts_with("status ")) return "unknown_status";
  if (m == "agent_id is missing") return "missing_agent_id";
  if (m.starts_with("record is ")) return "too_large";
  if (m.starts_with("not a valid RunRecord")) return "malformed";
  if (m.starts_with("the database refused")) return "refused_by_database";
  return "unrepresentable";
}

PreparedBatch PrepareBatch(const v1::RecordBatch& batch, const RunStore& store,
                           const std::string& required_agent_id) {
  PreparedBatch prepared;
  prepared.batch_id = batch.batch_id();
  // One typical row is about 1.5x its serialized record (JSON plus columns).
  size_t bytes = 0;
  for (const std::string& r : batch.records()) bytes += r.size();
  prepared.runs.rows.reserve(bytes * 2);
  prepared.runs.runs.reserve(batch.records_size());
  prepared.records.reserve(batch.records_size());

  v1::RunRecord record;
  std::string run_id;
  for (int i = 0; i < batch.records_size(); ++i) {
    absl::Status status = ParseAndValidateRecord(batch.records(i), &record, &run_id);
    if (status.ok() && !required_agent_id.empty() && record.agent_id() != required_agent_id) {
      status = absl::PermissionDeniedError(absl::StrCat("agent ", required_agent_id, " may not write a record of agent ",
                                                        record.agent_id(), " (operators import other machines' runs)"));
    }
    if (status.ok()) status = store.PrepareRun(record, &prepared.runs);
    if (!status.ok()) {
      v1::Rejection& rejection = prepared.rejections.emplace_back();
      rejection.set_index(static_cast<uint32_t>(i));
      rejection.set_run_id(run_id);
      rejection.set_reason(std::string(status.message()));
      prepared.rejection_codes.push_back(RejectionCode(status));
      continue;
    }
    prepared.run_ids.push_back(record.run_id());
    prepared.indexes.push_back(static_cast<uint32_t>(i));
    // A move swaps the parsed fields out (no copy); the next parse starts from an empty record.
    prepared.records.push_back(std::move(record));
  }
  return prepared;
}

v1::Ack BuildAck(const PreparedBatch& batch, absl::Span<const RunStoreResult> results) {
  v1::Ack ack;
  ack.set_batch_id(batch.batch_id);
  for (const v1::Rejection& r : batch.rejections) *ack.add_rejections() = r;
  bool refused = false;
  for (size_t i = 0; i < results.size() && i < batch.run_ids.size(); ++i) {
    switch (results[i].outcome) {
      case StoreOutcome::kStored:
        ack.add_stored_run_ids(batch.run_ids[i]);
        break;
      case StoreOutcome::kDuplicate:
        ack.add_duplicate_run_ids(batch.run_ids[i]);
        break;
      case StoreOutcome::kConflict:
      case StoreOutcome::kRefused: {
        v1::Rejection& r = *ack.add_rejections();
        r.set_index(batch.indexes[i]);
        r.set_run_id(batch.run_ids[i]);
        r.set_reason(results[i].reason);
        refused = true;
        break;
      }
    }
  }
  if (refused) {
    std::sort(ack.mutable_rejections()->begin(), ack.mutable_rejections()->end(),
              [](const v1::Rejection& a, const v1::Rejection& b) { return a.index() < b.index(); });
  }
  return ack;
}

}  // namespace benchfleet::coordinator
