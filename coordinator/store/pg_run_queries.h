// The SQL of ListRuns: filters, newest-first order and keyset paging (the page token names the
// last run of the page, so a page costs the same however deep it is). Owned by PgRunStore,
// which hands each call a connection of its own; throws libpqxx exceptions, which
// PgConnectionPool turns into a Status. Stateless.
#ifndef BENCHFLEET_COORDINATOR_STORE_PG_RUN_QUERIES_H_
#define BENCHFLEET_COORDINATOR_STORE_PG_RUN_QUERIES_H_

#include <cstdint>
#include <optional>
#include <string>

#include <pqxx/connection>

#include "absl/status/status.h"
#include "coordinator/store/run_store.h"

namespace benchfleet::coordinator {

// Where a page ends: the last run's start_time (in microseconds; none when it has none) and id.
struct PagePosition {
  std::optional<int64_t> start_micros;
  std::string run_id;
};

std::string EncodePageToken(const PagePosition& position);

// INVALID_ARGUMENT when `token` is not one EncodePageToken made.
absl::StatusOr<PagePosition> DecodePageToken(const std::string& token);

absl::Status SelectRuns(pqxx::connection& conn, const RunQuery& query, RunPage* page);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_PG_RUN_QUERIES_H_
