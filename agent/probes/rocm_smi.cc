#include "agent/probes/rocm_smi.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/probes/amd_smi.h"
#include "agent/probes/tool_values.h"
#include "common/string_views.h"
#include "nlohmann/json.hpp"

namespace benchfleet::agent {
namespace {

using nlohmann::json;

// rocm-smi writes every value as a string; a few releases write numbers.
std::string Text(const json& card, const char* key) {
  auto it = card.find(key);
  if (it == card.end()) return "";
  if (it->is_string()) return IsMissingValue(it->get<std::string>()) ? "" : it->get<std::string>();
  if (it->is_number()) return it->dump();
  return "";
}

std::optional<double> Number(const json& card, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    if (auto n = ParseNumber(Text(card, key)); n.has_value()) return n;
  }
  return std::nullopt;
}

std::optional<uint64_t> Bytes(const json& card, const char* key) {
  auto n = Number(card, {key});
  if (!n.has_value() || *n < 0) return std::nullopt;
  return static_cast<uint64_t>(std::llround(*n));
}

bool MentionsHertz(absl::string_view text) { return absl::StrContains(absl::AsciiStrToLower(text), "hz"); }

absl::StatusOr<json> ParseObject(std::string_view text, const char* what) {
  json parsed = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": the output is not a JSON object"));
  }
  return parsed;
}

}  // namespace

absl::StatusOr<std::vector<RocmCard>> ParseRocmSmiJson(std::string_view text) {
  auto parsed = ParseObject(text, "rocm-smi --json");
  if (!parsed.ok()) return parsed.status();
  std::string system_driver;
  if (auto system = parsed->find("system"); system != parsed->end() && system->is_object()) {
    system_driver = Text(*system, "Driver version");
  }
  std::vector<RocmCard> cards;
  for (const auto& [key, card] : parsed->items()) {
    if (!absl::StartsWith(key, "card") || !card.is_object()) continue;
    int index = 0;
    if (!absl::SimpleAtoi(ToAbsl(std::string_view(key).substr(4)), &index)) continue;
    RocmCard out;
    out.index = absl::StrCat(index);
    for (const char* name_key : {"Card series", "Card model", "Device Name"}) {
      out.name = Text(card, name_key);
      if (!out.name.empty()) break;
    }
    out.driver = Text(card, "Driver version");
    if (out.driver.empty()) out.driver = system_driver;
    out.vbios = Text(card, "VBIOS version");
    out.vram_total_bytes = Bytes(card, "VRAM Total Memory (B)");
    DeviceSample& s = out.sample;
    s.device = out.index;
    s.memory_used_bytes = Bytes(card, "VRAM Total Used Memory (B)");
    s.utilization_percent = Number(card, {"GPU use (%)"});
    s.power_watts = Number(card, {"Average Graphics Package Power (W)", "Current Socket Graphics Package Power (W)"});
    s.temperature_celsius = Number(card, {"Temperature (Sensor junction) (C)", "Temperature (Sensor edge) (C)"});
    s.sm_clock_mhz = Number(card, {"sclk clock speed:"});
    // The maximum SCLK: the highest DPM level of --showclkfrq ("sclk clock level: 2": "1700Mhz"),
    // else the top of --showsclkrange ("Valid sclk range": "500Mhz - 1700Mhz").
    std::optional<double> max_clock;
    for (const auto& [field, value] : card.items()) {
      if (!absl::StartsWith(field, "sclk clock level") || !value.is_string()) continue;
      const std::string level = value.get<std::string>();
      if (!MentionsHertz(level)) continue;  // the current level's number
      std::vector<absl::string_view> words = absl::StrSplit(level, ' ', absl::SkipEmpty());
      for (absl::string_view word : words) {
        if (auto mhz = ParseNumber(ToStd(word)); mhz && MentionsHertz(word)) {
          max_clock = std::max(max_clock.value_or(0), *mhz);
        }
      }
    }
    if (!max_clock.has_value()) {
      const std::string range = Text(card, "Valid sclk range");
      if (const size_t dash = range.rfind('-'); dash != std::string::npos) {
        max_clock = ParseNumber(range.substr(dash + 1));
      }
    }
    s.max_sm_clock_mhz = max_clock;
    cards.push_back(std::move(out));
  }
  if (cards.empty()) return absl::InvalidArgumentError("rocm-smi --json: no card in the output");
  return cards;
}

