// CPU-host facts and load: `lscpu -J`, /proc/loadavg, the cpufreq governor and the NUMA nodes
// (/sys/devices/system/...). Parsers are pure (fixtures in tests/fixtures/probes/cpu/); ProbeCpuHost
// reads through the Env (files, under a root for tests) and a CommandRunner (lscpu). Thread-safe
// when its Env and runner are.
#ifndef BENCHFLEET_AGENT_PROBES_CPU_HOST_H_
#define BENCHFLEET_AGENT_PROBES_CPU_HOST_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/probes/command_runner.h"
#include "agent/probes/device_monitor.h"
#include "common/env.h"

namespace benchfleet::agent {

struct LscpuFacts {
  std::string architecture;
  std::string model_name;
  std::optional<uint32_t> cpus;
  std::optional<uint32_t> sockets;
  std::optional<uint32_t> cores_per_socket;
  std::optional<uint32_t> threads_per_core;
  std::optional<uint32_t> numa_nodes;
};

// Parses `lscpu -J`: {"lscpu": [{"field": "CPU(s):", "data": "16"}, ...]}, flat (util-linux
// before 2.37) or with nested "children" (2.37 and later). INVALID_ARGUMENT when it is not that
// shape.
absl::StatusOr<LscpuFacts> ParseLscpuJson(std::string_view text);

struct LoadAverage {
  double one_minute = 0;
  uint32_t runnable = 0;  // runnable scheduling entities now (the one reading counts itself)
  uint32_t total = 0;
};

// Parses /proc/loadavg ("0.52 0.58 0.59 2/1234 5678").
absl::StatusOr<LoadAverage> ParseLoadAvg(std::string_view text);

// Returns how many CPUs a list such as "0-15,32-47" or "3" names; nullopt when malformed.
std::optional<uint32_t> CountCpuList(std::string_view list);

struct CpuHostFacts {
  LscpuFacts lscpu;
  std::string governor;  // scaling_governor of cpu0, e.g. "performance"
  std::optional<uint32_t> numa_nodes;  // /sys/devices/system/node/online
  std::vector<ProbeNote> notes;        // what could not be read, and why
};

// Reads lscpu -J (timeout), root + /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor and
// root + /sys/devices/system/node/online. Never fails: what is missing is a note.
CpuHostFacts ProbeCpuHost(Env* env, CommandRunner* runner, const std::string& root = "",
                          absl::Duration timeout = absl::Seconds(10));

// Returns the facts of MachineConditions.host_attributes: "cpufreq_governor", "numa_nodes",
// "sockets", "cores_per_socket", "threads_per_core", each only when known.
std::map<std::string, std::string> HostAttributes(const CpuHostFacts& facts);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_PROBES_CPU_HOST_H_
