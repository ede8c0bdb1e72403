// Test helpers of the platform tests: fixture files, a scripted CommandRunner, and fake tools
// (shell scripts) in a temp dir used as the search path. Not thread-safe.
#ifndef BENCHFLEET_TESTS_UNIT_AGENT_PLATFORM_FAKE_TOOLS_H_
#define BENCHFLEET_TESTS_UNIT_AGENT_PLATFORM_FAKE_TOOLS_H_

#include <sys/stat.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "agent/probes/command_runner.h"

namespace benchfleet::agent::testing {

inline std::string Fixture(const std::string& relative) {
  std::ifstream in(std::string(BENCHFLEET_SOURCE_DIR) + "/tests/fixtures/" + relative, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::string FixturePath(const std::string& relative) {
  return std::string(BENCHFLEET_SOURCE_DIR) + "/tests/fixtures/" + relative;
}

// Answers each command line (argv joined with spaces) with a scripted output or status.
class ScriptedRunner : public CommandRunner {
 public:
  void Answer(const std::string& command, absl::StatusOr<CommandOutput> output) { answers_[command] = output; }
  absl::StatusOr<CommandOutput> Run(const std::vector<std::string>& argv, absl::Duration) override {
    const std::string command = absl::StrJoin(argv, " ");
    calls.push_back(command);
    auto it = answers_.find(command);
    if (it == answers_.end()) return absl::NotFoundError(argv[0] + ": not found on PATH");
    return it->second;
  }
  std::vector<std::string> calls;

 private:
  std::map<std::string, absl::StatusOr<CommandOutput>> answers_;
};

inline CommandOutput Printed(std::string text, int exit_code = 0) {
  CommandOutput out;
  out.stdout_text = std::move(text);
  out.exit_code = exit_code;
  return out;
}

// Writes an executable shell script named `name` into dir.
inline void WriteTool(const std::string& dir, const std::string& name, const std::string& body) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << "#!/bin/sh\n" << body;
  ::chmod(path.c_str(), 0755);
}

}  // namespace benchfleet::agent::testing

#endif  // BENCHFLEET_TESTS_UNIT_AGENT_PLATFORM_FAKE_TOOLS_H_
