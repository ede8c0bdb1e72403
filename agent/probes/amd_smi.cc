#include "agent/probes/amd_smi.h"

#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/probes/tool_values.h"
#include "common/string_views.h"
#include "nlohmann/json.hpp"

namespace benchfleet::agent {
namespace {

using nlohmann::json;

// Returns the per-GPU objects of an amd-smi --json output: the list itself, or the list under
// "gpu_data". Objects without a "gpu" index are skipped.
absl::StatusOr<std::vector<json>> GpuEntries(std::string_view text, const char* what) {
  json parsed = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(what, ": the output is not JSON"));
  const json* list = &parsed;
  if (parsed.is_object()) {
    auto it = parsed.find("gpu_data");
    if (it == parsed.end()) return absl::InvalidArgumentError(absl::StrCat(what, ": no \"gpu_data\" list in the output"));
    list = &*it;
  }
  if (!list->is_array()) return absl::InvalidArgumentError(absl::StrCat(what, ": the GPU list is not a JSON array"));
  std::vector<json> gpus;
  for (const json& entry : *list) {
    if (entry.is_object() && entry.contains("gpu")) gpus.push_back(entry);
  }
  if (gpus.empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": no GPU in the output"));
  return gpus;
}

// Returns node[key] when node is an object holding it, else nullptr.
const json* Child(const json* node, const char* key) {
  if (node == nullptr || !node->is_object()) return nullptr;
  auto it = node->find(key);
  return it == node->end() ? nullptr : &*it;
}

// Follows a path of keys; nullptr where one is missing.
const json* At(const json& root, std::initializer_list<const char*> path) {
  const json* node = &root;
  for (const char* key : path) node = Child(node, key);
  return node;
}

std::string Text(const json* node) {
  if (node == nullptr) return "";
  if (node->is_string()) {
    const std::string value = node->get<std::string>();
    return IsMissingValue(value) ? "" : value;
  }
  if (node->is_number_integer()) return node->dump();
  return "";
}

// A figure: {"value": N, "unit": U}, a bare number, or a string such as "96 MB". unit receives U
// (or the text after the number), "" when none.
std::optional<double> Figure(const json* node, std::string* unit = nullptr) {
  if (node == nullptr) return std::nullopt;
  if (unit != nullptr) unit->clear();
  if (node->is_object()) {
    if (unit != nullptr) *unit = Text(Child(node, "unit"));
    node = Child(node, "value");
    if (node == nullptr) return std::nullopt;
  }
  if (node->is_number()) {
    const double value = node->get<double>();
    return std::isfinite(value) ? std::optional<double>(value) : std::nullopt;
  }
  if (!node->is_string()) return std::nullopt;
  const std::string text = node->get<std::string>();
  auto value = ParseNumber(text);
  if (value.has_value() && unit != nullptr && unit->empty()) {
    const size_t end = text.find_first_not_of("0123456789.+- ");
    if (end != std::string::npos) *unit = std::string(absl::StripAsciiWhitespace(text.substr(end)));
  }
  return value;
}

std::optional<double> FirstFigure(const json& root, std::initializer_list<std::initializer_list<const char*>> paths) {
  for (auto path : paths) {
    if (auto value = Figure(At(root, path)); value.has_value()) return value;
  }
  return std::nullopt;
}

// A memory figure in bytes. amd-smi's units are binary ("MB" is bytes / 1024 / 1024); without a
// unit, default_unit applies.
std::optional<uint64_t> Bytes(const json* node, std::string_view default_unit) {
  std::string unit;
  auto value = Figure(node, &unit);
  if (!value.has_value() || *value < 0) return std::nullopt;
  if (unit.empty()) unit = std::string(default_unit);
  unit = absl::AsciiStrToUpper(unit);
  double scale = 0;
  if (unit == "B") scale = 1;
  if (unit == "KB" || unit == "KIB") scale = 1024.0;
  if (unit == "MB" || unit == "MIB") scale = 1024.0 * 1024;
  if (unit == "GB" || unit == "GIB") scale = 1024.0 * 1024 * 1024;
  if (scale == 0) return std::nullopt;  // a unit not understood: no figure rather than a wrong one
  const double bytes = std::round(*value * scale);
  if (bytes >= 18446744073709551615.0) return std::nullopt;  // beyond uint64_t: not a real figure
  return static_cast<uint64_t>(bytes);
}

std::string Index(const json& gpu) {
  const json& index = gpu.at("gpu");
  if (index.is_number_integer()) return index.dump();
  if (index.is_string()) return index.get<std::string>();
  return "";
}

}  // namespace

