// Apple silicon: sysctl (machdep.cpu.brand_string, hw.memsize, hw.ncpu), system_profiler
// SPHardwareDataType SPDisplaysDataType -json (chip, GPU cores) for the conditions, and
// `pmset -g therm` (thermal and performance warning levels, CPU speed limit) sampled during runs.
// The GPU shares the host's unified memory: its Accelerator carries hw.memsize and says so.
// Parsers are pure and build everywhere (fixtures in tests/fixtures/probes/apple/, written from
// documented output); AppleProbe runs the tools through a CommandRunner. One thread at a time.
#ifndef BENCHFLEET_AGENT_PROBES_APPLE_PROBE_H_
#define BENCHFLEET_AGENT_PROBES_APPLE_PROBE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "agent/probes/conditions_probe.h"
#include "agent/probes/command_runner.h"
#include "agent/probes/device_monitor.h"

namespace benchfleet::agent {

struct SysctlFacts {
  std::string cpu_brand;    // machdep.cpu.brand_string, e.g. "Apple M1 Pro"
  uint64_t memory_bytes = 0;  // hw.memsize
  uint32_t logical_cpus = 0;  // hw.ncpu
};

// Parses `sysctl -n machdep.cpu.brand_string hw.memsize hw.ncpu`: three lines, in that order.
absl::StatusOr<SysctlFacts> ParseSysctlFacts(std::string_view text);

struct AppleHardware {
  std::string chip;          // SPHardwareDataType chip_type, e.g. "Apple M1 Pro"
  std::string model;         // machine_model, e.g. "MacBookPro18,3"
  std::string gpu_name;      // SPDisplaysDataType sppci_model
  std::optional<uint32_t> gpu_cores;  // sppci_cores
  std::string metal_family;  // spdisplays_mtlgpufamilysupport, e.g. "spdisplays_metal3"
};

// Parses `system_profiler SPHardwareDataType SPDisplaysDataType -json`. INVALID_ARGUMENT when it is
// not JSON or names neither a chip nor a GPU.
absl::StatusOr<AppleHardware> ParseSystemProfilerJson(std::string_view text);

struct ThermalState {
  int thermal_warning_level = 0;      // 0 when "No thermal warning level has been recorded"
  int performance_warning_level = 0;  // likewise
  std::optional<int> cpu_speed_limit;  // CPU_Speed_Limit, percent
  // "" when nothing is slowed down, else e.g. "CPU_Speed_Limit 80, thermal warning level 1".
  std::string Slowdown() const;
};

// Parses `pmset -g therm`. INVALID_ARGUMENT when no line is one pmset writes.
absl::StatusOr<ThermalState> ParsePmsetTherm(std::string_view text);

// Conditions (AcceleratorProbe: the Apple GPU) and readings (DeviceMonitor: pmset thermal state,
// the only figure macOS gives without root; no power, so no energy figure).
class AppleProbe : public AcceleratorProbe, public DeviceMonitor {
 public:
  AppleProbe(CommandRunner* runner, Clock* clock, absl::Duration timeout = absl::Seconds(20))
      : runner_(runner), clock_(clock), timeout_(timeout) {}
  absl::Status Probe(v1::MachineConditions* conditions) override;  // always OK; notes() say why not
  std::vector<ProbeNote> notes() const override { return notes_; }
  absl::StatusOr<DeviceReading> Read() override;
  std::string memory_source() const override { return "pmset -g therm"; }
  std::string vendor() const override { return "apple"; }

 private:
  absl::StatusOr<std::string> RunTool(const std::vector<std::string>& argv);

  CommandRunner* runner_;
  Clock* clock_;
  absl::Duration timeout_;
  std::vector<ProbeNote> notes_;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_PROBES_APPLE_PROBE_H_
