// Reads the memory llama.cpp reports in llama-server's log: the buffer size lines it prints at
// verbosity 4 (`load_tensors: CUDA0 model buffer size = 1918.35 MiB`, `llama_kv_cache: CPU KV
// buffer size = ...`, `sched_reserve: Metal compute buffer size = ...`, ...) and the
// `memory breakdown [MiB]` table, and turns them into MemoryFigures. These are sizes llama.cpp
// says it allocated, never device memory in use (MEMORY_KIND_DEVICE_USED comes only from a device
// probe). Owner: the llama-server backend. Pure functions; thread-safe.
#ifndef BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_LOG_MEMORY_PARSER_H_
#define BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_LOG_MEMORY_PARSER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "benchfleet/v1/record.pb.h"
#include "common/llama_cpp_log.h"

namespace benchfleet::agent::llama_server {

// One `<name> <class> buffer size = <x> MiB` line.
struct LogBuffer {
  std::string name;   // ggml's buffer name: "CUDA0", "CPU_Mapped", "Metal", "CUDA_Host", "CPU", ...
  std::string klass;  // what it holds: "model", "KV", "compute", "output", "RS"
  double mib = 0;     // as printed (two decimals)
  uint64_t bytes = 0;  // MibToBytes(mib)
  int line = 0;        // 1-based line in the log
};

// One row of the `memory breakdown [MiB]` table (whole MiB, rounded by llama.cpp).
// A device row reads `total = free + (self = model + context + compute) + unaccounted`; a host
// row (Host, CPU_REPACK, ...) only `self = model + context + compute`.
struct BreakdownRow {
  std::string name;         // "CUDA0", "MTL0", "Host", "HTP0-REPACK"
  std::string description;  // the device's description in parentheses ("RTX 5090"), or ""
  bool device_row = false;  // true when the row has total/free/unaccounted
  int64_t total_mib = 0, free_mib = 0, unaccounted_mib = 0;  // device rows only
  int64_t self_mib = 0, model_mib = 0, context_mib = 0, compute_mib = 0;
  int line = 0;
};

struct LogMemory {
  std::vector<LogBuffer> buffers;  // in log order
  // The last table in the log that has rows (a header alone, as in a log cut off at exit, is
  // ignored).
  std::vector<BreakdownRow> breakdown;
};

// Parses every buffer line and breakdown table of a llama-server (or llama-cli) log. Lines of any
// other shape are skipped; the timestamp/level prefix of -lv logs is optional.
LogMemory ParseLogMemory(std::string_view log);

// Returns the bytes of a size printed in MiB: round(mib * 1048576), to the nearest byte. The
// printed value is itself rounded to 0.01 MiB, so the figure is within 5243 bytes of the
// allocation.
uint64_t MibToBytes(double mib);

// Turns the parsed log into memory figures, one per (name, class), sizes of the same name and
// class summed (a model split in several files has several CPU_Mapped model buffers):
//   kind   llama_cpp::ClassifyBuffer of the name against what the log reports of its devices:
//          MEMORY_KIND_DEVICE_BUFFER only for a buffer of a GPU the server reported,
//          MEMORY_KIND_HOST_BUFFER for the CPU-type backends' buffers (CPU, CPU_REPACK, AMX, ...)
//          and pinned host memory, MEMORY_KIND_BUFFER_UNKNOWN when the log does not say
//   scope  "<name> <class>", e.g. "CUDA0 model", "CUDA0 KV", "CPU_Mapped model"
//   source "llama-server log line 116" (lines joined by ", " when summed)
// and, per breakdown row, the row's self column (model + context + compute) as bytes of whole
// MiB: scope "<name> self", source "llama-server log line 23 (memory breakdown [MiB])".
std::vector<v1::MemoryFigure> LogMemoryFigures(const LogMemory& memory, const llama_cpp::LogReport& report);

}  // namespace benchfleet::agent::llama_server

#endif  // BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_LOG_MEMORY_PARSER_H_
