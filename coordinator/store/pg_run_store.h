// PgRunStore: the RunStore on PostgreSQL (libpqxx for reads and upserts, libpq COPY for group
// commits). Owned by CoordinatorServer. Thread-safe; StoreRuns calls are serialized on the one
// committing connection. Connections are opened lazily and reopened after PostgreSQL comes back.
// Expects the schema of coordinator/migrations (run Migrate first).
#ifndef BENCHFLEET_COORDINATOR_STORE_PG_RUN_STORE_H_
#define BENCHFLEET_COORDINATOR_STORE_PG_RUN_STORE_H_

#include <memory>
#include <string>

#include "coordinator/store/run_store.h"

namespace benchfleet::coordinator {

struct PgRunStoreOptions {
  std::string database_url;  // a libpq URL or keyword string

  // Connections open at once for reads and machine upserts (PgConnectionPool: a call beyond
  // them waits for one); the group committer's COPY connection is its own.
  size_t max_connections = 4;
};

// Returns a store on the database; connects on first use.
std::unique_ptr<RunStore> NewPgRunStore(PgRunStoreOptions options);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_PG_RUN_STORE_H_
