#include "agent/probes/macos_probe.h"

#if defined(__APPLE__)

#include <sys/sysctl.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "agent/probes/conditions_probe.h"

namespace benchfleet::agent {
namespace {

std::string SysctlString(const char* name) {
  size_t size = 0;
  if (::sysctlbyname(name, nullptr, &size, nullptr, 0) != 0 || size == 0) return "";
  std::string value(size, '\0');
  if (::sysctlbyname(name, value.data(), &size, nullptr, 0) != 0) return "";
  value.resize(size > 0 && value[size - 1] == '\0' ? size - 1 : size);
  return value;
}

template <typename T>
T SysctlNumber(const char* name) {
  T value = 0;
  size_t size = sizeof(value);
  if (::sysctlbyname(name, &value, &size, nullptr, 0) != 0) return 0;
  return value;
}

}  // namespace

absl::Status MacOsProbe::Probe(v1::MachineConditions* conditions) {
  ProbePosixIdentity(conditions);
  conditions->set_os_name("macOS");
  conditions->set_os_version(SysctlString("kern.osproductversion"));
  conditions->set_cpu_model(SysctlString("machdep.cpu.brand_string"));
  conditions->set_logical_cores(static_cast<uint32_t>(SysctlNumber<int32_t>("hw.logicalcpu")));
  conditions->set_memory_bytes(SysctlNumber<uint64_t>("hw.memsize"));
  return absl::OkStatus();
}

}  // namespace benchfleet::agent

#endif  // __APPLE__
