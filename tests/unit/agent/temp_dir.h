// ScopedTempDir: a fresh directory under $TMPDIR (or /tmp) for one test, removed with everything
// in it when the test ends. Not thread-safe.
#ifndef BENCHFLEET_TESTS_UNIT_AGENT_TEMP_DIR_H_
#define BENCHFLEET_TESTS_UNIT_AGENT_TEMP_DIR_H_

#include <string>

namespace benchfleet::agent::testing {

class ScopedTempDir {
 public:
  ScopedTempDir();
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Returns a loopback TCP port that nothing listens on (bound and released a moment ago).
int UnusedLoopbackPort();

}  // namespace benchfleet::agent::testing

#endif  // BENCHFLEET_TESTS_UNIT_AGENT_TEMP_DIR_H_
