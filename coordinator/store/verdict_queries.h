// The one statement that reads the regression verdicts back for readers (the `regressions` table,
// written by PgFleetStore::StoreVerdict): the newest verdict of each agent, task, mode, phase and
// matrix point among the runs that match a filter. Two callers, one query: the Admin API's
// ListRegressionChecks (PgRunStore) and the guide's database reader (synthesis/readers), so that
// `benchfleet guide --coordinator` and `--database-url` list the same checks. A library of its
// own (benchfleet_store_verdicts) so that the reader does not link the coordinator. Stateless;
// throws libpqxx exceptions as the other queries of this folder do.
#ifndef BENCHFLEET_COORDINATOR_STORE_VERDICT_QUERIES_H_
#define BENCHFLEET_COORDINATOR_STORE_VERDICT_QUERIES_H_

#include <optional>
#include <string>
#include <vector>

#include <pqxx/transaction_base>

#include "absl/time/time.h"
#include "benchfleet/v1/admin.pb.h"

namespace benchfleet::coordinator {

// Reads, in `tx`, the newest verdict (its run's start_time, then created, then run_id) of each
// point among the runs of `tasks` (empty: every task) that started at or after `since`, as the
// Admin API answers it: checks by agent, task, mode, phase and matrix (its JSON text; a verdict
// stored before matrices has none: one point per mode and phase then), and a line in `unreadable`
// for each stored verdict whose JSON no longer parses. A database made before the fleet migration
// has no `regressions` table: nothing then.
v1::ListRegressionChecksResponse SelectNewestVerdicts(pqxx::transaction_base& tx, const std::vector<std::string>& tasks,
                                    const std::optional<absl::Time>& since);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_VERDICT_QUERIES_H_
