#include "agent/probes/conditions_probe.h"

#include <sys/utsname.h>
#include <unistd.h>

#include "agent/probes/linux_probe.h"
#include "agent/probes/macos_probe.h"
#include "agent/probes/vendor_probes.h"
#include "common/conditions_fingerprint.h"
#include "common/version.h"

namespace benchfleet::agent {

void ProbePosixIdentity(v1::MachineConditions* conditions) {
  struct utsname uts;
  if (::uname(&uts) == 0) {
    conditions->set_kernel(uts.release);
    conditions->set_architecture(uts.machine);
  }
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) conditions->set_hostname(host);
}

std::unique_ptr<ConditionsProbe> NewPlatformProbe(Env* env) {
#if defined(__APPLE__)
  return std::make_unique<MacOsProbe>();
#else
  return std::make_unique<LinuxProbe>(env, "", SystemToolRunner());
#endif
}

std::vector<std::unique_ptr<AcceleratorProbe>> NewAcceleratorProbes(Env* env) {
  return NewVendorProbes(SystemToolRunner(), &env->clock());
}

absl::StatusOr<v1::MachineConditions> CaptureConditions(
    ConditionsProbe& platform, const std::vector<std::unique_ptr<AcceleratorProbe>>& accelerators,
    const std::map<std::string, std::string>& labels, Clock& clock, std::vector<ProbeNote>* notes) {
  v1::MachineConditions conditions;
  auto keep_notes = [&](const std::vector<ProbeNote>& found) {
    for (const ProbeNote& note : found) {
      v1::ProbeNote* stored = conditions.add_probe_notes();
      stored->set_probe(note.probe);
      stored->set_reason(note.reason);
      if (notes != nullptr) notes->push_back(note);
    }
  };
  if (auto s = platform.Probe(&conditions); !s.ok()) return s;
  keep_notes(platform.notes());
  for (const auto& probe : accelerators) {
    if (auto s = probe->Probe(&conditions); !s.ok()) return s;
    keep_notes(probe->notes());
  }
  conditions.mutable_labels()->insert(labels.begin(), labels.end());
  conditions.set_agent_version(kVersion);
  const absl::Time now = clock.Now();
  const int64_t seconds = absl::ToUnixSeconds(now);
  conditions.mutable_capture_time()->set_seconds(seconds);
  conditions.mutable_capture_time()->set_nanos(
      static_cast<int32_t>(absl::ToInt64Nanoseconds(now - absl::FromUnixSeconds(seconds))));
  conditions.set_fingerprint(ConditionsFingerprint(conditions));
  return conditions;
}

absl::StatusOr<v1::MachineConditions> CaptureMachineConditions(
    Env* env, const std::map<std::string, std::string>& labels, std::vector<ProbeNote>* notes) {
  auto platform = NewPlatformProbe(env);
  return CaptureConditions(*platform, NewAcceleratorProbes(env), labels, env->clock(), notes);
}

}  // namespace benchfleet::agent
