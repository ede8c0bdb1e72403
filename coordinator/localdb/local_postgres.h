// LocalPostgres: the private PostgreSQL a coordinator runs when it is given no database URL.
// First start initialises a cluster in <data_dir>/pgdata; every start runs it with the installed
// server binaries, listening only on a unix socket in <data_dir> (no TCP at all), and creates
// the database. Stop() (or the destructor) shuts it down. initdb and pg_ctl refuse root: as root
// they run as the "postgres" user, which then owns <data_dir>. Owned by main(); not thread-safe.
#ifndef BENCHFLEET_COORDINATOR_LOCALDB_LOCAL_POSTGRES_H_
#define BENCHFLEET_COORDINATOR_LOCALDB_LOCAL_POSTGRES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace benchfleet::coordinator {

struct LocalPostgresOptions {
  std::string data_dir = "./benchfleet-data";

  // Directory of initdb/pg_ctl/createdb; empty: the newest /usr/lib/postgresql/<N>/bin.
  std::string bin_dir;

  std::string database = "benchfleet";
};

class LocalPostgres {
 public:
  // Initialises (first time) and starts the server, or adopts one a previous coordinator left
  // running in the same directory. Errors say what to fix (missing binaries, a directory the
  // postgres user cannot reach, a socket path too long).
  static absl::StatusOr<std::unique_ptr<LocalPostgres>> Start(LocalPostgresOptions options);

  ~LocalPostgres();  // Stop()
  LocalPostgres(const LocalPostgres&) = delete;
  LocalPostgres& operator=(const LocalPostgres&) = delete;

  // A libpq keyword URL for the database over the unix socket.
  const std::string& database_url() const { return url_; }

  // The absolute data directory.
  const std::string& data_dir() const { return dir_; }

  // Stops the server (fast shutdown: open transactions roll back). Idempotent.
  absl::Status Stop();

 private:
  LocalPostgres() = default;

  // Runs one of the server's programs, as the postgres user when we are root.
  absl::Status Run(const std::string& program, const std::vector<std::string>& args,
                   const std::string& what);
  absl::StatusOr<int> RunForExitCode(const std::string& program, const std::vector<std::string>& args);

  std::string dir_;
  std::string bin_dir_;
  std::string pgdata_;
  std::string log_path_;  // output of initdb, pg_ctl, createdb
  std::string url_;
  bool as_postgres_user_ = false;
  bool running_ = false;
};

// Returns the newest /usr/lib/postgresql/<N>/bin that has initdb, or NOT_FOUND.
absl::StatusOr<std::string> FindPostgresBinDir(const std::string& root = "/usr/lib/postgresql");

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_LOCALDB_LOCAL_POSTGRES_H_
