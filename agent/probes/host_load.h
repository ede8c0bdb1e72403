// HostLoadMonitor: the CPU host's own "device": how busy the CPUs were between two readings
// and which processes outside the agent's tree used CPU meanwhile, so a run on a CPU host is
// flagged CONTENDED the way a GPU run is (device_sampler.h). One interface, the implementation
// chosen at compile time: Linux reads /proc/stat and /proc/PID/stat through the Env, under a root
// for tests (host_load.cc); macOS, without /proc, host_statistics(HOST_CPU_LOAD_INFO),
// proc_listallpids, proc_pidinfo and proc_pid_rusage (host_load_macos.cc: not compiled or run on
// the Linux build machine, see README.md here). Used from one thread at a time.
#ifndef BENCHFLEET_AGENT_PROBES_HOST_LOAD_H_
#define BENCHFLEET_AGENT_PROBES_HOST_LOAD_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "agent/probes/device_monitor.h"
#include "common/clock.h"
#include "common/env.h"

namespace benchfleet::agent {

// The first ("cpu ") line of /proc/stat, in clock ticks summed over every CPU.
struct CpuTimes {
  uint64_t busy = 0;   // user + nice + system + irq + softirq + steal
  uint64_t total = 0;  // busy + idle + iowait
  uint32_t cpus = 0;   // "cpuN" lines
};

// Parses /proc/stat. INVALID_ARGUMENT when its "cpu " line is missing or short.
absl::StatusOr<CpuTimes> ParseProcStatCpu(std::string_view text);

struct ProcessTimes {
  std::string name;    // comm, without its parentheses
  int64_t parent = 0;
  uint64_t ticks = 0;  // utime + stime
};

// Parses /proc/PID/stat. nullopt when malformed.
std::optional<ProcessTimes> ParseProcessTimes(std::string_view stat);

class HostLoadMonitor : public DeviceMonitor {
 public:
  // self: the agent's pid (its tree is not contention). A process of another tree that used at
  // least min_cpu_percent of one CPU between two readings is listed in the reading's processes.
  HostLoadMonitor(Env* env, Clock* clock, int64_t self, std::string root = "", double min_cpu_percent = 5);

  // The first reading has no interval yet: no utilisation and no process.
  absl::StatusOr<DeviceReading> Read() override;
  std::string memory_source() const override;  // Linux "/proc/stat"; macOS "host_statistics(HOST_CPU_LOAD_INFO)"
  std::string vendor() const override { return "cpu"; }

 private:
  Env* env_;
  Clock* clock_;
  int64_t self_;
  std::string root_;
  double min_cpu_percent_;
  std::optional<CpuTimes> last_cpu_;
  std::map<int64_t, uint64_t> last_ticks_;  // pid -> utime + stime at the last reading (macOS: ns)
  absl::Duration last_at_;                   // macOS: the clock at the last reading
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_PROBES_HOST_LOAD_H_
