// A helper program for child_process_test: starts a child through the agent's process library,
// writes the child's pid to a file, then waits to be killed. The test SIGKILLs this helper and
// checks that the child (the test's grandchild) dies with it (PR_SET_PDEATHSIG), i.e. that a
// server never outlives a killed agent.
// With --hold-peak MIB it is instead the child of the peak-memory tests: it maps MIB MiB, touches
// every page (its peak RSS then holds them), unmaps them (its RSS falls back), prints "freed" on
// stdout and waits to be killed, so a reset peak is clearly below the lifetime one.
// Usage: process_test_helper PID_FILE PROGRAM [ARG...]
//        process_test_helper --hold-peak MIB
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "agent/process/child_process.h"

namespace {

int HoldPeak(const char* mib_text) {
  const size_t bytes = static_cast<size_t>(std::strtoul(mib_text, nullptr, 10)) << 20;
  void* block = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) return 1;
  std::memset(block, 0x5a, bytes);  // every page resident
  ::munmap(block, bytes);
  std::printf("freed\n");
  std::fflush(stdout);
  while (true) ::pause();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--hold-peak") return HoldPeak(argv[2]);
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
