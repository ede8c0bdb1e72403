// The benchfleet-coordinator program: flags, start-up errors, serving until SIGTERM, and the
// private PostgreSQL it runs without a database URL. Runs the built binary
// ($BENCHFLEET_BIN_DIR); waits for its "listening on" line, never for a fixed time.
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "coordinator/localdb/local_postgres.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/pg_test_db.h"
#include "tests/support/subprocess.h"

namespace benchfleet::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Waits until the file contains `needle` or the process ended; true when it appeared.
bool WaitForText(const std::string& path, const std::string& needle, Subprocess& process,
                 std::chrono::seconds timeout = std::chrono::seconds(90)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ReadAll(path).find(needle) != std::string::npos) return true;
    if (!process.running()) return ReadAll(path).find(needle) != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

class CoordinatorMainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("coordinator-main-");
    // As root, the private PostgreSQL runs as "postgres", which must reach the data directory.
    ::chmod(dir_.c_str(), 0755);
    log_ = dir_ + "/coordinator.log";
  }

  // Runs the coordinator to completion and returns its exit code.
  int RunToEnd(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(), {BinaryPath("benchfleet-coordinator"), "--plaintext"});
    Subprocess p(args, env, log_);
    return p.Wait();
  }

  std::string dir_;
  std::string log_;
};

TEST_F(CoordinatorMainTest, HelpListsTheFlags) {
  EXPECT_EQ(RunToEnd({"--help"}), 0);
  const std::string help = ReadAll(log_);
  for (const char* flag : {"--listen", "--metrics-listen", "--database-url", "--data-dir",
                           "--database-wait-seconds"}) {
    EXPECT_THAT(help, HasSubstr(flag));
  }
}

TEST_F(CoordinatorMainTest, AnUnknownFlagIsAUsageError) {
  EXPECT_EQ(RunToEnd({"--bogus"}), 2);
  EXPECT_THAT(ReadAll(log_), HasSubstr("The following argument was not expected: --bogus"));
}

TEST_F(CoordinatorMainTest, AnUnreachableDatabaseFailsStartUpWithoutShowingThePassword) {
  EXPECT_EQ(RunToEnd({"--database-wait-seconds", "1", "--listen", "127.0.0.1:0"},
                     {{"BENCHFLEET_DATABASE_URL", "postgresql://bob:hunter2@127.0.0.1:1/bf"}}),
            1);
  const std::string log = ReadAll(log_);
  EXPECT_THAT(log, HasSubstr("benchfleet-coordinator: cannot reach the database at "
                             "postgresql://bob:***@127.0.0.1:1/bf after 1s: connecting: "));
  EXPECT_THAT(log, Not(HasSubstr("hunter2")));
}

TEST_F(CoordinatorMainTest, APasswordOnTheCommandLineIsRefusedWithoutBeingShown) {
  EXPECT_EQ(RunToEnd({"--database-url", "postgresql://bob:hunter2@127.0.0.1:1/bf", "--listen", "127.0.0.1:0"}), 2);
  const std::string log = ReadAll(log_);
  EXPECT_THAT(log, HasSubstr("--database-url holds a password"));
  EXPECT_THAT(log, HasSubstr("--database-url-file or BENCHFLEET_DATABASE_URL"));
  EXPECT_THAT(log, Not(HasSubstr("hunter2")));
}

TEST_F(CoordinatorMainTest, TheUrlFileMayHoldThePasswordAndItIsNeverShown) {
  const std::string file = dir_ + "/db-url";
  {
    std::ofstream out(file);
    out << "postgresql://bob:hunter2@127.0.0.1:1/bf\n";
  }
  EXPECT_EQ(RunToEnd({"--database-url-file", file, "--database-wait-seconds", "1", "--listen", "127.0.0.1:0"}), 1);
  const std::string log = ReadAll(log_);
  EXPECT_THAT(log, HasSubstr("cannot reach the database at postgresql://bob:***@127.0.0.1:1/bf"));
  EXPECT_THAT(log, Not(HasSubstr("hunter2")));
}

TEST_F(CoordinatorMainTest, PlaintextOffLoopbackIsRefusedUnlessInsecure) {
  PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  // RunToEnd passes --plaintext: the address decides.
  EXPECT_EQ(RunToEnd({"--listen", "0.0.0.0:0"}, {{"BENCHFLEET_DATABASE_URL", db.url()}}), 2);
  EXPECT_THAT(ReadAll(log_), HasSubstr("refusing to listen in plaintext on 0.0.0.0:0"));
}

