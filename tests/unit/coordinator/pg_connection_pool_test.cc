// PgConnectionPool against a real PostgreSQL: bounded (never more than max_open backends, each
// reused rather than opened per call, however many threads call at once) and safe to nest (a call
// inside a call of the same pool opens another connection instead of waiting for itself).
#include "coordinator/store/pg_connection_pool.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <pqxx/pqxx>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/pg_test_db.h"

namespace benchfleet::coordinator {
namespace {

int BackendPid(pqxx::connection& c) {
  pqxx::nontransaction tx(c);
  return tx.exec("SELECT pg_backend_pid()")[0][0].as<int>();
}

// The backend a call of `pool` gets; 0 when the call failed.
int BackendOfACall(PgConnectionPool& pool) {
  int pid = 0;
  absl::Status s = pool.Run("test", [&](pqxx::connection& c) {
    pid = BackendPid(c);
    return absl::OkStatus();
  });
  return s.ok() ? pid : 0;
}

TEST(PgConnectionPoolTest, ManyThreadsShareAtMostMaxOpenBackends) {
  testing::PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  PgConnectionPool pool(db.url(), 2);
  std::mutex mu;
  std::set<int> backends;
  std::atomic<int> inside{0}, most_inside{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int call = 0; call < 20; ++call) {
        absl::Status s = pool.Run("test", [&](pqxx::connection& c) {
          const int now = ++inside;
          int seen = most_inside.load();
          while (now > seen && !most_inside.compare_exchange_weak(seen, now)) {
          }
          const int pid = BackendPid(c);
          {
            std::lock_guard<std::mutex> lock(mu);
            backends.insert(pid);
          }
          --inside;
          return absl::OkStatus();
        });
        EXPECT_TRUE(s.ok()) << s;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  // 160 calls from 8 threads: at most 2 at once, on at most 2 backends ever opened.
  EXPECT_LE(most_inside.load(), 2);
  EXPECT_GE(backends.size(), 1u);
  EXPECT_LE(backends.size(), 2u);
}

TEST(PgConnectionPoolTest, ACallInsideACallOfTheSamePoolOpensAnotherConnection) {
  testing::PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  PgConnectionPool pool(db.url(), 1);
  int outer_pid = 0, inner_pid = 0;
  absl::Status s = pool.Run("outer", [&](pqxx::connection& outer) {
    outer_pid = BackendPid(outer);
    return pool.Run("inner", [&](pqxx::connection& inner) {
      inner_pid = BackendPid(inner);
      return absl::OkStatus();
    });
  });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_NE(outer_pid, 0);
  EXPECT_NE(inner_pid, 0);
  EXPECT_NE(inner_pid, outer_pid);
  // The extra connection was not kept beyond max_open: the next call gets one of them back.
  const int next_pid = BackendOfACall(pool);
  EXPECT_TRUE(next_pid == outer_pid || next_pid == inner_pid) << next_pid;
}

TEST(PgConnectionPoolTest, AnErrorOfTheCallIsReturnedAndItsConnectionKept) {
  testing::PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  PgConnectionPool pool(db.url(), 1);
  int first = 0;
  absl::Status s = pool.Run("failing query", [&](pqxx::connection& c) {
    first = BackendPid(c);
    pqxx::nontransaction tx(c);
    tx.exec("SELECT * FROM no_such_table");
    return absl::OkStatus();
  });
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("failing query"), std::string::npos) << s;
  EXPECT_EQ(BackendOfACall(pool), first);
}

}  // namespace
}  // namespace benchfleet::coordinator
