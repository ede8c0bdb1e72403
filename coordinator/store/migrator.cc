#include "coordinator/store/migrator.h"

#include <algorithm>
#include <set>

#include <pqxx/connection>
#include <pqxx/result>
#include <pqxx/nontransaction>
#include <pqxx/transaction>

#include "absl/strings/str_cat.h"
#include "coordinator/store/pg_errors.h"

namespace benchfleet::coordinator {
namespace {

// Any constant shared by every coordinator; "bfmigrat" in ASCII.
constexpr char kLockSql[] = "SELECT pg_advisory_lock(7090173404818105716)";
constexpr char kUnlockSql[] = "SELECT pg_advisory_unlock(7090173404818105716)";

constexpr char kCreateTableSql[] = R"sql(
CREATE TABLE IF NOT EXISTS schema_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
))sql";

}  // namespace

absl::Status Migrate(const std::string& database_url, const std::vector<Migration>& migrations) {
  std::vector<const Migration*> ordered;
  for (const Migration& m : migrations) ordered.push_back(&m);
  std::sort(ordered.begin(), ordered.end(),
            [](const Migration* a, const Migration* b) { return a->version < b->version; });

  std::string current = "connecting";
  try {
    pqxx::connection conn(database_url);
    std::set<int> applied;
    {
      // The lock is the session's: it is released when this connection ends, even on a crash.
      pqxx::nontransaction tx(conn);
      current = "waiting for the migration lock";
      tx.exec(kLockSql);
      current = "creating schema_migrations";
      tx.exec(kCreateTableSql);
      for (const auto& row : tx.exec("SELECT version FROM schema_migrations")) {
        applied.insert(row[0].as<int>());
      }
    }
    for (const Migration* m : ordered) {
      if (applied.count(m->version) > 0) continue;
      current = absl::StrCat("applying migration ", m->name);
      pqxx::work tx(conn);
      tx.exec(m->sql);
      tx.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m->version,
                     m->name);
      tx.commit();
    }
    pqxx::nontransaction(conn).exec(kUnlockSql);
    return absl::OkStatus();
  } catch (const std::exception& e) {
    absl::Status status = PqxxStatus(e, current);
    // A migration that fails for its SQL is a bug, not bad input: say which one failed.
    if (absl::IsInvalidArgument(status)) return absl::InternalError(status.message());
    return status;
  }
}

absl::Status Migrate(const std::string& database_url) {
  return Migrate(database_url, EmbeddedMigrations());
}

absl::Status MigrateWhenReachable(const std::string& database_url, Clock& clock,
                                  absl::Duration timeout, const std::function<bool()>& cancelled,
                                  const std::function<void(std::string_view line)>& log) {
  const absl::Duration start = clock.Monotonic();
  absl::Duration delay = absl::Milliseconds(100);
  bool told = false;
  while (true) {
    absl::Status status = Migrate(database_url);
    if (status.ok() || !absl::IsUnavailable(status)) return status;
    if (clock.Monotonic() - start >= timeout) {
      return absl::UnavailableError(absl::StrCat("cannot reach the database at ",
                                                 RedactDatabaseUrl(database_url), " after ",
                                                 absl::FormatDuration(timeout), ": ", status.message()));
    }
    if (!told && log) {
      log(absl::StrCat("waiting for the database at ", RedactDatabaseUrl(database_url), ": ",
                       status.message()));
      told = true;
    }
    if (cancelled && cancelled()) return absl::CancelledError("start-up interrupted");
    clock.SleepFor(delay);
    delay = std::min(delay * 2, absl::Seconds(1));
  }
}

}  // namespace benchfleet::coordinator
