// Runs a program (initdb, pg_ctl, createdb) to completion, its output appended to a log file.
// Used by LocalPostgres only. The child gets its own process group and a clean signal mask, so
// a Ctrl-C meant for the coordinator does not reach the PostgreSQL it starts, and the signals
// the coordinator blocks stay deliverable there. Thread-safe (no shared state).
#ifndef BENCHFLEET_COORDINATOR_LOCALDB_COMMAND_H_
#define BENCHFLEET_COORDINATOR_LOCALDB_COMMAND_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace benchfleet::coordinator {

// Runs argv (argv[0] is a path), stdout and stderr appended to log_path, and returns its exit
// code (128 + signal when a signal ended it). INTERNAL when it cannot be started.
absl::StatusOr<int> RunCommand(const std::vector<std::string>& argv, const std::string& log_path);

// Returns the last `max_bytes` of the file from byte `from` on (or "" when unreadable), for
// error messages.
std::string FileTail(const std::string& path, size_t max_bytes, size_t from = 0);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_LOCALDB_COMMAND_H_
