// macOS implementation of HostLoadMonitor::Read (host_load.h): there is no /proc, so the CPUs'
// ticks come from host_statistics(HOST_CPU_LOAD_INFO) and each process's CPU time, parent and
// name from proc_listallpids, proc_pid_rusage (ri_user_time + ri_system_time, in Mach absolute
// time units, converted with mach_timebase_info) and proc_pidinfo(PROC_PIDTBSDINFO). NOT
// VERIFIED: the Linux build machine neither compiles nor runs this file (see README.md here).
#include "agent/probes/host_load.h"

#if defined(__APPLE__)

#include <libproc.h>
#include <mach/mach.h>
#include <mach/mach_time.h>
#include <sys/proc_info.h>
#include <sys/resource.h>
#include <sys/sysctl.h>

#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace benchfleet::agent {
namespace {

struct MacProcess {
  std::string name;
  int64_t parent = 0;
  uint64_t cpu_ns = 0;  // user + system
};

absl::StatusOr<CpuTimes> HostCpuTimes() {
  host_cpu_load_info_data_t load = {};
  mach_msg_type_number_t count = HOST_CPU_LOAD_INFO_COUNT;
  if (::host_statistics(::mach_host_self(), HOST_CPU_LOAD_INFO, reinterpret_cast<host_info_t>(&load), &count) !=
      KERN_SUCCESS) {
    return absl::UnavailableError("host_statistics(HOST_CPU_LOAD_INFO) failed");
  }
  CpuTimes times;
  times.busy = static_cast<uint64_t>(load.cpu_ticks[CPU_STATE_USER]) + load.cpu_ticks[CPU_STATE_SYSTEM] +
               load.cpu_ticks[CPU_STATE_NICE];
  times.total = times.busy + load.cpu_ticks[CPU_STATE_IDLE];
  int32_t cpus = 0;
  size_t size = sizeof(cpus);
  if (::sysctlbyname("hw.logicalcpu", &cpus, &size, nullptr, 0) == 0 && cpus > 0) times.cpus = static_cast<uint32_t>(cpus);
  return times;
}

std::map<int64_t, MacProcess> AllProcesses() {
  mach_timebase_info_data_t timebase = {};
  if (::mach_timebase_info(&timebase) != KERN_SUCCESS || timebase.denom == 0) timebase = {1, 1};
  std::vector<pid_t> pids(4096, 0);
  int n = ::proc_listallpids(pids.data(), static_cast<int>(pids.size() * sizeof(pid_t)));
  if (n > static_cast<int>(pids.size())) {
    pids.assign(static_cast<size_t>(n) + 256, 0);
    n = ::proc_listallpids(pids.data(), static_cast<int>(pids.size() * sizeof(pid_t)));
  }
  std::map<int64_t, MacProcess> processes;
  for (int i = 0; i < n && i < static_cast<int>(pids.size()); ++i) {
    const pid_t pid = pids[i];
    if (pid <= 0) continue;
    struct proc_bsdinfo info = {};
    if (::proc_pidinfo(pid, PROC_PIDTBSDINFO, 0, &info, sizeof(info)) != static_cast<int>(sizeof(info))) continue;
    rusage_info_v4 usage = {};
    if (::proc_pid_rusage(pid, RUSAGE_INFO_V4, reinterpret_cast<rusage_info_t*>(&usage)) != 0) continue;
    MacProcess& p = processes[pid];
    p.name = info.pbi_comm;
    p.parent = info.pbi_ppid;
    const uint64_t ticks = usage.ri_user_time + usage.ri_system_time;
    p.cpu_ns = ticks * timebase.numer / timebase.denom;
  }
  return processes;
}

}  // namespace

std::string HostLoadMonitor::memory_source() const { return "host_statistics(HOST_CPU_LOAD_INFO)"; }

absl::StatusOr<DeviceReading> HostLoadMonitor::Read() {
  (void)env_;  // no /proc to read through it
  auto cpu = HostCpuTimes();
  if (!cpu.ok()) return cpu.status();
  std::map<int64_t, MacProcess> processes = AllProcesses();
  std::set<int64_t> own = {self_};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, p] : processes) {
      if (!own.contains(pid) && own.contains(p.parent)) grew = own.insert(pid).second;
    }
  }
  const absl::Duration now = clock_->Monotonic();
  DeviceReading reading;
  DeviceSample& host = reading.devices.emplace_back();
  host.device = "host";
  if (last_cpu_.has_value() && cpu->total > last_cpu_->total && cpu->busy >= last_cpu_->busy) {
    host.utilization_percent = 100.0 * static_cast<double>(cpu->busy - last_cpu_->busy) /
                               static_cast<double>(cpu->total - last_cpu_->total);
    const double interval_ns = absl::ToDoubleNanoseconds(now - last_at_);
    for (const auto& [pid, p] : processes) {
      auto last = last_ticks_.find(pid);
      if (own.contains(pid) || last == last_ticks_.end() || p.cpu_ns < last->second || interval_ns <= 0) continue;
      const double percent = 100.0 * static_cast<double>(p.cpu_ns - last->second) / interval_ns;
      if (percent < min_cpu_percent_) continue;
      DeviceProcess& other = reading.processes.emplace_back();
      other.pid = pid;
      other.name = p.name;
    }
  }
  last_cpu_ = *cpu;
  last_at_ = now;
  last_ticks_.clear();
  for (const auto& [pid, p] : processes) last_ticks_[pid] = p.cpu_ns;
  reading.at = now;
  return reading;
}

}  // namespace benchfleet::agent

#endif  // __APPLE__
