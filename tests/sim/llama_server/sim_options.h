// The command line of the llama-server simulator: the subset of llama-server's flags it honours
// (same names, same defaults, same error messages), the flags it accepts and ignores, and its own
// `--sim-*` controls. Owner: tests/sim. Pure; thread-safe.
#ifndef BENCHFLEET_TESTS_SIM_LLAMA_SERVER_SIM_OPTIONS_H_
#define BENCHFLEET_TESTS_SIM_LLAMA_SERVER_SIM_OPTIONS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace benchfleet::sim {

// What the simulator does wrong on purpose (--sim-fail MODE [N]).
enum class FailMode {
  kNone,
  kExitDuringLoad,   // logs part of the load, then a load error, exits 1 before ready
  kNeverReady,       // /health answers 503 "Loading model" forever
  kDieOnRequest,     // aborts (SIGABRT) during the Nth generation request
  kHangOnRequest,    // never answers the Nth generation request
  kHttp500OnRequest,  // answers the Nth with 500 "Compute error."
  kGarbageOnRequest,  // answers the Nth with 200 and a body that is not JSON
  kTruncatedOnRequest,  // sends a Content-Length larger than the body, then closes
  kCacheHitOnRequest,   // reports timings.cache_n > 0 on the Nth although cache_prompt is false
};

struct SimOptions {
  // --- llama-server's own flags ---
  std::string model_path;         // -m
  std::vector<std::string> aliases;  // -a/--alias (comma-separated)
  std::string host = "127.0.0.1";
  int port = 8080;
  int ctx_size = 0;               // -c; 0 = the model's training context
  int n_gpu_layers = -1;          // -ngl; -1 = auto (all on a GPU build)
  bool n_gpu_layers_given = false;
  bool device_none = false;       // -dev none
  int verbosity = 3;              // -lv
  bool metrics = false;           // --metrics
  bool slots = true;              // --slots / --no-slots
  bool props = false;             // --props
  bool webui = true;              // --no-webui
  int n_parallel = -1;            // -np; -1 = auto (4 slots, unified KV cache)
  bool kv_unified = false;        // -kvu
  int n_threads = -1;             // -t
  int n_threads_http = -1;        // --threads-http
  int n_batch = 2048;             // -b
  int n_ubatch = 512;             // -ub
  std::string cache_type_k = "f16";  // -ctk
  std::string cache_type_v = "f16";  // -ctv
  std::string api_key;            // --api-key
  std::string log_file;           // --log-file
  // Server-wide sampling defaults (requests override them).
  int64_t seed = -1;              // -s/--seed; -1 = LLAMA_DEFAULT_SEED (4294967295)
  float temperature = 0.8f;       // --temp
  int top_k = 40;                 // --top-k
  float top_p = 0.95f;            // --top-p
  float min_p = 0.05f;            // --min-p
  int n_predict = -1;             // -n
  std::vector<std::string> deprecations;  // DEPRECATED lines llama-server prints for old flags

  // --- the simulator's controls ---
  int64_t sim_load_ms = 300;
  double sim_gpu_tps = 52.9;      // decode tokens/s with layers offloaded
  double sim_cpu_tps = 9.6;       // decode tokens/s on the CPU
  double sim_prompt_tps = 0;      // prompt tokens/s; 0 = 20 x the decode rate
  std::map<int64_t, double> sim_throttle;  // generation request number -> rate factor
  std::set<int64_t> sim_output_drift;      // generation request numbers whose content another seed gives
  std::string sim_gpu_device = "CUDA0";    // "none" = a CPU-only build
  int64_t sim_model_bytes = 8357120;       // the captured tiny model's tensor bytes
  int64_t sim_gpu_memory_mib = 0;          // 0 = the device's default
  // -1: the fit step keeps every layer. N >= 0: with -ngl unset or auto, llama.cpp's automatic
  // fitting (-fit, on by default) keeps only N layers on the GPU, as when its memory is short.
  int sim_fit_gpu_layers = -1;
  FailMode sim_fail = FailMode::kNone;
  int64_t sim_fail_n = 0;
};

enum class ParseOutcome { kRun, kExitOk, kExitError };

struct ParseResult {
  ParseOutcome outcome = ParseOutcome::kRun;
  std::string stdout_text;  // --help
  std::string stderr_text;  // errors ("error: invalid argument: --x")
  bool list_devices = false;  // --list-devices: the caller prints the devices, exits 0
  bool version = false;       // --version: the caller prints the version, exits 0
};

// Parses argv like llama-server: unknown flags are fatal, a missing or malformed value names the
// flag. Does not check the model file (llama-server only finds out when it loads it).
ParseResult ParseCommandLine(int argc, const char* const* argv, SimOptions* options);

// Returns the --help text.
std::string HelpText();

// Returns the FailMode for "die-on-request" etc., or false.
bool ParseFailMode(const std::string& name, FailMode* mode, bool* needs_n);

}  // namespace benchfleet::sim

#endif  // BENCHFLEET_TESTS_SIM_LLAMA_SERVER_SIM_OPTIONS_H_
