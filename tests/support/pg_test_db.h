// A throwaway PostgreSQL database per test, on the server that scripts/test starts
// (BENCHFLEET_TEST_DATABASE_URL, a role allowed to CREATE DATABASE). Created in the constructor,
// dropped in the destructor. Not thread-safe; one per test.
#ifndef BENCHFLEET_TESTS_SUPPORT_PG_TEST_DB_H_
#define BENCHFLEET_TESTS_SUPPORT_PG_TEST_DB_H_

#include <string>

namespace benchfleet::testing {

// Returns the admin URL from BENCHFLEET_TEST_DATABASE_URL, or "" when it is not set.
std::string TestServerUrl();

class PgTestDb {
 public:
  // Creates a fresh database named after a random id. Check available() first.
  PgTestDb();
  ~PgTestDb();
  PgTestDb(const PgTestDb&) = delete;
  PgTestDb& operator=(const PgTestDb&) = delete;

  // False when no test server is configured (the test should GTEST_SKIP).
  bool available() const { return !url_.empty(); }

  // A libpq URL of the fresh database.
  const std::string& url() const { return url_; }
  const std::string& name() const { return name_; }

  // Runs one SQL statement and returns the first column of the first row ("" when none).
  std::string QueryValue(const std::string& sql) const;

  // Writes the JSON form of each run's record into `runs.record` where the row keeps only its
  // binary copy (coordinator/migrations/0007_lean_row.sql), so that a test can inspect whole
  // records with SQL (record -> 'requests' ...). Call it after the runs are stored; a NUL reads
  // as U+FFFD, as jsonb cannot hold one. Returns the number of rows filled.
  int FillRecordJson() const;

 private:
  std::string admin_url_;
  std::string name_;
  std::string url_;
};

}  // namespace benchfleet::testing

// Skips the current test when no PostgreSQL is configured.
#define BENCHFLEET_REQUIRE_PG(db)                                                 \
  if (!(db).available()) GTEST_SKIP() << "BENCHFLEET_TEST_DATABASE_URL is not set; " \
                                         "run the suite through scripts/test"

#endif  // BENCHFLEET_TESTS_SUPPORT_PG_TEST_DB_H_
