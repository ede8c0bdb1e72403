// The conditions a machine measures under (benchfleet.v1.MachineConditions): one platform probe
// per OS (Linux, macOS) for host facts, plus accelerator probes (one per vendor, added by later
// work) behind one interface, and CaptureConditions() that adds labels, version, time and the
// fingerprint. Probes are owned by their caller and not thread-safe; CaptureConditions is.
#ifndef BENCHFLEET_AGENT_PROBES_CONDITIONS_PROBE_H_
#define BENCHFLEET_AGENT_PROBES_CONDITIONS_PROBE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/probes/device_monitor.h"
#include "benchfleet/v1/conditions.pb.h"
#include "common/clock.h"
#include "common/env.h"

namespace benchfleet::agent {

// Host facts: hostname, OS name and version, kernel, architecture, CPU model, logical cores,
// memory.
class ConditionsProbe {
 public:
  virtual ~ConditionsProbe() = default;
  virtual absl::Status Probe(v1::MachineConditions* conditions) = 0;
  // Why the last Probe left fields empty; empty when it read everything it knows.
  virtual std::vector<ProbeNote> notes() const { return {}; }
};

// One vendor's accelerators (nvidia-smi, rocm-smi, Metal, ...).
class AcceleratorProbe {
 public:
  virtual ~AcceleratorProbe() = default;
  // Appends the devices found to conditions->accelerators(); OK and nothing appended when the
  // vendor's driver or tools are absent.
  virtual absl::Status Probe(v1::MachineConditions* conditions) = 0;
  // Why the last Probe left fields empty (tool missing, output not understood); empty when it
  // filled everything it knows.
  virtual std::vector<ProbeNote> notes() const { return {}; }
};

// Fills what every POSIX system reports the same way: hostname, kernel release and machine
// architecture (uname(2), gethostname(2)). The platform probes call it first.
void ProbePosixIdentity(v1::MachineConditions* conditions);

// Returns the probe of the platform this was built for (Linux or macOS).
std::unique_ptr<ConditionsProbe> NewPlatformProbe(Env* env);

// Returns the accelerator probes of this platform (agent/probes/vendor_probes.h: NVIDIA and
// AMD on Linux, run through the agent's $PATH with a timeout each).
std::vector<std::unique_ptr<AcceleratorProbe>> NewAcceleratorProbes(Env* env);

// Runs the probes, then sets labels, agent_version, capture_time (from clock) and fingerprint.
// Every probe's notes (why a field stayed empty) go to probe_notes, platform probe first; they
// are also appended to notes when given.
absl::StatusOr<v1::MachineConditions> CaptureConditions(
    ConditionsProbe& platform, const std::vector<std::unique_ptr<AcceleratorProbe>>& accelerators,
    const std::map<std::string, std::string>& labels, Clock& clock, std::vector<ProbeNote>* notes = nullptr);

// Captures this machine's conditions with the platform's probes and env's clock.
absl::StatusOr<v1::MachineConditions> CaptureMachineConditions(
    Env* env, const std::map<std::string, std::string>& labels, std::vector<ProbeNote>* notes = nullptr);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_PROBES_CONDITIONS_PROBE_H_
