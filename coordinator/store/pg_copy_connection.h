// The group committer's own libpq connection: COPY with one PQputCopyData per prepared buffer
// (libpqxx 6.4 keeps its raw COPY line writer private, and a prototype with per-row stream_to on
// the committing thread reached ~0.55 of a plain COPY's rate), plus the few statements of the
// duplicate and refusal paths. Owned by PgRunStore, used by one thread at a time (PgRunStore
// serializes StoreRuns); not thread-safe.
#ifndef BENCHFLEET_COORDINATOR_STORE_PG_COPY_CONNECTION_H_
#define BENCHFLEET_COORDINATOR_STORE_PG_COPY_CONNECTION_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/types/span.h"

struct pg_conn;

namespace benchfleet::coordinator {

// What one statement did. On failure sqlstate is the server's code ("" when the connection is
// gone) and message its text.
struct PgOutcome {
  bool ok = true;
  std::string sqlstate;
  std::string message;
  std::vector<std::string> first_column;  // the rows a statement returned, first column only
};

class PgCopyConnection {
 public:
  explicit PgCopyConnection(std::string database_url);
  ~PgCopyConnection();
  PgCopyConnection(const PgCopyConnection&) = delete;
  PgCopyConnection& operator=(const PgCopyConnection&) = delete;

  // Connects when not connected (or after the connection broke).
  PgOutcome EnsureConnected();

  // Runs one statement (no parameters) and collects its first column.
  PgOutcome Exec(const std::string& sql);

  // Runs `copy_sql` (a COPY ... FROM STDIN) and sends the chunks, in order, as its data.
  PgOutcome Copy(const std::string& copy_sql, absl::Span<const std::string_view> chunks);

  // Drops the connection (the next EnsureConnected opens a new one).
  void Reset();

 private:
  PgOutcome Failure(const char* fallback_message);

  const std::string url_;
  pg_conn* conn_ = nullptr;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_PG_COPY_CONNECTION_H_
