// A helper program for child_process_test: starts a child through the agent's process library,
// writes the child's pid to a file, then waits to be killed. The test SIGKILLs this helper and
// checks that the child (the test's grandchild) dies with it (PR_SET_PDEATHSIG), i.e. that a
// server never outlives a killed agent.
// Usage: process_test_helper PID_FILE PROGRAM [ARG...]
#include <unistd.h>

#include <cstdio>
#include <string>

#include "agent/process/child_process.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PID_FILE PROGRAM [ARG...]\n", argv[0]);
    return 2;
  }
  using namespace benchfleet;
  std::unique_ptr<agent::ProcessLauncher> launcher = agent::NewPosixProcessLauncher(&SystemClock(), Env::Default());
  agent::ProcessOptions options;
  for (int i = 2; i < argc; ++i) options.argv.push_back(argv[i]);
  auto child = launcher->Start(options);
  if (!child.ok()) {
    std::fprintf(stderr, "%s\n", std::string(child.status().message()).c_str());
    return 1;
  }
  if (!Env::Default()->WriteFileAtomically(argv[1], std::to_string((*child)->pid())).ok()) return 1;
  while (true) ::pause();
}
