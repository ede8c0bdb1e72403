// Brings a PostgreSQL database to the schema this binary expects by applying the embedded
// migrations that schema_migrations does not list yet, each in its own transaction. Safe when
// several coordinators start together: they serialize on a PostgreSQL advisory lock.
// Stateless; thread-safe (each call opens its own connection).
#ifndef BENCHFLEET_COORDINATOR_STORE_MIGRATOR_H_
#define BENCHFLEET_COORDINATOR_STORE_MIGRATOR_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "coordinator/store/migrations.h"

namespace benchfleet::coordinator {

// Applies the migrations of `migrations` missing from schema_migrations, in version order.
// Returns UNAVAILABLE when the database cannot be reached, INTERNAL (naming the migration) when
// one fails; a failed migration leaves nothing of itself behind.
absl::Status Migrate(const std::string& database_url, const std::vector<Migration>& migrations);

// Migrate with EmbeddedMigrations().
absl::Status Migrate(const std::string& database_url);

// Migrate with EmbeddedMigrations(), retrying with backoff (on `clock`) while the database is
// unreachable, for up to `timeout`; then UNAVAILABLE naming the (password-free) URL. Returns
// CANCELLED early when `cancelled` (if given) turns true between attempts. `log` (if given) is told
// once that the database is awaited.
absl::Status MigrateWhenReachable(const std::string& database_url, Clock& clock,
                                  absl::Duration timeout,
                                  const std::function<bool()>& cancelled = nullptr,
                                  const std::function<void(std::string_view line)>& log = nullptr);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_MIGRATOR_H_
