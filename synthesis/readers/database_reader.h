// Reads run records straight from a coordinator's PostgreSQL database (the `runs` and `conditions`
// tables of coordinator/migrations), for `benchfleet guide --database-url` and the guide
// benchmark, read-only, with the store's own statements (coordinator/store/reader_queries.h: no
// SQL is written here); libpqxx stays inside the .cc and its exceptions become Status. Stateless; thread-safe (each call opens its own connection).
#ifndef BENCHFLEET_SYNTHESIS_READERS_DATABASE_READER_H_
#define BENCHFLEET_SYNTHESIS_READERS_DATABASE_READER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "benchfleet/v1/admin.pb.h"
#include "benchfleet/v1/record.pb.h"
#include "synthesis/analysis/run_row.h"
#include "synthesis/readers/measurement_files.h"

namespace benchfleet::synthesis {

// Which runs a guide reads; each part that is set must match (the same rule as Admin ListRuns).
struct RecordFilter {
  std::vector<std::string> tasks;   // the run's task is one of these; empty: every task
  std::optional<absl::Time> since;  // start_time >= since; a run without start_time never matches
};

// True when `record` passes `filter` (what the SQL of ReadRecordsFromDatabase selects).
bool RecordMatches(const RecordFilter& filter, const v1::RunRecord& record);
// The same for a row of a record.
bool RecordMatches(const RecordFilter& filter, const RunRow& row);

// Sorts records oldest first: runs without a start_time first, then by start_time, then by
// lower-cased run_id (the order of Admin ListRuns reversed; PostgreSQL orders uuids that way).
void SortRecordsOldestFirst(std::vector<v1::RunRecord>* records);

// A check as the Admin API's ListRegressionChecks gives it, as the guide reads it; what the
// database reader and `benchfleet guide --coordinator` both turn each check into.
StoredVerdict ToStoredVerdict(v1::RegressionCheck check);

// Undoes COPY's text-format escaping of one field (\\, \n, \t, \r, \b, \f, \v, \ooo, \xhh) in
// place; `line` is one row of a single-column COPY without its line end.
void UnescapeCopyText(std::string* line);

// Returns the records of the runs matching `filter`, oldest first (start_time, runs without one
// first, then run_id: the order Admin ListRuns gives once reversed), read with one
// coordinator::RecordsCopySql's COPY, and the conditions of every fingerprint they name from the `conditions`
// table. A record whose binary copy or JSON cannot be read goes to `skipped`
// (path "database", line = its row in the COPY). No matching run is OK (empty records).
// UNAVAILABLE when the database cannot be reached, INTERNAL for another database failure; the
// messages never contain the URL (nor so its password).
// The regression verdicts (coordinator/store/verdict_queries.h, the query the Admin API's
// ListRegressionChecks runs) of the runs matching `filter`,
// the newest of each agent, task, mode, phase and matrix point, go to ReadResult::verdicts (none
// from a database made before the fleet migration); a verdict whose JSON cannot be read goes to
// `skipped` (path "database", line 0).
// With `as_rows`, each record becomes a RunRow as it is decoded and only the rows are kept,
// appended there (what the guide reads a million records with: a tenth of the memory of the
// messages), and ReadResult::records stays empty.
absl::StatusOr<ReadResult> ReadRecordsFromDatabase(const std::string& url, const RecordFilter& filter,
                                                   RunRows* as_rows = nullptr);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_READERS_DATABASE_READER_H_
