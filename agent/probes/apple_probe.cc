#include "agent/probes/apple_probe.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/probes/tool_values.h"
#include "common/string_views.h"
#include "nlohmann/json.hpp"

namespace benchfleet::agent {
namespace {

using nlohmann::json;

std::string Text(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// The first object of a data type's array, or an empty object.
json FirstOf(const json& root, const char* type) {
  auto it = root.find(type);
  if (it == root.end() || !it->is_array() || it->empty() || !(*it)[0].is_object()) return json::object();
  return (*it)[0];
}

}  // namespace

absl::StatusOr<SysctlFacts> ParseSysctlFacts(std::string_view text) {
  std::vector<std::string> lines = NonEmptyLines(text);
  SysctlFacts facts;
  if (lines.size() != 3 || !absl::SimpleAtoi(lines[1], &facts.memory_bytes) ||
      !absl::SimpleAtoi(lines[2], &facts.logical_cpus)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sysctl -n machdep.cpu.brand_string hw.memsize hw.ncpu: expected brand, bytes and count on 3 lines, got ",
        lines.size(), " lines"));
  }
  facts.cpu_brand = lines[0];
  return facts;
}

absl::StatusOr<AppleHardware> ParseSystemProfilerJson(std::string_view text) {
  json parsed = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return absl::InvalidArgumentError("system_profiler -json: the output is not a JSON object");
  }
  const json hardware = FirstOf(parsed, "SPHardwareDataType");
  const json display = FirstOf(parsed, "SPDisplaysDataType");
  AppleHardware out;
  out.chip = Text(hardware, "chip_type");
  out.model = Text(hardware, "machine_model");
  out.gpu_name = Text(display, "sppci_model");
  uint32_t cores = 0;
  if (absl::SimpleAtoi(Text(display, "sppci_cores"), &cores)) out.gpu_cores = cores;
  out.metal_family = Text(display, "spdisplays_mtlgpufamilysupport");
  if (out.chip.empty() && out.gpu_name.empty()) {
    return absl::InvalidArgumentError("system_profiler -json: neither chip_type nor sppci_model in the output");
  }
  return out;
}

std::string ThermalState::Slowdown() const {
  std::vector<std::string> parts;
  if (cpu_speed_limit.has_value() && *cpu_speed_limit < 100) parts.push_back(absl::StrCat("CPU_Speed_Limit ", *cpu_speed_limit));
  if (thermal_warning_level > 0) parts.push_back(absl::StrCat("thermal warning level ", thermal_warning_level));
  if (performance_warning_level > 0) parts.push_back(absl::StrCat("performance warning level ", performance_warning_level));
  return absl::StrJoin(parts, ", ");
}

absl::StatusOr<ThermalState> ParsePmsetTherm(std::string_view text) {
  ThermalState state;
  int understood = 0;
  for (const std::string& line : NonEmptyLines(text)) {
    if (absl::StartsWith(line, "Note: No ") && absl::StrContains(line, "has been recorded")) {
      ++understood;  // "Note: No thermal warning level has been recorded": level 0
      continue;
    }
    auto level = [&](const char* prefix, int* out) {
      if (!absl::StartsWith(line, prefix)) return false;
      std::string rest(absl::StripSuffix(absl::StripAsciiWhitespace(absl::string_view(line).substr(strlen(prefix))), "."));
      return absl::SimpleAtoi(rest, out);
    };
    if (level("Thermal warning level set to ", &state.thermal_warning_level) ||
        level("Performance warning level set to ", &state.performance_warning_level)) {
      ++understood;
      continue;
    }
    if (absl::StrContains(line, "CPU Power notify")) {
      ++understood;
      continue;
    }
    const size_t eq = line.find('=');
    if (eq != std::string::npos) {
      const absl::string_view key = absl::StripAsciiWhitespace(absl::string_view(line).substr(0, eq));
      int value = 0;
      if (absl::StartsWith(key, "CPU_") &&
          absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::string_view(line).substr(eq + 1)), &value)) {
        ++understood;
        if (key == "CPU_Speed_Limit") state.cpu_speed_limit = value;
      }
    }
  }
  if (understood == 0) return absl::InvalidArgumentError("pmset -g therm: no line of the expected form");
  return state;
}

absl::StatusOr<std::string> AppleProbe::RunTool(const std::vector<std::string>& argv) {
  auto output = runner_->Run(argv, timeout_);
  if (!output.ok()) return output.status();
  if (output->exit_code != 0) return absl::UnavailableError(DescribeFailure(argv, *output));
  return std::move(output->stdout_text);
}

absl::Status AppleProbe::Probe(v1::MachineConditions* conditions) {
  notes_.clear();
  uint64_t memory = 0;
  auto sysctl = RunTool({"sysctl", "-n", "machdep.cpu.brand_string", "hw.memsize", "hw.ncpu"});
  absl::StatusOr<SysctlFacts> facts = sysctl.ok() ? ParseSysctlFacts(*sysctl) : sysctl.status();
  if (facts.ok()) {
    memory = facts->memory_bytes;
    if (conditions->cpu_model().empty()) conditions->set_cpu_model(facts->cpu_brand);
    if (conditions->logical_cores() == 0) conditions->set_logical_cores(facts->logical_cpus);
    if (conditions->memory_bytes() == 0) conditions->set_memory_bytes(facts->memory_bytes);
  } else {
    notes_.push_back({"apple", std::string(facts.status().message())});
  }
  auto profiler = RunTool({"system_profiler", "SPHardwareDataType", "SPDisplaysDataType", "-json"});
  absl::StatusOr<AppleHardware> hardware = profiler.ok() ? ParseSystemProfilerJson(*profiler) : profiler.status();
  if (!hardware.ok()) {
    notes_.push_back({"apple", std::string(hardware.status().message())});
    return absl::OkStatus();
  }
  v1::Accelerator* gpu = conditions->add_accelerators();
  gpu->set_name(hardware->gpu_name.empty() ? hardware->chip : hardware->gpu_name);
  gpu->set_vendor("apple");
  gpu->set_index("0");
  gpu->set_memory_bytes(memory);  // unified memory: the host's
  auto& attributes = *gpu->mutable_attributes();
  attributes["memory"] = "unified (host memory)";
  if (hardware->gpu_cores) attributes["gpu_cores"] = absl::StrCat(*hardware->gpu_cores);
  if (!hardware->metal_family.empty()) attributes["metal_family"] = hardware->metal_family;
  if (!hardware->model.empty()) attributes["machine_model"] = hardware->model;
  return absl::OkStatus();
}

absl::StatusOr<DeviceReading> AppleProbe::Read() {
  auto text = RunTool({"pmset", "-g", "therm"});
  if (!text.ok()) return text.status();
  auto state = ParsePmsetTherm(*text);
  if (!state.ok()) return state.status();
  DeviceReading reading;
  DeviceSample& sample = reading.devices.emplace_back();
  sample.device = "0";
  sample.slowdown = state->Slowdown();
  reading.at = clock_->Monotonic();
  return reading;
}

}  // namespace benchfleet::agent
