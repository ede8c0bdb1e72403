// What llama.cpp says about itself in its log (llama-server, llama-cli): the build, the devices
// it found and uses, how many layers it offloaded, the "no usable GPU" warning; and the one rule
// that tells a buffer it reports (`CUDA0 model buffer size = ...`) as device memory, host memory
// or unknown. Shared by the llama-server backend (agent/backends/llama_server) and the guide's
// log reader (synthesis/readers), so both label a buffer the same way. The lines it reads are
// llama.cpp's own words: see tests/fixtures/llama-server/ (captures, and fixtures of GPU builds
// written from llama.cpp's source, marked so). Pure functions; thread-safe.
#ifndef BENCHFLEET_COMMON_LLAMA_CPP_LOG_H_
#define BENCHFLEET_COMMON_LLAMA_CPP_LOG_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "benchfleet/v1/record.pb.h"

namespace benchfleet::llama_cpp {

// One device llama.cpp reported.
struct LogDevice {
  std::string name;         // ggml's device name: "CUDA0", "ROCm1", "Vulkan0", "MTL0", "SYCL0", "CPU"
  std::string description;  // "NVIDIA A100-SXM4-80GB", "Apple M1 Pro", "AMD EPYC 7763" ("" when not printed)
  bool gpu = false;         // a GPU or accelerator (false: the CPU backend)
  std::optional<int64_t> free_mib;  // free memory when the log gives it
  int line = 0;                     // 1-based line of the log that names it
};

// `load_tensors: offloaded 33/33 layers to GPU`.
struct LogOffload {
  int offloaded = 0;
  int total = 0;
  int line = 0;
};

// What the server said it found and did, from its log.
struct LogReport {
  // The `build 10587 (3f545becc) with GNU 12.2.0 for Linux x86_64` text after "build " ("" when
  // the log has no build line; llama-server prints it from -lv 4 on).
  std::string build;
  int build_line = 0;

  // `warning: no usable GPU found, --gpu-layers option will be ignored` (a build without GPU
  // support, or no device it can use): the line as printed, and where.
  std::string no_gpu_warning;
  int no_gpu_line = 0;

  // Every device the log names: the `device_info:` list, `ggml_cuda_init: found N CUDA|ROCm
  // devices` with its `Device i: ...` lines, `ggml_vulkan: i = ...`, Metal's and SYCL's lines,
  // CPU included; one entry per name, first mention.
  std::vector<LogDevice> found;

  // The devices llama.cpp said it uses for the model (`... using device CUDA0 (NVIDIA A100) -
  // 80562 MiB free`), in log order.
  std::vector<LogDevice> used;

  std::optional<LogOffload> offload;

  // True when the log says which devices exist: the no-GPU warning, a device list or a `using
  // device` line. Only then may a buffer be called host memory for not being on a GPU.
  bool reports_devices() const { return !no_gpu_warning.empty() || !found.empty() || !used.empty(); }

  // The GPUs found or used (found first, then used ones not found), each once.
  std::vector<LogDevice> Gpus() const;

  // True when the report says the server has no GPU it can use.
  bool no_usable_gpu() const { return !no_gpu_warning.empty() || (reports_devices() && Gpus().empty()); }
};

// Reads the report out of a whole log. Lines of other shapes are skipped; the timestamp/level
// prefix of -lv logs is optional.
LogReport ParseLogReport(std::string_view log);

// Tells what a buffer (or a row of the `memory breakdown [MiB]` table) named `name` is:
//   MEMORY_KIND_DEVICE_BUFFER  it belongs to a GPU the report names: the device itself ("CUDA0",
//                              "MTL0") or its backend's buffers ("Metal", "Metal_Mapped" of MTL0),
//                              pinned host buffers ("CUDA_Host") excepted;
//   MEMORY_KIND_HOST_BUFFER    host memory: "CPU", "CPU_*", "Host", "*_Host", or, when the report
//                              says which devices exist, any buffer not named after a GPU backend
//                              ("AMX", "CPU_REPACK", ...: every buffer of a CPU-type backend);
//   MEMORY_KIND_BUFFER_UNKNOWN otherwise (a log that names no device; a GPU backend's name the
//                              report does not list): never called device memory on a guess.
// `device_row`: a breakdown row with total/free columns, which llama.cpp prints only for the
// devices the model uses: a device buffer even when no other line names the device.
v1::MemoryKind ClassifyBuffer(std::string_view name, const LogReport& report, bool device_row = false);

// Returns "CUDA0 (NVIDIA A100-SXM4-80GB)", or the name alone without a description.
std::string DescribeDevice(const LogDevice& device);

// The GPUs the server found, for a record's params and the conditions: "CUDA0 (NVIDIA
// A100-SXM4-80GB)" (several joined by "; "), "none (warning: no usable GPU found, ...)" or "none
// (no GPU in the server's device list)", or "" when the log names no device at all.
std::string DevicesText(const LogReport& report);

// "33/33" from `offloaded 33/33 layers to GPU`; "0/0" when the server found no usable GPU (it
// prints no such line then); "" when the log says neither.
std::string OffloadedLayersText(const LogReport& report);

}  // namespace benchfleet::llama_cpp

#endif  // BENCHFLEET_COMMON_LLAMA_CPP_LOG_H_
