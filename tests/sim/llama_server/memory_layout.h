// Where the simulated model's memory goes (model weights, KV cache, output and compute buffers;
// host or GPU) and the log lines llama.cpp prints about it: the `<name> model|KV|compute buffer
// size = X MiB` lines and the `common_memory_breakdown_print` table, formatted with llama.cpp's
// own format strings. The model is the captured tiny llama (2 layers, n_embd 64, 32000-token
// vocabulary) with its tensor bytes set by --sim-model-bytes. Owner: tests/sim. Pure;
// thread-safe.
#ifndef BENCHFLEET_TESTS_SIM_LLAMA_SERVER_MEMORY_LAYOUT_H_
#define BENCHFLEET_TESTS_SIM_LLAMA_SERVER_MEMORY_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tests/sim/llama_server/sim_options.h"

namespace benchfleet::sim {

inline constexpr int64_t kMiB = 1024 * 1024;

// The simulated model's hyperparameters (the captured tiny-random-llama, trained context 4096).
inline constexpr int kNLayer = 2;
inline constexpr int kNEmbd = 64;
inline constexpr int kNCtxTrain = 4096;

struct DeviceSpec {
  std::string name;         // "CUDA0", "ROCm0", "Vulkan0", "Metal"
  std::string description;  // "NVIDIA GeForce RTX 4090"
  std::string pci;          // "0000:01:00.0"
  std::string host_buffer;  // the pinned host buffer type: "CUDA_Host", "ROCm_Host", ..., "CPU"
  int64_t total_bytes = 0;
  int64_t free_bytes = 0;   // before the model is loaded
};

// Returns the simulated GPU called `name`; memory_mib > 0 replaces its total memory.
DeviceSpec GpuSpec(const std::string& name, int64_t memory_mib);

struct HostInfo {
  std::string cpu_name;  // /proc/cpuinfo "model name"
  int64_t total_bytes = 0;
};

// Reads the host's CPU name and memory (/proc/cpuinfo, /proc/meminfo) like ggml's CPU backend.
HostInfo ReadHostInfo();

struct MemoryLayout {
  bool gpu_build = false;     // false: a CPU-only build (--sim-gpu-device none)
  DeviceSpec gpu;             // gpu_build only
  int n_gpu_layers_used = 0;  // layers offloaded: 0 .. kNLayer + 1 (the output layer counts)
  int n_gpu_layers_requested = 0;
  bool fit_reduced_layers = false;  // the fit step lowered n_gpu_layers (--sim-fit-gpu-layers)
  uint32_t n_ctx = 0;         // total cells
  uint32_t n_ctx_seq = 0;     // per slot
  uint32_t n_seq = 0;         // slots
  bool kv_unified = true;
  uint32_t n_batch = 0;
  uint32_t n_ubatch = 0;
  std::string type_k, type_v;
  int64_t model_bytes = 0;
  int64_t model_host = 0, model_dev = 0;
  int64_t k_bytes = 0, v_bytes = 0;  // whole KV cache
  int64_t kv_host = 0, kv_dev = 0;
  int64_t output_bytes = 0;          // on the host buffer
  int64_t compute_host = 0, compute_dev = 0;

  bool offloaded() const { return gpu_build && n_gpu_layers_used > 0; }
  // The host buffer type holding the output and host compute buffers.
  std::string host_buffer() const { return offloaded() ? gpu.host_buffer : "CPU"; }
};

// Derives the layout from the command line.
MemoryLayout ComputeLayout(const SimOptions& options);

// The fit step's lines after the breakdown table when it lowers n_gpu_layers (llama.cpp's
// common_params_fit_impl wording; written from its source, fit.cpp, not captured).
std::vector<std::string> FitLayerLines(const MemoryLayout& m, int64_t context_size_given);
// `load_tensors: offload... ` and `load_tensors: <name> model buffer size = X MiB` lines.
std::vector<std::string> ModelBufferLines(const MemoryLayout& m);
// `llama_context: <host>  output buffer size = X MiB`.
std::string OutputBufferLine(const MemoryLayout& m);
// `llama_kv_cache: <name> KV buffer size = X MiB` lines and the `llama_kv_cache: size = ...` line.
std::vector<std::string> KvBufferLines(const MemoryLayout& m);
// `sched_reserve: <name> compute buffer size = X MiB` lines.
std::vector<std::string> ComputeBufferLines(const MemoryLayout& m);

// The `common_memory_breakdown_print: | ... |` table (without the log prefix). Before the load
// (`after_load` false) the device's free memory is what it had; after, less what the model took.
std::vector<std::string> BreakdownTable(const MemoryLayout& m, bool after_load);

// The lines of llama.cpp's fit step that follow the table.
std::vector<std::string> FitVerdictLines(const MemoryLayout& m, const HostInfo& host);

}  // namespace benchfleet::sim

#endif  // BENCHFLEET_TESTS_SIM_LLAMA_SERVER_MEMORY_LAYOUT_H_
