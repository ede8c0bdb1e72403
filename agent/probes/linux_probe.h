// The Linux platform probe: /etc/os-release, uname(2), /proc/cpuinfo, sysconf(3), /proc/meminfo.
// Files are read through the Env under a root directory (tests point it at a fake tree); the
// parsers are exposed for tests. Not thread-safe (one caller at a time); parsers are.
#ifndef BENCHFLEET_AGENT_PROBES_LINUX_PROBE_H_
#define BENCHFLEET_AGENT_PROBES_LINUX_PROBE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agent/probes/conditions_probe.h"
#include "agent/probes/command_runner.h"

namespace benchfleet::agent {

class LinuxProbe : public ConditionsProbe {
 public:
  // root prefixes /etc, /proc and /sys paths; "" is the real file system. tools, when given,
  // runs `lscpu -J` (ProbeCpuHost): the host_attributes, and the CPU model when /proc/cpuinfo
  // names none (most ARM servers).
  explicit LinuxProbe(Env* env, std::string root = "", CommandRunner* tools = nullptr)
      : env_(env), root_(std::move(root)), tools_(tools) {}
  // With tools, also fills host_attributes (HostAttributes of ProbeCpuHost); what it could not
  // read is in notes().
  absl::Status Probe(v1::MachineConditions* conditions) override;
  std::vector<ProbeNote> notes() const override { return notes_; }

 private:
  Env* env_;
  std::string root_;
  CommandRunner* tools_;
  std::vector<ProbeNote> notes_;
};

struct OsRelease {
  std::string name;     // NAME, e.g. "Debian GNU/Linux"
  std::string version;  // VERSION_ID, e.g. "12"
};

// Parses os-release(5) text (KEY=value lines, values optionally quoted).
OsRelease ParseOsRelease(std::string_view text);

// Returns the CPU model from /proc/cpuinfo: "model name" (x86), else "Model" or "Hardware"
// (ARM boards); empty when none is there.
std::string ParseCpuModel(std::string_view cpuinfo);

// Returns MemTotal of /proc/meminfo in bytes; 0 when absent.
uint64_t ParseMemTotalBytes(std::string_view meminfo);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_PROBES_LINUX_PROBE_H_
