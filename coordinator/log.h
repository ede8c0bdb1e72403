// The coordinator's log: one timestamped line per event on stderr (Debian's Abseil predates
// absl/log). Never pass it a database URL unredacted (common/database_url.h RedactDatabaseUrl).
// Thread-safe: lines from several threads never interleave.
#ifndef BENCHFLEET_COORDINATOR_LOG_H_
#define BENCHFLEET_COORDINATOR_LOG_H_

#include <string_view>

namespace benchfleet::coordinator {

// Writes "2026-01-01T00:00:00.123Z benchfleet-coordinator: <message>" to stderr.
void Log(std::string_view message);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_LOG_H_
