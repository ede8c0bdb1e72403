// The lines llama-server logs while it starts, loads the model, fails to load it and shuts down,
// copied from tests/fixtures/llama-server/startup.log (default verbosity) and
// startup_verbose_lv4.log (-lv 4) with the model path, context, slots and buffer sizes filled in.
// Owner: tests/sim. Not thread-safe (the start-up runs on one thread).
#ifndef BENCHFLEET_TESTS_SIM_LLAMA_SERVER_STARTUP_LOG_H_
#define BENCHFLEET_TESTS_SIM_LLAMA_SERVER_STARTUP_LOG_H_

#include <string>

#include "tests/sim/llama_server/memory_layout.h"
#include "tests/sim/llama_server/sim_log.h"
#include "tests/sim/llama_server/sim_options.h"

namespace benchfleet::sim {

// The build the simulator claims: llama.cpp b10587 (the captures'), commit replaced by a marker.
inline constexpr int kBuildNumber = 10587;
inline constexpr const char* kBuildCommit = "benchfleet-sim (SIMULATED)";

// Returns "b10587-benchfleet-sim (SIMULATED)", what /props calls build_info.
std::string BuildInfo();
// Returns "GNU 12.2.0" and "Linux x86_64" as llama.cpp's build line names them.
std::string CompilerName();
std::string TargetName();

class StartupLog {
 public:
  StartupLog(SimLog& log, const SimOptions& options, const MemoryLayout& layout, const HostInfo& host)
      : log_(log), o_(options), m_(layout), host_(host) {}

  // Everything before the HTTP socket is bound: GPU warnings, build, verbosity, devices, CORS.
  void Preamble();
  // The bind failure and exit lines.
  void BindFailed();
  // `loading model '...'` and the start of the fit step (where a missing file is found).
  void LoadBegins();
  // The fit step's memory table and verdict, then the model loader's lines up to
  // `load_tensors: loading model tensors...` (then the weights load: where the simulator spends
  // --sim-load-ms).
  void LoaderMetadata();
  // Buffers, context, slots: everything from the model buffers to `model loaded`/`listening on`.
  void LoadCompletes(const std::string& listening_url);
  // The failure lines for a model file that cannot be opened (`reason` as strerror gives it).
  void ModelFileFailed(const std::string& reason);
  // The failure lines for an allocation that fails half-way through the load (exit-during-load).
  void AllocationFailed();
  // `cleaning up before exit...` (and at -lv 4 the memory breakdown table).
  void Shutdown();

 private:
  void ExitAfterLoadError();

  SimLog& log_;
  const SimOptions& o_;
  const MemoryLayout& m_;
  const HostInfo& host_;
};

}  // namespace benchfleet::sim

#endif  // BENCHFLEET_TESTS_SIM_LLAMA_SERVER_STARTUP_LOG_H_