absl::StatusOr<std::vector<DeviceProcess>> ParseRocmSmiPids(std::string_view text) {
  auto parsed = ParseObject(text, "rocm-smi --showpids --json");
  if (!parsed.ok()) return parsed.status();
  std::vector<DeviceProcess> processes;
  auto system = parsed->find("system");
  if (system == parsed->end() || !system->is_object()) return processes;
  for (const auto& [key, value] : system->items()) {
    if (!absl::StartsWith(key, "PID") || !value.is_string()) continue;
    int64_t pid = 0;
    if (!absl::SimpleAtoi(ToAbsl(std::string_view(key).substr(3)), &pid)) {
      return absl::InvalidArgumentError(absl::StrCat("rocm-smi --showpids: not a pid: '", key, "'"));
    }
    std::vector<std::string> fields = SplitCsvFields(value.get<std::string>());
    DeviceProcess process;
    process.pid = pid;
    process.name = fields.empty() ? "" : fields[0];
    if (fields.size() >= 3) {
      // Beyond uint64_t the conversion would be undefined: such a figure is none.
      if (auto bytes = ParseNumber(fields[2]); bytes && *bytes >= 0 && *bytes < 0x1p64) {
        process.used_bytes = static_cast<uint64_t>(*bytes);
      }
    }
    processes.push_back(std::move(process));
  }
  return processes;
}

absl::StatusOr<std::string> AmdProbe::RunJson(const std::vector<std::string>& argv) {
  auto output = runner_->Run(argv, timeout_);
  if (!output.ok()) return output.status();
  if (output->exit_code != 0) return absl::UnavailableError(DescribeFailure(argv, *output));
  return std::move(output->stdout_text);
}

std::string AmdProbe::memory_source() const {
  if (tool_ == Tool::kAmdSmi) return "amd-smi metric --mem-usage (mem_usage.used_vram)";
  return "rocm-smi --showmeminfo vram (VRAM Total Used Memory)";
}

absl::Status AmdProbe::ProbeRocmSmi(v1::MachineConditions* conditions) {
  auto text = RunJson({"rocm-smi", "--showproductname", "--showdriverversion", "--showvbios", "--showmeminfo", "vram",
                       "--json"});
  if (!text.ok()) return text.status();
  auto cards = ParseRocmSmiJson(*text);
  if (!cards.ok()) return cards.status();
  for (const RocmCard& card : *cards) {
    v1::Accelerator* accelerator = conditions->add_accelerators();
    accelerator->set_name(card.name);
    accelerator->set_vendor("amd");
    accelerator->set_driver(card.driver);
    accelerator->set_memory_bytes(card.vram_total_bytes.value_or(0));
    accelerator->set_index(card.index);
    if (!card.vbios.empty()) (*accelerator->mutable_attributes())["vbios"] = card.vbios;
    if (card.name.empty()) notes_.push_back({"amd", absl::StrCat("card", card.index, ": rocm-smi gave no product name")});
  }
  return absl::OkStatus();
}

