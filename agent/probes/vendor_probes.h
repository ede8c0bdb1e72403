// The vendor probes of this machine, chosen at run time: the accelerator probes for the
// conditions (NVIDIA, AMD) and the DeviceMonitor the sampler reads during runs. The rest of the
// agent asks here and never names a vendor. Thread-safe.
#ifndef BENCHFLEET_AGENT_PROBES_VENDOR_PROBES_H_
#define BENCHFLEET_AGENT_PROBES_VENDOR_PROBES_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/probes/conditions_probe.h"
#include "agent/probes/command_runner.h"
#include "agent/probes/device_monitor.h"

namespace benchfleet::agent {

// Returns the process-wide runner of real tools (the agent's $PATH), never destroyed.
CommandRunner* SystemToolRunner();

// Returns the accelerator probes to try on this platform (Linux: NVIDIA, AMD; macOS: Apple). Each appends nothing and leaves a note when its tool is absent.
std::vector<std::unique_ptr<AcceleratorProbe>> NewVendorProbes(CommandRunner* runner, Clock* clock);

// Returns the monitor of the first vendor whose tool answers a reading (Linux: NVIDIA, then AMD,
// then, only with with_cpu_load, the host's CPU load from /proc; macOS: Apple's pmset, then, only
// with with_cpu_load, the host's CPU load from host_statistics), on env's
// clock. NOT_FOUND, with each one's reason, when none does: then there is nothing to sample.
absl::StatusOr<std::unique_ptr<DeviceMonitor>> FindDeviceMonitor(CommandRunner* runner, Env* env,
                                                                  bool with_cpu_load = true);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_PROBES_VENDOR_PROBES_H_
