#include "agent/probes/nvidia_smi.h"

#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/probes/tool_values.h"
#include "common/string_views.h"

namespace benchfleet::agent {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::optional<uint64_t> MibToBytes(const std::optional<double>& mib) {
  if (!mib.has_value() || *mib < 0) return std::nullopt;
  return static_cast<uint64_t>(std::llround(*mib * kMiB));
}

std::string TextOrEmpty(const std::string& value) { return IsMissingValue(value) ? "" : value; }

// Returns the lines of a --format=csv output with the given number of fields each, or why not.
absl::StatusOr<std::vector<std::vector<std::string>>> CsvRows(std::string_view text, size_t fields,
                                                              std::string_view what) {
  std::vector<std::vector<std::string>> rows;
  int line_number = 0;
  for (const std::string& line : NonEmptyLines(text)) {
    ++line_number;
    std::vector<std::string> row = SplitCsvFields(line);
    if (row.size() != fields) {
      return absl::InvalidArgumentError(absl::StrCat(ToAbsl(what), " line ", line_number, " has ", row.size(),
                                                     row.size() == 1 ? " field" : " fields", ", expected ", fields, ": '", line.substr(0, 120), "'"));
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return absl::InvalidArgumentError(absl::StrCat(ToAbsl(what), ": no GPU line in the output"));
  return rows;
}

}  // namespace

std::string NvidiaReasonNames(uint64_t mask) {
  static constexpr std::pair<uint64_t, const char*> kNames[] = {
      {0x1, "gpu_idle"},           {0x2, "applications_clocks_setting"}, {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"},        {0x10, "sync_boost"},                 {0x20, "sw_thermal_slowdown"},
      {0x40, "hw_thermal_slowdown"}, {0x80, "hw_power_brake_slowdown"},  {0x100, "display_clock_setting"}};
  std::vector<std::string> names;
  uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if (mask & bit) names.push_back(name);
  }
  if (mask & ~known) names.push_back(absl::StrCat("0x", absl::Hex(mask & ~known)));
  return absl::StrJoin(names, ",");
}

absl::StatusOr<std::vector<NvidiaGpuInfo>> ParseNvidiaGpuInfo(std::string_view text) {
  auto rows = CsvRows(text, 10, "nvidia-smi --query-gpu");
  if (!rows.ok()) return rows.status();
  std::vector<NvidiaGpuInfo> gpus;
  for (const auto& row : *rows) {
    NvidiaGpuInfo gpu;
    gpu.index = TextOrEmpty(row[0]);
    gpu.name = TextOrEmpty(row[1]);
    if (gpu.index.empty() || gpu.name.empty() || !ParseNumber(gpu.index).has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("nvidia-smi --query-gpu: a GPU without a valid index or name: '", absl::StrJoin(row, ", "), "'"));
    }
    gpu.uuid = TextOrEmpty(row[2]);
    gpu.driver = TextOrEmpty(row[3]);
    gpu.memory_bytes = MibToBytes(ParseNumber(row[4]));
    gpu.power_limit_watts = ParseNumber(row[5]);
    gpu.max_sm_clock_mhz = ParseNumber(row[6]);
    gpu.max_memory_clock_mhz = ParseNumber(row[7]);
    gpu.pci_bus_id = TextOrEmpty(row[8]);
    gpu.vbios = TextOrEmpty(row[9]);
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

absl::StatusOr<std::vector<DeviceSample>> ParseNvidiaSamples(std::string_view text) {
  auto rows = CsvRows(text, 8, "nvidia-smi --query-gpu (sample)");
  if (!rows.ok()) return rows.status();
  std::vector<DeviceSample> samples;
  for (const auto& row : *rows) {
    if (!ParseNumber(row[0]).has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("nvidia-smi --query-gpu (sample): not a GPU index: '", row[0].substr(0, 40), "'"));
    }
    DeviceSample sample;
    sample.device = row[0];
    sample.utilization_percent = ParseNumber(row[1]);
    sample.memory_used_bytes = MibToBytes(ParseNumber(row[2]));
    sample.power_watts = ParseNumber(row[3]);
    sample.temperature_celsius = ParseNumber(row[4]);
    sample.sm_clock_mhz = ParseNumber(row[5]);
    sample.max_sm_clock_mhz = ParseNumber(row[6]);
    sample.throttle_reasons = ParseHexMask(row[7]);
    samples.push_back(std::move(sample));
  }
  return samples;
}

absl::StatusOr<std::vector<DeviceProcess>> ParseNvidiaComputeApps(std::string_view text) {
  std::vector<DeviceProcess> processes;
  int line_number = 0;
  for (const std::string& line : NonEmptyLines(text)) {
    ++line_number;
    if (line_number == 1 && absl::StartsWith(line, "pid")) continue;  // the header of --format=csv
    if (absl::StrContains(line, "No running processes found")) continue;
    std::vector<std::string> row = SplitCsvFields(line);
    std::optional<double> pid = row.empty() ? std::nullopt : ParseNumber(row[0]);
    // A pid is a pid_t: a larger number (or one beyond int64_t, whose conversion is undefined) is
    // not one.
    if (row.size() != 3 || !pid.has_value() || *pid < 0 || std::floor(*pid) != *pid ||
        *pid > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrCat("nvidia-smi --query-compute-apps line ", line_number,
                                                     " is not 'pid, process_name, used_memory': '",
                                                     line.substr(0, 120), "'"));
    }
    DeviceProcess process;
    process.pid = static_cast<int64_t>(*pid);
    process.name = TextOrEmpty(row[1]);
    process.used_bytes = MibToBytes(ParseNumber(row[2]));
    processes.push_back(std::move(process));
  }
  return processes;
}

void FillAccelerator(const NvidiaGpuInfo& gpu, v1::Accelerator* accelerator) {
  accelerator->set_name(gpu.name);
  accelerator->set_vendor("nvidia");
  accelerator->set_driver(gpu.driver);
  accelerator->set_memory_bytes(gpu.memory_bytes.value_or(0));
  accelerator->set_index(gpu.index);
  auto& attributes = *accelerator->mutable_attributes();
  if (!gpu.uuid.empty()) attributes["uuid"] = gpu.uuid;
  if (!gpu.pci_bus_id.empty()) attributes["pci_bus_id"] = gpu.pci_bus_id;
  if (!gpu.vbios.empty()) attributes["vbios"] = gpu.vbios;
  // Whole numbers print without decimals; beyond 10^15 the int64_t conversion could be undefined.
  auto number = [](double value) {
    return std::abs(value) < 1e15 && value == std::floor(value) ? absl::StrCat(static_cast<int64_t>(value))
                                                                : absl::StrCat(value);
  };
  if (gpu.power_limit_watts) attributes["power_limit_watts"] = number(*gpu.power_limit_watts);
  if (gpu.max_sm_clock_mhz) attributes["max_sm_clock_mhz"] = number(*gpu.max_sm_clock_mhz);
  if (gpu.max_memory_clock_mhz) attributes["max_memory_clock_mhz"] = number(*gpu.max_memory_clock_mhz);
}

absl::StatusOr<std::string> NvidiaProbe::RunQuery(const std::vector<std::string>& argv) {
  auto output = runner_->Run(argv, timeout_);
  if (!output.ok()) return output.status();
  if (output->exit_code != 0) return absl::UnavailableError(DescribeFailure(argv, *output));
  return std::move(output->stdout_text);
}

absl::Status NvidiaProbe::Probe(v1::MachineConditions* conditions) {
  notes_.clear();
  const std::vector<std::string> argv = {"nvidia-smi", absl::StrCat("--query-gpu=", kNvidiaInfoFields),
                                         "--format=csv,noheader,nounits"};
  auto text = RunQuery(argv);
  if (!text.ok()) {
    notes_.push_back({"nvidia", std::string(text.status().message())});
    return absl::OkStatus();
  }
  auto gpus = ParseNvidiaGpuInfo(*text);
  if (!gpus.ok()) {
    notes_.push_back({"nvidia", std::string(gpus.status().message())});
    return absl::OkStatus();
  }
  for (const NvidiaGpuInfo& gpu : *gpus) FillAccelerator(gpu, conditions->add_accelerators());
  return absl::OkStatus();
}

absl::StatusOr<DeviceReading> NvidiaProbe::Read() {
  auto query = [&](const char* fields) {
    return RunQuery({"nvidia-smi", absl::StrCat("--query-gpu=", fields), "--format=csv,noheader,nounits"});
  };
  auto text = query(legacy_fields_ ? kNvidiaSampleFieldsLegacy : kNvidiaSampleFields);
  if (!text.ok() && !legacy_fields_ && absl::StrContains(text.status().message(), "clocks_event_reasons")) {
    legacy_fields_ = true;
    text = query(kNvidiaSampleFieldsLegacy);
  }
  if (!text.ok()) return text.status();
  auto samples = ParseNvidiaSamples(*text);
  if (!samples.ok()) return samples.status();
  DeviceReading reading;
  reading.devices = std::move(*samples);
  auto apps = RunQuery({"nvidia-smi", "--query-compute-apps=pid,process_name,used_memory",
                        "--format=csv,noheader,nounits"});
  if (apps.ok()) {
    auto processes = ParseNvidiaComputeApps(*apps);
    if (processes.ok()) {
      reading.processes = std::move(*processes);
    } else {
      reading.problems.emplace_back(processes.status().message());
    }
  } else {
    reading.problems.emplace_back(apps.status().message());
  }
  reading.at = clock_->Monotonic();
  return reading;
}

}  // namespace benchfleet::agent
