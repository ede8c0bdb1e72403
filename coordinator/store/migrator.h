// Brings a PostgreSQL database to the schema this binary expects by applying the embedded
// migrations that schema_migrations does not list yet, each in its own transaction. Safe when
// several coordinators start together: they serialize on a PostgreSQL advisory lock.
// Stateless; thread-safe (each call opens its own connection).
#ifndef BENCHFLEET_COORDINATOR_STORE_MIGRATOR_H_
#define BENCHFLEET_COORDINATOR_STORE_MIGRATOR_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "coordinator/store/migrations.h"

namespace benchfleet::coordinator {

// Applies the migrations of `migrations` missing from schema_migrations, in version order.
// Returns UNAVAILABLE when the database cannot be reached, INTERNAL (naming the migration) when
// one fails; a failed migration leaves nothing of itself behind.
absl::Status Migrate(const std::string& database_url, const std::vector<Migration>& migrations);

// Migrate with EmbeddedMigrations().
absl::Status Migrate(const std::string& database_url);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_MIGRATOR_H_
