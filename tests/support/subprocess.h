// Child processes for integration tests: start a built program with arguments and extra
// environment, send it a signal, wait for it. The destructor kills (SIGKILL) and reaps a child
// still running, so a failing test leaves nothing behind. Not thread-safe.
#ifndef BENCHFLEET_TESTS_SUPPORT_SUBPROCESS_H_
#define BENCHFLEET_TESTS_SUPPORT_SUBPROCESS_H_

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace benchfleet::testing {

class Subprocess {
 public:
  // Starts argv[0] (a path) with argv; env entries are added to the inherited environment.
  // stdout and stderr go to log_path (appended) when it is not empty.
  Subprocess(std::vector<std::string> argv, std::map<std::string, std::string> env = {},
             std::string log_path = "");
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();

  void Signal(int signo);

  // Waits for the child and returns its exit code (128 + signal when killed by one).
  int Wait();

 private:
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

// Returns the path of a built program: $BENCHFLEET_BIN_DIR/name.
std::string BinaryPath(const std::string& name);

// Returns a TCP port on 127.0.0.1 that was free a moment ago.
int FreePort();

// Returns a new empty directory under $TMPDIR (removed by scripts/test with the whole run).
std::string MakeTempDir(const std::string& prefix);

// Returns the pids of the running processes whose command line holds `needle` (e.g. a test's own
// model path: the simulators its agent started, and no other test's). Zombies are not listed: a
// zombie's command line is empty.
std::vector<pid_t> ProcessesNaming(const std::string& needle);

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_SUPPORT_SUBPROCESS_H_
