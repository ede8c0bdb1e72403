// AMD accelerators through rocm-smi's JSON output: the conditions (product name, driver, VRAM
// total) and readings for the sampler (VRAM used, power, temperature, SCLK and its maximum, use,
// and the process list of --showpids). MI250X and others report no throttle counters: the
// sampler infers throttling from SCLK against its maximum (device_sampler.h). Parsers are pure
// (fixtures in tests/fixtures/probes/amd/, written from documented output: see its README);
// AmdProbe runs rocm-smi through a CommandRunner and, when rocm-smi does not answer, its
// successor amd-smi (amd_smi.h). Used from one thread at a time.
#ifndef BENCHFLEET_AGENT_PROBES_ROCM_SMI_H_
#define BENCHFLEET_AGENT_PROBES_ROCM_SMI_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/probes/conditions_probe.h"
#include "agent/probes/command_runner.h"
#include "agent/probes/device_monitor.h"

namespace benchfleet::agent {

// One card ("card0", ...) of a rocm-smi --json output.
struct RocmCard {
  std::string index;  // "0" for "card0"
  std::string name;   // "Card series", else "Card model", else "Device Name"
  std::string driver;
  std::string vbios;
  std::optional<uint64_t> vram_total_bytes;
  DeviceSample sample;  // what the same output says about now
};

// Parses `rocm-smi ... --json` (any of the --show* options; absent keys stay empty). The
// driver version is taken from the card or, in newer releases, from the "system" object.
// INVALID_ARGUMENT when the text is not a JSON object or holds no "cardN" object.
absl::StatusOr<std::vector<RocmCard>> ParseRocmSmiJson(std::string_view text);

// Parses `rocm-smi --showpids --json`: {"system": {"PID1234": "name, gpus, vram bytes, sdma,
// cu occupancy"}}; "No KFD PIDs currently running" or no "system" entries is an empty list.
absl::StatusOr<std::vector<DeviceProcess>> ParseRocmSmiPids(std::string_view text);

class AmdProbe : public AcceleratorProbe, public DeviceMonitor {
 public:
  AmdProbe(CommandRunner* runner, Clock* clock, absl::Duration timeout = absl::Seconds(10))
      : runner_(runner), clock_(clock), timeout_(timeout) {}

  // Tries rocm-smi, else amd-smi static. Always OK; when neither answers, one "amd" note gives
  // both reasons ("rocm-smi: not found on PATH; amd-smi: not found on PATH").
  absl::Status Probe(v1::MachineConditions* conditions) override;
  std::vector<ProbeNote> notes() const override { return notes_; }
  // Reads through the tool that answered before (Probe or an earlier Read); the first time,
  // rocm-smi, else amd-smi metric and process. The error gives both reasons when neither answers.
  absl::StatusOr<DeviceReading> Read() override;
  std::string memory_source() const override;
  std::string vendor() const override { return "amd"; }

 private:
  enum class Tool { kUnknown, kRocmSmi, kAmdSmi };

  absl::StatusOr<std::string> RunJson(const std::vector<std::string>& argv);
  absl::Status ProbeRocmSmi(v1::MachineConditions* conditions);
  absl::Status ProbeAmdSmi(v1::MachineConditions* conditions);
  absl::StatusOr<DeviceReading> ReadRocmSmi();
  absl::StatusOr<DeviceReading> ReadAmdSmi();

  CommandRunner* runner_;
  Clock* clock_;
  absl::Duration timeout_;
  std::vector<ProbeNote> notes_;
  Tool tool_ = Tool::kUnknown;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_PROBES_ROCM_SMI_H_
