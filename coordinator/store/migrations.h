// The schema migrations a coordinator applies at start-up, embedded into the binary at build time
// from coordinator/migrations/NNNN_name.sql (see embed_migrations.cmake). Owned by store/;
// immutable after first use, so thread-safe.
#ifndef BENCHFLEET_COORDINATOR_STORE_MIGRATIONS_H_
#define BENCHFLEET_COORDINATOR_STORE_MIGRATIONS_H_

#include <string>
#include <vector>

namespace benchfleet::coordinator {

struct Migration {
  int version;       // NNNN of the file name; applied in increasing order
  std::string name;  // the file name without ".sql", e.g. "0001_init"
  std::string sql;
};

// Returns the migrations built into this binary, in version order.
const std::vector<Migration>& EmbeddedMigrations();

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_MIGRATIONS_H_
