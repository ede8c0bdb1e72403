// What the machine probes report, platform-neutral: one reading of every accelerator (or of the
// host, on CPU-only machines) and the processes using them, and the DeviceMonitor interface that
// each vendor implements (nvidia_smi.h, rocm_smi.h). The sampler (device_sampler.h) and the
// record never see which tool produced a reading. Plain data; a monitor is used from one thread.
#ifndef BENCHFLEET_AGENT_PROBES_DEVICE_MONITOR_H_
#define BENCHFLEET_AGENT_PROBES_DEVICE_MONITOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace benchfleet::agent {

// Why a probe left a field empty: e.g. {"nvidia", "nvidia-smi: not found on PATH"}.
struct ProbeNote {
  std::string probe;   // "nvidia", "amd", "apple", "cpu"
  std::string reason;  // what was missing or unexpected
};

// One device at one moment. Every figure is optional: the tool said "[N/A]" or
// "[Not Supported]", or does not report it.
struct DeviceSample {
  std::string device;  // the device's index as the tool numbers it, e.g. "0"
  std::optional<double> utilization_percent;
  std::optional<uint64_t> memory_used_bytes;
  std::optional<double> power_watts;
  std::optional<double> temperature_celsius;
  std::optional<double> sm_clock_mhz;      // NVIDIA clocks.sm, AMD current SCLK
  std::optional<double> max_sm_clock_mhz;  // the device's maximum of the same clock
  // NVIDIA clocks_event_reasons.active (formerly clocks_throttle_reasons.active) bitmask.
  std::optional<uint64_t> throttle_reasons;
  // Non-empty when the tool says the device is slowed down now, in its words (Apple pmset:
  // "CPU_Speed_Limit 80"); vendors with a bitmask or clocks leave it empty.
  std::string slowdown;
};

// A process using a device, as the driver lists it.
struct DeviceProcess {
  int64_t pid = 0;
  std::string name;
  std::optional<uint64_t> used_bytes;
};

// One reading of every device. at is the monitor's clock's Monotonic() when the reading ended.
struct DeviceReading {
  absl::Duration at;
  std::vector<DeviceSample> devices;
  std::vector<DeviceProcess> processes;
  // Parts of the reading that failed (e.g. the process list), while the rest is there.
  std::vector<std::string> problems;
};

class DeviceMonitor {
 public:
  virtual ~DeviceMonitor() = default;
  // Reads every device now. An error when nothing could be read (tool missing, timed out,
  // output not understood), with the reason.
  virtual absl::StatusOr<DeviceReading> Read() = 0;
  // What the figures come from, for MemoryFigure.source, e.g. "nvidia-smi --query-gpu=memory.used".
  virtual std::string memory_source() const = 0;
  // Short vendor name used in scopes and notes: "nvidia", "amd".
  virtual std::string vendor() const = 0;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_PROBES_DEVICE_MONITOR_H_
