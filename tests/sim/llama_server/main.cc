// llama-server-sim: a SIMULATED llama.cpp llama-server for tests (tests/sim/README.md).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/sim/llama_server/llama_server_sim.h"
#include "tests/sim/llama_server/memory_layout.h"
#include "tests/sim/llama_server/sim_log.h"
#include "tests/sim/llama_server/sim_options.h"
#include "tests/sim/llama_server/startup_log.h"

namespace {

int g_shutdown_pipe[2] = {-1, -1};
std::atomic<bool> g_terminating{false};

// llama-server installs its SIGINT/SIGTERM handler only once the model is loaded: before that
// the default action ends the process. After, the first signal shuts down cleanly and a second
// one exits at once.
void OnSignal(int signo) {
  if (!benchfleet::sim::g_server_ready.load()) {
    ::signal(signo, SIG_DFL);
    ::raise(signo);
    return;
  }
  if (g_terminating.exchange(true)) {
    static const char kMsg[] = "Received second interrupt, terminating immediately.\n";
    (void)!::write(STDERR_FILENO, kMsg, sizeof(kMsg) - 1);
    ::_exit(1);
  }
  const char c = 1;
  (void)!::write(g_shutdown_pipe[1], &c, 1);
}

void Print(FILE* f, const std::string& s) {
  std::fwrite(s.data(), 1, s.size(), f);
  std::fflush(f);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace benchfleet::sim;
  const auto start = std::chrono::steady_clock::now();
  // BENCHFLEET_SIM_HOST_ARGS="--sim-gpu-tps 31.5 ..." (space-separated) is appended to the
  // command line: the demo's agents share one machine and one series spec, and each gives the
  // simulator it starts the speed of the host it plays (SIMULATED, like every figure of the sim).
  std::vector<std::string> args(argv, argv + argc);
  if (const char* host = std::getenv("BENCHFLEET_SIM_HOST_ARGS"); host != nullptr) {
    std::string word;
    for (const char* c = host;; ++c) {
      if (*c == ' ' || *c == '\0') {
        if (!word.empty()) args.push_back(word);
        word.clear();
        if (*c == '\0') break;
      } else {
        word += *c;
      }
    }
  }
  std::vector<char*> arg_ptrs;
  for (std::string& a : args) arg_ptrs.push_back(a.data());
  arg_ptrs.push_back(nullptr);
  SimOptions options;
  const ParseResult parsed = ParseCommandLine(static_cast<int>(args.size()), arg_ptrs.data(), &options);
  if (parsed.outcome != ParseOutcome::kRun) {
    if (parsed.version) {
      Print(stderr, "version: " + std::to_string(kBuildNumber) + " (" + kBuildCommit + ")\nbuilt with " +
                        CompilerName() + " for " + TargetName() + "\n");
    } else if (parsed.list_devices) {
      std::string out = "Available devices:\n";
      if (options.sim_gpu_device == "none") {
        out += "  (none)\n";
      } else {
        const DeviceSpec d = GpuSpec(options.sim_gpu_device, options.sim_gpu_memory_mib);
        out += Format("  %s: %s (%lld MiB, %lld MiB free)\n", d.name.c_str(), d.description.c_str(),
                      static_cast<long long>(d.total_bytes / kMiB), static_cast<long long>(d.free_bytes / kMiB));
      }
      Print(stdout, out);
    }
    Print(stdout, parsed.stdout_text);
    Print(stderr, parsed.stderr_text);
    return parsed.outcome == ParseOutcome::kExitOk ? 0 : 1;
  }

  if (::pipe2(g_shutdown_pipe, O_CLOEXEC) != 0) return 1;
  ::signal(SIGPIPE, SIG_IGN);
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);

  SimLog log(options.verbosity, start, options.log_file);
  LlamaServerSim server(options, log, start);
  const int rc = server.Run(g_shutdown_pipe[0]);
  // Request threads may still be sleeping in a generation or hanging on purpose: end the
  // process without waiting for them, as llama-server's own exit does not wait for clients.
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(rc);
}
