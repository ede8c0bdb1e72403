// NVIDIA accelerators through nvidia-smi: the conditions (--query-gpu name, driver, memory,
// power limit, max clocks) and readings for the sampler (utilisation, memory used, power,
// temperature, SM clock, clocks event reasons, and --query-compute-apps). Parsers are pure
// functions (tested on real captures in tests/fixtures/nvidia-smi/ and tests/fixtures/probes/);
// NvidiaProbe runs the tool through a CommandRunner with a timeout. A missing tool or an
// output not understood leaves the fields empty and a ProbeNote says why, never a crash.
// NvidiaProbe is used from one thread at a time.
#ifndef BENCHFLEET_AGENT_PROBES_NVIDIA_SMI_H_
#define BENCHFLEET_AGENT_PROBES_NVIDIA_SMI_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/probes/conditions_probe.h"
#include "agent/probes/command_runner.h"
#include "agent/probes/device_monitor.h"

namespace benchfleet::agent {

// The --query-gpu fields of each query, in the order the parsers expect them.
inline constexpr char kNvidiaInfoFields[] =
    "index,name,uuid,driver_version,memory.total,power.limit,clocks.max.sm,clocks.max.memory,pci.bus_id,vbios_version";
inline constexpr char kNvidiaSampleFields[] =
    "index,utilization.gpu,memory.used,power.draw,temperature.gpu,clocks.sm,clocks.max.sm,clocks_event_reasons.active";
// Drivers before 535 know the event reasons by their old name only.
inline constexpr char kNvidiaSampleFieldsLegacy[] =
    "index,utilization.gpu,memory.used,power.draw,temperature.gpu,clocks.sm,clocks.max.sm,clocks_throttle_reasons.active";

// Clocks event reasons that mean the device was slowed down (nvml's
// nvmlClocksEventReason*): SW power cap 0x4, HW slowdown 0x8, SW thermal 0x20, HW thermal 0x40,
// HW power brake 0x80. Idle (0x1), application clocks (0x2), sync boost (0x10) and display clock
// (0x100) are not throttling.
inline constexpr uint64_t kNvidiaThrottleMask = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

// Returns the names of the reasons set in mask, e.g. "sw_thermal_slowdown,hw_slowdown".
std::string NvidiaReasonNames(uint64_t mask);

// One GPU from the info query.
struct NvidiaGpuInfo {
  std::string index;
  std::string name;
  std::string uuid;
  std::string driver;
  std::optional<uint64_t> memory_bytes;
  std::optional<double> power_limit_watts;
  std::optional<double> max_sm_clock_mhz;
  std::optional<double> max_memory_clock_mhz;
  std::string pci_bus_id;
  std::string vbios;
};

// Parses `nvidia-smi --query-gpu=<kNvidiaInfoFields> --format=csv,noheader,nounits`.
// INVALID_ARGUMENT (naming the line) for a line with the wrong number of fields, no lines, or
// a GPU without index or name.
absl::StatusOr<std::vector<NvidiaGpuInfo>> ParseNvidiaGpuInfo(std::string_view text);

// Parses `nvidia-smi --query-gpu=<kNvidiaSampleFields> --format=csv,noheader,nounits` (the
// legacy field list gives the same columns). Placeholders leave a figure empty.
absl::StatusOr<std::vector<DeviceSample>> ParseNvidiaSamples(std::string_view text);

// Parses `nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv[,noheader]
// [,nounits]`: with or without its header line ("pid, process_name, used_gpu_memory [MiB]"),
// with or without units; no line (no process) is an empty list.
absl::StatusOr<std::vector<DeviceProcess>> ParseNvidiaComputeApps(std::string_view text);

// Fills an Accelerator from a parsed GPU (vendor "nvidia", attributes for uuid, power limit,
// max clocks, PCI bus id and VBIOS).
void FillAccelerator(const NvidiaGpuInfo& gpu, v1::Accelerator* accelerator);

class NvidiaProbe : public AcceleratorProbe, public DeviceMonitor {
 public:
  // runner and clock must outlive the probe. timeout bounds each nvidia-smi call.
  NvidiaProbe(CommandRunner* runner, Clock* clock, absl::Duration timeout = absl::Seconds(10))
      : runner_(runner), clock_(clock), timeout_(timeout) {}

  // Appends one Accelerator per GPU. Always OK: when nvidia-smi is missing or its output is not
  // understood, nothing is appended and notes() says why.
  absl::Status Probe(v1::MachineConditions* conditions) override;
  std::vector<ProbeNote> notes() const override { return notes_; }

  // Reads every GPU (sample query) and the compute processes. An error when the sample query
  // fails; a failing process query is a problem of the reading only.
  absl::StatusOr<DeviceReading> Read() override;
  std::string memory_source() const override { return "nvidia-smi --query-gpu=memory.used"; }
  std::string vendor() const override { return "nvidia"; }

 private:
  absl::StatusOr<std::string> RunQuery(const std::vector<std::string>& argv);

  CommandRunner* runner_;
  Clock* clock_;
  absl::Duration timeout_;
  std::vector<ProbeNote> notes_;
  bool legacy_fields_ = false;  // the driver knows clocks_throttle_reasons only
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_PROBES_NVIDIA_SMI_H_