TEST_F(CoordinatorMainTest, WithoutTlsFilesOrPlaintextItSaysWhatToGive) {
  Subprocess p({BinaryPath("benchfleet-coordinator"), "--listen", "127.0.0.1:0"}, {}, log_);
  EXPECT_EQ(p.Wait(), 2);
  EXPECT_THAT(ReadAll(log_), HasSubstr("TLS needs --tls-cert, --tls-key and --tls-client-ca"));
}

TEST_F(CoordinatorMainTest, CaInitWritesTheFilesOnceAndNeverOverwritesTheCa) {
  const std::string out = dir_ + "/ca";
  EXPECT_EQ(RunToEnd({"ca", "init", "--out", out, "--server-name", "coordinator.example", "--server-name", "10.0.0.5"}), 0);
  for (const char* name : {"ca.pem", "ca-key.pem", "server.pem", "server-key.pem"}) {
    EXPECT_TRUE(std::filesystem::exists(out + "/" + name)) << name;
  }
  EXPECT_EQ(std::filesystem::status(out + "/ca-key.pem").permissions() & std::filesystem::perms::group_read,
            std::filesystem::perms::none);
  EXPECT_EQ(RunToEnd({"ca", "init", "--out", out}), 1);
}

TEST_F(CoordinatorMainTest, AnAddressThatCannotBeBoundFailsStartUp) {
  PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  EXPECT_EQ(RunToEnd({"--database-url", db.url(), "--listen", "127.0.0.1:notaport", "--insecure"}), 1);
  EXPECT_THAT(ReadAll(log_), HasSubstr("benchfleet-coordinator: cannot listen on 127.0.0.1:notaport"));
}

TEST_F(CoordinatorMainTest, ServesUntilSigtermAndTakesTheUrlFromTheEnvironment) {
  PgTestDb db;
  BENCHFLEET_REQUIRE_PG(db);
  Subprocess p({BinaryPath("benchfleet-coordinator"), "--plaintext", "--listen", "127.0.0.1:0", "--metrics-listen",
                "127.0.0.1:0"},
               {{"BENCHFLEET_DATABASE_URL", db.url()}}, log_);
  ASSERT_TRUE(WaitForText(log_, "benchfleet-coordinator listening on 127.0.0.1:", p)) << ReadAll(log_);
  EXPECT_EQ(db.QueryValue("SELECT string_agg(name, ',' ORDER BY version) FROM schema_migrations"),
            "0001_init,0002_fleet,0003_record_pb,0004_auth,0005_headline,0006_content_hash,0007_lean_row");
  p.Signal(SIGTERM);
  EXPECT_EQ(p.Wait(), 0);
  EXPECT_THAT(ReadAll(log_), HasSubstr("SIGTERM received: shutting down"));
}

TEST_F(CoordinatorMainTest, WithoutAUrlItRunsAPrivatePostgresOnASocketOnly) {
  if (!coordinator::FindPostgresBinDir().ok()) GTEST_SKIP() << "no PostgreSQL server binaries";
  const std::string data = dir_ + "/data";
  const std::vector<std::string> args = {BinaryPath("benchfleet-coordinator"), "--plaintext", "--listen",
                                         "127.0.0.1:0", "--data-dir", data};
  const std::map<std::string, std::string> no_url = {{"BENCHFLEET_DATABASE_URL", ""}};
  {
    Subprocess p(args, no_url, log_);
    ASSERT_TRUE(WaitForText(log_, "benchfleet-coordinator listening on", p)) << ReadAll(log_);
    struct stat st;
    EXPECT_EQ(::stat((data + "/pgdata/PG_VERSION").c_str(), &st), 0);
    EXPECT_EQ(::stat((data + "/.s.PGSQL.5432").c_str(), &st), 0);
    EXPECT_THAT(ReadAll(data + "/pgdata/postmaster.opts"), HasSubstr("\"listen_addresses=\""));
    p.Signal(SIGTERM);
    EXPECT_EQ(p.Wait(), 0) << ReadAll(log_);
    EXPECT_NE(::stat((data + "/pgdata/postmaster.pid").c_str(), &st), 0);
  }
  // A second start finds the cluster and its schema and goes straight to serving.
  const std::string second_log = dir_ + "/second.log";
  Subprocess p(args, no_url, second_log);
  ASSERT_TRUE(WaitForText(second_log, "benchfleet-coordinator listening on", p)) << ReadAll(second_log);
  p.Signal(SIGINT);
  EXPECT_EQ(p.Wait(), 0) << ReadAll(second_log);
  EXPECT_THAT(ReadAll(second_log), HasSubstr("SIGINT received: shutting down"));
  EXPECT_THAT(ReadAll(data + "/localdb.log"), Not(HasSubstr("initdb: error")));
}

}  // namespace
}  // namespace benchfleet::testing
