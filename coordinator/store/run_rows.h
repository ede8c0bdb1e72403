// The row form of a run in the `runs` table: which columns a group commit writes and the COPY
// text line for one record. Owned by store/ (PgRunStore::PrepareRun); the ingest benchmark uses
// it to COPY the very same rows as its baseline. Pure functions; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_STORE_RUN_ROWS_H_
#define BENCHFLEET_COORDINATOR_STORE_RUN_ROWS_H_

#include <string>

#include "absl/status/status.h"
#include "benchfleet/v1/record.pb.h"
#include "coordinator/store/run_store.h"

namespace benchfleet::coordinator {

// The columns AppendRunRow writes, in order, comma-separated (for "COPY runs (...)").
extern const char kRunRowColumns[];

// Appends the COPY text-format line (ending in '\n') of `record` to out->rows and its
// PreparedRun to out->runs. INVALID_ARGUMENT when the record has no JSON form (a timestamp or
// duration out of range); `out` is then unchanged.
absl::Status AppendRunRow(const v1::RunRecord& record, PreparedRuns* out);

// Returns the lower-case hex SHA-256 of `record`'s content: its deterministic protobuf encoding
// (map entries sorted by key) without `run_id` (the key itself, compared in lower case) and
// `provenance` (where it was read from is not what it measured: a live run re-imported from its
// series folder is the same run). The
// `content_sha256` column, which tells a re-send (same hash: a duplicate) from a conflict.
std::string RunContentSha256(const v1::RunRecord& record);

// Returns the lower-case form of a UUID: the form PostgreSQL returns and duplicates compare on.
std::string CanonicalRunId(const std::string& run_id);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_RUN_ROWS_H_
