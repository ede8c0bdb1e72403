// A few libpqxx connections shared by the threads that read and write through a store (admin
// calls, Hello, task updates): libpqxx connections are not thread-safe, so each call borrows one
// for its duration. At most `max_open` are open at once; a call that finds them all in use waits
// for one (a thread already holding one of this pool's connections opens another instead, so a
// nested call cannot deadlock). Bounded, a fleet of thousands of agents that connect or report at
// once queues here instead of opening (and, above max_idle, closing) a PostgreSQL backend per
// call: that churn, a fork and exit of a backend each time, was most of the database's work when
// 2,000 agents got a series, and past max_connections it fails outright. Owned by the stores.
// Thread-safe. A connection that broke is dropped; the next call opens a new one, so the pool
// recovers by itself once PostgreSQL is back.
#ifndef BENCHFLEET_COORDINATOR_STORE_PG_CONNECTION_POOL_H_
#define BENCHFLEET_COORDINATOR_STORE_PG_CONNECTION_POOL_H_

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <pqxx/connection>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"

namespace benchfleet::coordinator {

class PgConnectionPool {
 public:
  // Opens nothing yet. At most max_open connections (at least 1) are open at once, all of them
  // kept between calls.
  PgConnectionPool(std::string database_url, size_t max_open);
  ~PgConnectionPool();
  PgConnectionPool(const PgConnectionPool&) = delete;
  PgConnectionPool& operator=(const PgConnectionPool&) = delete;

  // Runs fn with a connection of its own, waiting for one when max_open are in use. Exceptions fn
  // lets out become a Status whose message starts with `what`.
  absl::Status Run(std::string_view what, const std::function<absl::Status(pqxx::connection&)>& fn);

 private:
  // Takes an idle connection (nullptr: open a new one), waiting while max_open are borrowed;
  // `nested` (the thread holds one already) never waits. Counts the borrow.
  std::unique_ptr<pqxx::connection> Borrow(bool nested);
  // Gives back a borrowed slot, keeping `conn` when it is still usable.
  void GiveBack(std::unique_ptr<pqxx::connection> conn);

  const std::string url_;
  const size_t max_open_;
  std::mutex mu_;
  std::condition_variable freed_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_ ABSL_GUARDED_BY(mu_);
  size_t borrowed_ ABSL_GUARDED_BY(mu_) = 0;  // connections (open or being opened) in callers' hands
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_PG_CONNECTION_POOL_H_
