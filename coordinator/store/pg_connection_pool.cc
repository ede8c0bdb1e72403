#include "coordinator/store/pg_connection_pool.h"

#include <algorithm>

#include <pqxx/connection>
#include <pqxx/except>

#include "coordinator/store/pg_errors.h"

namespace benchfleet::coordinator {
namespace {

// The pools whose connection this thread holds now (a call inside a call of the same pool).
thread_local std::vector<const PgConnectionPool*> held_by_this_thread;

}  // namespace

PgConnectionPool::PgConnectionPool(std::string database_url, size_t max_open)
    : url_(std::move(database_url)), max_open_(std::max<size_t>(1, max_open)) {}

PgConnectionPool::~PgConnectionPool() = default;

std::unique_ptr<pqxx::connection> PgConnectionPool::Borrow(bool nested) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!nested) freed_.wait(lock, [&] { return borrowed_ < max_open_; });
  ++borrowed_;
  if (idle_.empty()) return nullptr;
  std::unique_ptr<pqxx::connection> conn = std::move(idle_.back());
  idle_.pop_back();
  return conn;
}

void PgConnectionPool::GiveBack(std::unique_ptr<pqxx::connection> conn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --borrowed_;
    // A nested call's extra connection is closed rather than kept beyond max_open.
    if (conn != nullptr && idle_.size() + borrowed_ < max_open_) idle_.push_back(std::move(conn));
  }
  freed_.notify_one();
}

absl::Status PgConnectionPool::Run(std::string_view what,
                                   const std::function<absl::Status(pqxx::connection&)>& fn) {
  const bool nested = std::find(held_by_this_thread.begin(), held_by_this_thread.end(), this) !=
                      held_by_this_thread.end();
  // An idle connection may have died with the server since its last use: then the call is
  // tried once more on a new one (every caller's statement is idempotent or read-only).
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<pqxx::connection> conn = Borrow(nested);
    const bool reused = conn != nullptr;
    held_by_this_thread.push_back(this);
    absl::Status status;
    try {
      if (conn == nullptr) conn = std::make_unique<pqxx::connection>(url_);
      status = fn(*conn);
    } catch (const std::exception& e) {
      status = PqxxStatus(e, what);
    }
    held_by_this_thread.erase(std::find(held_by_this_thread.begin(), held_by_this_thread.end(), this));
    const bool keep = conn != nullptr && conn->is_open() && !absl::IsUnavailable(status);
    GiveBack(keep ? std::move(conn) : nullptr);
    if (keep) return status;
    if (!(reused && absl::IsUnavailable(status)) || attempt > 0) return status;
  }
}

}  // namespace benchfleet::coordinator
