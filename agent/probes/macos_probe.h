// The macOS platform probe: sysctl(3) (kern.osproductversion, kern.osrelease,
// machdep.cpu.brand_string, hw.logicalcpu, hw.memsize) and uname(2). Built on macOS only.
// Not thread-safe (one caller at a time).
#ifndef BENCHFLEET_AGENT_PROBES_MACOS_PROBE_H_
#define BENCHFLEET_AGENT_PROBES_MACOS_PROBE_H_

#if defined(__APPLE__)

#include "agent/probes/conditions_probe.h"

namespace benchfleet::agent {

class MacOsProbe : public ConditionsProbe {
 public:
  absl::Status Probe(v1::MachineConditions* conditions) override;
};

}  // namespace benchfleet::agent

#endif  // __APPLE__
#endif  // BENCHFLEET_AGENT_PROBES_MACOS_PROBE_H_