absl::Status AmdProbe::ProbeAmdSmi(v1::MachineConditions* conditions) {
  auto text = RunJson({"amd-smi", "static", "--asic", "--board", "--vbios", "--driver", "--vram", "--json"});
  if (!text.ok()) return text.status();
  auto gpus = ParseAmdSmiStatic(*text);
  if (!gpus.ok()) return gpus.status();
  for (const AmdSmiGpu& gpu : *gpus) {
    v1::Accelerator* accelerator = conditions->add_accelerators();
    accelerator->set_name(gpu.name);
    accelerator->set_vendor("amd");
    accelerator->set_driver(gpu.driver);
    accelerator->set_memory_bytes(gpu.vram_total_bytes.value_or(0));
    accelerator->set_index(gpu.index);
    if (!gpu.vbios.empty()) (*accelerator->mutable_attributes())["vbios"] = gpu.vbios;
    if (gpu.name.empty()) notes_.push_back({"amd", absl::StrCat("gpu ", gpu.index, ": amd-smi gave no product name")});
  }
  return absl::OkStatus();
}

absl::Status AmdProbe::Probe(v1::MachineConditions* conditions) {
  notes_.clear();
  const absl::Status rocm = ProbeRocmSmi(conditions);
  if (rocm.ok()) {
    tool_ = Tool::kRocmSmi;
    return absl::OkStatus();
  }
  const absl::Status amd = ProbeAmdSmi(conditions);
  if (amd.ok()) {
    tool_ = Tool::kAmdSmi;
    return absl::OkStatus();
  }
  notes_.push_back({"amd", absl::StrCat(rocm.message(), "; ", amd.message())});
  return absl::OkStatus();
}

absl::StatusOr<DeviceReading> AmdProbe::ReadRocmSmi() {
  auto text = RunJson({"rocm-smi", "--showmeminfo", "vram", "--showpower", "--showtemp", "--showclocks", "--showuse",
                       "--showclkfrq", "--json"});
  if (!text.ok()) return text.status();
  auto cards = ParseRocmSmiJson(*text);
  if (!cards.ok()) return cards.status();
  DeviceReading reading;
  for (RocmCard& card : *cards) reading.devices.push_back(std::move(card.sample));
  auto pids = RunJson({"rocm-smi", "--showpids", "--json"});
  if (pids.ok()) {
    auto processes = ParseRocmSmiPids(*pids);
    if (processes.ok()) {
      reading.processes = std::move(*processes);
    } else {
      reading.problems.emplace_back(processes.status().message());
    }
  } else {
    reading.problems.emplace_back(pids.status().message());
  }
  reading.at = clock_->Monotonic();
  return reading;
}

absl::StatusOr<DeviceReading> AmdProbe::ReadAmdSmi() {
  auto text = RunJson({"amd-smi", "metric", "--mem-usage", "--usage", "--power", "--clock", "--temperature", "--json"});
  if (!text.ok()) return text.status();
  auto samples = ParseAmdSmiMetric(*text);
  if (!samples.ok()) return samples.status();
  DeviceReading reading;
  reading.devices = std::move(*samples);
  auto listed = RunJson({"amd-smi", "process", "--json"});
  if (listed.ok()) {
    auto processes = ParseAmdSmiProcess(*listed);
    if (processes.ok()) {
      for (DeviceProcess& process : *processes) {
        // The C library's list may include the caller; amd-smi itself is never contention.
        // (A guard from the library's documentation, not seen on a real machine.)
        if (process.name == "amd-smi") continue;
        reading.processes.push_back(std::move(process));
      }
    } else {
      reading.problems.emplace_back(processes.status().message());
    }
  } else {
    reading.problems.emplace_back(listed.status().message());
  }
  reading.at = clock_->Monotonic();
  return reading;
}

absl::StatusOr<DeviceReading> AmdProbe::Read() {
  if (tool_ == Tool::kRocmSmi) return ReadRocmSmi();
  if (tool_ == Tool::kAmdSmi) return ReadAmdSmi();
  auto rocm = ReadRocmSmi();
  if (rocm.ok()) {
    tool_ = Tool::kRocmSmi;
    return rocm;
  }
  auto amd = ReadAmdSmi();
  if (amd.ok()) {
    tool_ = Tool::kAmdSmi;
    return amd;
  }
  return absl::Status(amd.status().code(), absl::StrCat(rocm.status().message(), "; ", amd.status().message()));
}

}  // namespace benchfleet::agent
