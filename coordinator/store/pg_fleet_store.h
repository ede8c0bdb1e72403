// PgFleetStore: the FleetStore on PostgreSQL (libpqxx; every value travels as a parameter): every
// concern interface of fleet_store.h (machines, series and tasks, schedules, run annotations and
// verdicts, the fleet snapshot) on one connection pool. Owned by CoordinatorServer beside
// PgRunStore. Thread-safe: each call borrows a connection of its
// own from a pool; connections are opened lazily and reopened after PostgreSQL comes back.
// Expects the schema of coordinator/migrations up to 0002_fleet (run Migrate first).
#ifndef BENCHFLEET_COORDINATOR_STORE_PG_FLEET_STORE_H_
#define BENCHFLEET_COORDINATOR_STORE_PG_FLEET_STORE_H_

#include <memory>
#include <string>

#include "coordinator/store/fleet_store.h"

namespace benchfleet::coordinator {

struct PgFleetStoreOptions {
  std::string database_url;  // a libpq URL or keyword string; never printed
  // Connections open at once (PgConnectionPool: a call beyond them waits for one).
  size_t max_connections = 4;
};

// Returns a store on the database; connects on first use.
std::unique_ptr<FleetStore> NewPgFleetStore(PgFleetStoreOptions options);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_PG_FLEET_STORE_H_
