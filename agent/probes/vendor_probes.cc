#include "agent/probes/vendor_probes.h"

#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/probes/apple_probe.h"
#include "agent/probes/host_load.h"
#include "agent/probes/nvidia_smi.h"
#include "agent/probes/rocm_smi.h"

namespace benchfleet::agent {

CommandRunner* SystemToolRunner() {
  static CommandRunner* const runner = NewPosixCommandRunner().release();
  return runner;
}

std::vector<std::unique_ptr<AcceleratorProbe>> NewVendorProbes(CommandRunner* runner, Clock* clock) {
  std::vector<std::unique_ptr<AcceleratorProbe>> probes;
#if defined(__APPLE__)
  probes.push_back(std::make_unique<AppleProbe>(runner, clock));
#else
  probes.push_back(std::make_unique<NvidiaProbe>(runner, clock));
  probes.push_back(std::make_unique<AmdProbe>(runner, clock));
#endif
  return probes;
}

absl::StatusOr<std::unique_ptr<DeviceMonitor>> FindDeviceMonitor(CommandRunner* runner, Env* env,
                                                                  bool with_cpu_load) {
  Clock* clock = &env->clock();
#if defined(__APPLE__)
  auto apple = std::make_unique<AppleProbe>(runner, clock);
  auto apple_reading = apple->Read();
  if (apple_reading.ok()) return apple;
  if (!with_cpu_load) {
    return absl::NotFoundError(absl::StrCat("no device to sample: apple: ", apple_reading.status().message()));
  }
  auto host = std::make_unique<HostLoadMonitor>(env, clock, ::getpid());
  auto host_reading = host->Read();
  if (host_reading.ok()) return host;
  return absl::NotFoundError(absl::StrCat("no device to sample: apple: ", apple_reading.status().message(),
                                          "; cpu: ", host_reading.status().message()));
#else
  auto nvidia = std::make_unique<NvidiaProbe>(runner, clock);
  auto nvidia_reading = nvidia->Read();
  if (nvidia_reading.ok()) return nvidia;
  auto amd = std::make_unique<AmdProbe>(runner, clock);
  auto amd_reading = amd->Read();
  if (amd_reading.ok()) return amd;
  if (!with_cpu_load) {
    return absl::NotFoundError(absl::StrCat("no device to sample: nvidia: ", nvidia_reading.status().message(),
                                            "; amd: ", amd_reading.status().message()));
  }
  auto host = std::make_unique<HostLoadMonitor>(env, clock, ::getpid());
  auto host_reading = host->Read();
  if (host_reading.ok()) return host;
  return absl::NotFoundError(absl::StrCat("no device to sample: nvidia: ", nvidia_reading.status().message(),
                                          "; amd: ", amd_reading.status().message(),
                                          "; cpu: ", host_reading.status().message()));
#endif
}

}  // namespace benchfleet::agent