absl::StatusOr<std::vector<AmdSmiGpu>> ParseAmdSmiStatic(std::string_view text) {
  auto gpus = GpuEntries(text, "amd-smi static --json");
  if (!gpus.ok()) return gpus.status();
  std::vector<AmdSmiGpu> out;
  for (const json& gpu : *gpus) {
    AmdSmiGpu g;
    g.index = Index(gpu);
    g.name = Text(At(gpu, {"asic", "market_name"}));
    if (g.name.empty()) g.name = Text(At(gpu, {"board", "product_name"}));
    g.driver = Text(At(gpu, {"driver", "version"}));
    g.vbios = Text(At(gpu, {"vbios", "version"}));
    if (g.vbios.empty()) g.vbios = Text(At(gpu, {"vbios", "part_number"}));
    g.vram_total_bytes = Bytes(At(gpu, {"vram", "size"}), "MB");
    out.push_back(std::move(g));
  }
  return out;
}

absl::StatusOr<std::vector<DeviceSample>> ParseAmdSmiMetric(std::string_view text,
                                                            std::vector<std::optional<uint64_t>>* vram_totals) {
  auto gpus = GpuEntries(text, "amd-smi metric --json");
  if (!gpus.ok()) return gpus.status();
  std::vector<DeviceSample> samples;
  if (vram_totals != nullptr) vram_totals->clear();
  for (const json& gpu : *gpus) {
    DeviceSample s;
    s.device = Index(gpu);
    s.memory_used_bytes = Bytes(At(gpu, {"mem_usage", "used_vram"}), "MB");
    s.utilization_percent = FirstFigure(gpu, {{"usage", "gfx_activity"}});
    s.power_watts = FirstFigure(gpu, {{"power", "socket_power"},
                                      {"power", "current_socket_power"},
                                      {"power", "average_socket_power"}});
    s.temperature_celsius = FirstFigure(gpu, {{"temperature", "hotspot"}, {"temperature", "edge"}});
    s.sm_clock_mhz = FirstFigure(gpu, {{"clock", "gfx_0", "clk"}, {"clock", "gfx", "cur_clk"}, {"clock", "gfx", "clk"}});
    s.max_sm_clock_mhz = FirstFigure(gpu, {{"clock", "gfx_0", "max_clk"}, {"clock", "gfx", "max_clk"}});
    if (s.max_sm_clock_mhz.has_value() && *s.max_sm_clock_mhz <= 0) s.max_sm_clock_mhz.reset();
    if (vram_totals != nullptr) vram_totals->push_back(Bytes(At(gpu, {"mem_usage", "total_vram"}), "MB"));
    samples.push_back(std::move(s));
  }
  return samples;
}

absl::StatusOr<std::vector<DeviceProcess>> ParseAmdSmiProcess(std::string_view text) {
  json parsed = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return absl::InvalidArgumentError("amd-smi process --json: the output is not JSON");
  const json* list = parsed.is_object() ? Child(&parsed, "gpu_data") : &parsed;
  if (list == nullptr || !list->is_array()) {
    return absl::InvalidArgumentError("amd-smi process --json: no list of GPUs in the output");
  }
  std::vector<DeviceProcess> processes;
  for (const json& gpu : *list) {
    const json* entries = Child(&gpu, "process_list");
    if (entries == nullptr || !entries->is_array()) continue;
    for (const json& entry : *entries) {
      // {"process_info": {...}}, or the object itself in releases without the wrapper.
      const json* info = entry.is_object() && entry.contains("process_info") ? Child(&entry, "process_info") : &entry;
      if (info == nullptr || !info->is_object()) continue;  // "No running processes detected"
      const json* pid_node = Child(info, "pid");
      if (pid_node == nullptr) continue;
      int64_t pid = 0;
      bool read = false;
      if (pid_node->is_number_unsigned()) {
        read = pid_node->get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max());
        if (read) pid = static_cast<int64_t>(pid_node->get<uint64_t>());
      } else if (pid_node->is_string()) {
        read = absl::SimpleAtoi(pid_node->get<std::string>(), &pid);
      }
      // A pid is a pid_t: a negative or larger number is not one.
      if (!read || pid <= 0 || pid > std::numeric_limits<int32_t>::max()) {
        return absl::InvalidArgumentError(absl::StrCat("amd-smi process --json: not a pid: ", pid_node->dump()));
      }
      DeviceProcess process;
      process.pid = pid;
      process.name = Text(Child(info, "name"));
      process.used_bytes = Bytes(At(*info, {"memory_usage", "vram_mem"}), "B");
      if (!process.used_bytes.has_value()) process.used_bytes = Bytes(Child(info, "mem_usage"), "B");
      processes.push_back(std::move(process));
    }
  }
  return processes;
}

}  // namespace benchfleet::agent
