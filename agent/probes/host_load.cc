#include "agent/probes/host_load.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/string_views.h"

namespace benchfleet::agent {

absl::StatusOr<CpuTimes> ParseProcStatCpu(std::string_view text) {
  CpuTimes times;
  bool found = false;
  for (absl::string_view line : absl::StrSplit(ToAbsl(text), '\n')) {
    if (absl::StartsWith(line, "cpu ")) {
      std::vector<absl::string_view> fields = absl::StrSplit(line.substr(4), ' ', absl::SkipEmpty());
      uint64_t v[8] = {};
      if (fields.size() < 4) break;
      for (size_t i = 0; i < 8 && i < fields.size(); ++i) {
        if (!absl::SimpleAtoi(fields[i], &v[i])) return absl::InvalidArgumentError("/proc/stat: the cpu line is not numbers");
      }
      // user nice system idle iowait irq softirq steal (guest time is already in user).
      times.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
      times.total = times.busy + v[3] + v[4];
      found = true;
    } else if (absl::StartsWith(line, "cpu")) {
      ++times.cpus;
    }
  }
  if (!found) return absl::InvalidArgumentError("/proc/stat: no 'cpu' line with at least 4 figures");
  return times;
}

std::optional<ProcessTimes> ParseProcessTimes(std::string_view stat) {
  const size_t open = stat.find('(');
  const size_t close = stat.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  std::vector<absl::string_view> fields =
      absl::StrSplit(ToAbsl(stat.substr(close + 1)), absl::ByAnyChar(" \n"), absl::SkipEmpty());
  // After the name: state(0) ppid(1) ... utime(11) stime(12).
  ProcessTimes times;
  uint64_t utime = 0, stime = 0;
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[1], &times.parent) || !absl::SimpleAtoi(fields[11], &utime) ||
      !absl::SimpleAtoi(fields[12], &stime)) {
    return std::nullopt;
  }
  times.name = std::string(stat.substr(open + 1, close - open - 1));
  times.ticks = utime + stime;
  return times;
}

HostLoadMonitor::HostLoadMonitor(Env* env, Clock* clock, int64_t self, std::string root, double min_cpu_percent)
    : env_(env), clock_(clock), self_(self), root_(std::move(root)), min_cpu_percent_(min_cpu_percent) {}

// macOS: host_load_macos.cc.
#if !defined(__APPLE__)
std::string HostLoadMonitor::memory_source() const { return "/proc/stat"; }

absl::StatusOr<DeviceReading> HostLoadMonitor::Read() {
  auto stat = env_->ReadFile(root_ + "/proc/stat");
  if (!stat.ok()) return stat.status();
  auto cpu = ParseProcStatCpu(*stat);
  if (!cpu.ok()) return cpu.status();
  auto entries = env_->ListDir(root_ + "/proc");
  if (!entries.ok()) return entries.status();

  std::map<int64_t, ProcessTimes> processes;
  for (const std::string& entry : *entries) {
    int64_t pid = 0;
    if (!absl::SimpleAtoi(entry, &pid)) continue;
    auto text = env_->ReadFile(absl::StrCat(root_, "/proc/", pid, "/stat"));
    if (!text.ok()) continue;  // ended meanwhile
    if (auto times = ParseProcessTimes(*text); times.has_value()) processes[pid] = std::move(*times);
  }
  // The agent's tree, from the parents read just now.
  std::set<int64_t> own = {self_};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, times] : processes) {
      if (!own.contains(pid) && own.contains(times.parent)) grew = own.insert(pid).second;
    }
  }

  DeviceReading reading;
  DeviceSample& host = reading.devices.emplace_back();
  host.device = "host";
  if (last_cpu_.has_value() && cpu->total > last_cpu_->total && cpu->busy >= last_cpu_->busy) {
    const double interval = static_cast<double>(cpu->total - last_cpu_->total);
    host.utilization_percent = 100.0 * static_cast<double>(cpu->busy - last_cpu_->busy) / interval;
    // Ticks of one CPU in the interval: the total is summed over every CPU.
    const double one_cpu = interval / std::max<uint32_t>(1, cpu->cpus);
    for (const auto& [pid, times] : processes) {
      auto last = last_ticks_.find(pid);
      if (own.contains(pid) || last == last_ticks_.end() || times.ticks < last->second) continue;
      const double percent = 100.0 * static_cast<double>(times.ticks - last->second) / one_cpu;
      if (percent < min_cpu_percent_) continue;
      DeviceProcess& other = reading.processes.emplace_back();
      other.pid = pid;
      other.name = times.name;
    }
  }
  last_cpu_ = *cpu;
  last_ticks_.clear();
  for (const auto& [pid, times] : processes) last_ticks_[pid] = times.ticks;
  reading.at = clock_->Monotonic();
  return reading;
}

#endif  // !__APPLE__

}  // namespace benchfleet::agent
