// The statements that programs outside the coordinator run against its database: the guide's
// database reader (synthesis/readers/database_reader.h, `benchfleet guide --database-url`) reads
// the runs, their annotations and their conditions with these, so that the store stays the only
// code that knows the schema's SQL. Part of the small store library that the guide links
// (benchfleet_store_verdicts, with verdict_queries.h) instead of the coordinator. Stateless;
// the Select* functions throw libpqxx exceptions, as the other queries of this folder do.
#ifndef BENCHFLEET_COORDINATOR_STORE_READER_QUERIES_H_
#define BENCHFLEET_COORDINATOR_STORE_READER_QUERIES_H_

#include <optional>
#include <string>
#include <vector>

#include <pqxx/transaction_base>

#include "absl/time/time.h"

namespace benchfleet::coordinator {

// The one statement that reads the records (the guide benchmark's read baseline times this very
// COPY, lines only), of the tasks `quoted_tasks` (SQL literals, quoted by the connection; empty:
// every task) that started at or after `since`: two columns a row, `record_pb` (the record, binary:
// migration 0007_lean_row) or, where the row has none, `record` (its JSON, rows stored before
// 0003), the other NULL.
std::string RecordsCopySql(const std::vector<std::string>& quoted_tasks, const std::optional<absl::Time>& since);

// An operator's or the scheduler's annotation of a run (INVALIDATED, REGRESSION, ...).
struct RunAnnotationRow {
  std::string run_id;  // lower case
  std::string code;
  std::string reason;
};

// Every annotation, by run_id then as they were made; none from a database made before the fleet
// migration (no run_annotations table).
std::vector<RunAnnotationRow> SelectRunAnnotations(pqxx::transaction_base& tx);

// The conditions recorded under each of `fingerprints` that the `conditions` table holds, as
// (fingerprint, the MachineConditions' JSON), by fingerprint.
std::vector<std::pair<std::string, std::string>> SelectConditionsJson(pqxx::transaction_base& tx,
                                                                     const std::vector<std::string>& fingerprints);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_READER_QUERIES_H_
