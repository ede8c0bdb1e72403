// AMD accelerators through amd-smi, the successor of rocm-smi (ROCm 6+): parsers of
// `amd-smi static --json` (product name, VBIOS, driver, VRAM total), `amd-smi metric --json` (VRAM
// used, power, temperature, GFX clock and its maximum, GFX activity) and `amd-smi process --json`
// (the processes on each GPU). AmdProbe (rocm_smi.h) uses these when rocm-smi does not answer.
// Pure functions, thread-safe. Fixtures in tests/fixtures/probes/amd/ (written from AMD's
// documented formats only: see its README).
//
// The JSON shapes accepted: ROCm 6.0-6.3 print a list of per-GPU objects; ROCm 6.4+ wrap that
// list as {"gpu_data": [...]}. A figure is {"value": N, "unit": "MB"}, a bare number, or "N/A".
// amd-smi's "MB"/"KB"/"GB" are binary (it divides bytes by 1024), so they count as MiB/KiB/GiB.
#ifndef BENCHFLEET_AGENT_PROBES_AMD_SMI_H_
#define BENCHFLEET_AGENT_PROBES_AMD_SMI_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/probes/device_monitor.h"

namespace benchfleet::agent {

// One GPU of `amd-smi static --json`.
struct AmdSmiGpu {
  std::string index;   // "gpu": 0 -> "0"
  std::string name;    // asic.market_name, else board.product_name
  std::string driver;  // driver.version
  std::string vbios;   // vbios.version, else vbios.part_number
  std::optional<uint64_t> vram_total_bytes;  // vram.size
};

// Parses `amd-smi static --json`. INVALID_ARGUMENT when the text is not JSON, or holds no GPU
// object (one with a "gpu" index).
absl::StatusOr<std::vector<AmdSmiGpu>> ParseAmdSmiStatic(std::string_view text);

// Parses `amd-smi metric --json` into one sample per GPU: memory used (mem_usage.used_vram),
// utilisation (usage.gfx_activity), power (power.socket_power, else current_ or
// average_socket_power), temperature (temperature.hotspot, else edge), the GFX clock and its
// maximum (clock.gfx_0.clk / max_clk; ROCm 6.0: clock.gfx.cur_clk / max_clk). No throttle
// reasons: the sampler infers throttling from the clock against its maximum. vram_totals, when
// given, receives mem_usage.total_vram per GPU (nullopt where absent). INVALID_ARGUMENT as above.
absl::StatusOr<std::vector<DeviceSample>> ParseAmdSmiMetric(std::string_view text,
                                                            std::vector<std::optional<uint64_t>>* vram_totals = nullptr);

// Parses `amd-smi process --json`: every GPU's process_list, each {"process_info": {"name",
// "pid", "mem_usage" | "memory_usage": {"vram_mem"}}}; "No running processes detected" (a
// string in place of the object) and an empty list are no process. A process on several GPUs is
// listed once per GPU. INVALID_ARGUMENT when the text is not JSON or a pid is not a number.
absl::StatusOr<std::vector<DeviceProcess>> ParseAmdSmiProcess(std::string_view text);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_PROBES_AMD_SMI_H_
