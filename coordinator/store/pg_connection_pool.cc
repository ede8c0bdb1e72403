#include "coordinator/store/pg_connection_pool.h"

#include <pqxx/connection>
#include <pqxx/except>

#include "coordinator/store/pg_errors.h"

namespace benchfleet::coordinator {

PgConnectionPool::PgConnectionPool(std::string database_url, size_t max_idle)
    : url_(std::move(database_url)), max_idle_(max_idle) {}

PgConnectionPool::~PgConnectionPool() = default;

absl::Status PgConnectionPool::Run(std::string_view what,
                                   const std::function<absl::Status(pqxx::connection&)>& fn) {
  // An idle connection may have died with the server since its last use: then the call is
  // tried once more on a new one (every caller's statement is idempotent or read-only).
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<pqxx::connection> conn;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        conn = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    const bool reused = conn != nullptr;
    absl::Status status;
    try {
      if (conn == nullptr) conn = std::make_unique<pqxx::connection>(url_);
      status = fn(*conn);
    } catch (const std::exception& e) {
      status = PqxxStatus(e, what);
    }
    if (conn != nullptr && conn->is_open() && !absl::IsUnavailable(status)) {
      std::lock_guard<std::mutex> lock(mu_);
      if (idle_.size() < max_idle_) idle_.push_back(std::move(conn));
      return status;
    }
    if (!(reused && absl::IsUnavailable(status)) || attempt > 0) return status;
  }
}

}  // namespace benchfleet::coordinator
