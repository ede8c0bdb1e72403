// A few libpqxx connections shared by the threads that read and upsert (admin calls, Hello):
// libpqxx connections are not thread-safe, so each call borrows one for its duration. Owned by
// PgRunStore. Thread-safe. A connection that broke is dropped; the next call opens a new one, so
// the pool recovers by itself once PostgreSQL is back.
#ifndef BENCHFLEET_COORDINATOR_STORE_PG_CONNECTION_POOL_H_
#define BENCHFLEET_COORDINATOR_STORE_PG_CONNECTION_POOL_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <pqxx/connection>

#include "absl/status/status.h"

namespace benchfleet::coordinator {

class PgConnectionPool {
 public:
  // Opens nothing yet. At most max_idle connections are kept between calls.
  PgConnectionPool(std::string database_url, size_t max_idle);
  ~PgConnectionPool();
  PgConnectionPool(const PgConnectionPool&) = delete;
  PgConnectionPool& operator=(const PgConnectionPool&) = delete;

  // Runs fn with a connection of its own. Exceptions fn lets out become a Status whose message
  // starts with `what`.
  absl::Status Run(std::string_view what, const std::function<absl::Status(pqxx::connection&)>& fn);

 private:
  const std::string url_;
  const size_t max_idle_;
  std::mutex mu_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;  // guarded by mu_
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_PG_CONNECTION_POOL_H_
