// A PostgreSQL server of a test's own, for tests that stop and restart the database under a
// running coordinator (the shared server of scripts/test must stay up for the other tests).
// Uses scripts/lib/pg.sh. Stopped and removed by the destructor. Not thread-safe.
#ifndef BENCHFLEET_TESTS_SUPPORT_PG_SERVER_H_
#define BENCHFLEET_TESTS_SUPPORT_PG_SERVER_H_

#include <string>

namespace benchfleet::testing {

class PgServer {
 public:
  PgServer();
  ~PgServer();
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  // Initialises and starts the server in a new directory. False (with a message on stderr) when
  // that fails.
  bool Start();
  // Stops the server (fast shutdown: open connections are cut).
  bool Stop();
  // Starts the stopped server again on the same port.
  bool Resume();

  // URL of the "postgres" database as the superuser.
  std::string url() const;

 private:
  bool RunScript(const std::string& body, std::string* output);

  std::string dir_;
  int port_ = 0;
};

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_SUPPORT_PG_SERVER_H_
