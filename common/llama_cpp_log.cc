#include "common/llama_cpp_log.h"

#include <cctype>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace benchfleet::llama_cpp {
namespace {

using absl::string_view;

string_view ToAbsl(std::string_view s) { return string_view(s.data(), s.size()); }

// The backend family of a device or buffer name: its leading letters ("CUDA0" and "CUDA_Host"
// -> "CUDA", "Vulkan0" -> "Vulkan", "RPC[10.0.0.2:50052]" -> "RPC"); Metal's device is "MTL0"
// on current builds and "Metal" on older ones, its buffers "Metal" and "Metal_Mapped".
std::string Family(string_view name) {
  size_t n = 0;
  while (n < name.size() && std::isalpha(static_cast<unsigned char>(name[n]))) ++n;
  std::string family(name.substr(0, n));
  if (family == "MTL") family = "Metal";
  return family;
}

// The ggml backends of GPUs and accelerators, by family: a buffer of one of these that the
// report does not name is not known to be anyone's.
bool IsGpuFamily(const std::string& family) {
  for (const char* f : {"CUDA", "ROCm", "HIP", "Vulkan", "Metal", "SYCL", "OpenCL", "CANN", "MUSA", "RPC", "HTP",
                        "Kompute", "WebGPU", "zDNN"}) {
    if (family == f) return true;
  }
  return false;
}

// CPU-type ggml devices (the CPU backend and the host-side helpers that list as devices).
bool IsCpuDeviceName(string_view name) {
  return name == "CPU" || absl::StartsWith(name, "CPU_") || name == "BLAS" || name == "AMX";
}

// Host memory by name alone, whatever the log says about devices: the CPU backend's buffers
// ("CPU", "CPU_Mapped", "CPU_REPACK", ...), pinned host memory of a GPU backend ("CUDA_Host",
// "ROCm_Host", ...) and the breakdown table's "Host" row.
bool IsHostName(string_view name) {
  return name == "CPU" || name == "Host" || absl::StartsWith(name, "CPU_") || absl::EndsWith(name, "_Host");
}

// Returns the text after the last `tag` of the line, or nullopt.
std::optional<string_view> After(string_view line, string_view tag) {
  const size_t at = line.rfind(tag);
  if (at == string_view::npos) return std::nullopt;
  return line.substr(at + tag.size());
}

// Reads "(24105 MiB, 24105 MiB free)"-like text for its "N MiB free".
std::optional<int64_t> FreeMib(string_view text) {
  const size_t at = text.rfind(" MiB free");
  if (at == string_view::npos) return std::nullopt;
  size_t start = at;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(text[start - 1]))) --start;
  int64_t value = 0;
  if (start == at || !absl::SimpleAtoi(text.substr(start, at - start), &value)) return std::nullopt;
  return value;
}

// Takes a balanced "( ... )" group off the front of *text (after spaces); its inside, or nullopt.
std::optional<string_view> TakeParenthesized(string_view* text) {
  string_view t = absl::StripLeadingAsciiWhitespace(*text);
  if (!absl::ConsumePrefix(&t, "(")) return std::nullopt;
  int depth = 1;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '(') ++depth;
    if (t[i] == ')' && --depth == 0) {
      *text = t.substr(i + 1);
      return t.substr(0, i);
    }
  }
  return std::nullopt;
}

void AddFound(LogReport* report, LogDevice device) {
  for (const LogDevice& d : report->found) {
    if (d.name == device.name) return;
  }
  report->found.push_back(std::move(device));
}

// `llama_model_load_from_file_impl: using device CUDA0 (NVIDIA A10) (0000:81:00.0) - 22039 MiB free`
// (older builds print no PCI id; llama_prepare_model_devices on current ones).
std::optional<LogDevice> ParseUsingDevice(string_view line, int number) {
  if (absl::StrContains(line, "skipping device")) return std::nullopt;
  std::optional<string_view> rest = After(line, "using device ");
  if (!rest.has_value()) return std::nullopt;
  const size_t space = rest->find(' ');
  LogDevice device;
  device.name = std::string(rest->substr(0, space));
  if (device.name.empty()) return std::nullopt;
  device.gpu = !IsCpuDeviceName(device.name);
  device.line = number;
  if (space != string_view::npos) {
    string_view tail = rest->substr(space);
    if (std::optional<string_view> description = TakeParenthesized(&tail)) {
      device.description = std::string(absl::StripAsciiWhitespace(*description));
    }
    device.free_mib = FreeMib(*rest);
  }
  return device;
}

// `common_param:   - CUDA0   : NVIDIA A100-SXM4-80GB (81037 MiB, 80562 MiB free)` in the
// device_info list.
std::optional<LogDevice> ParseDeviceInfoRow(string_view line, int number) {
  const size_t dash = line.find("  - ");
  if (dash == string_view::npos) return std::nullopt;
  const std::optional<string_view> rest = line.substr(dash + 4);
  if (!absl::StrContains(*rest, " MiB free)")) return std::nullopt;
  const size_t colon = rest->find(':');
  if (colon == string_view::npos) return std::nullopt;
  LogDevice device;
  device.name = std::string(absl::StripAsciiWhitespace(rest->substr(0, colon)));
  if (device.name.empty() || absl::StrContains(device.name, " ")) return std::nullopt;
  string_view description = rest->substr(colon + 1);
  if (const size_t paren = description.rfind(" ("); paren != string_view::npos) {
    description = description.substr(0, paren);
  }
  device.description = std::string(absl::StripAsciiWhitespace(description));
  device.gpu = !IsCpuDeviceName(device.name);
  device.free_mib = FreeMib(*rest);
  device.line = number;
  return device;
}

}  // namespace

std::vector<LogDevice> LogReport::Gpus() const {
  std::vector<LogDevice> out;
  auto add = [&](const LogDevice& d) {
    if (!d.gpu) return;
    for (const LogDevice& o : out) {
      if (o.name == d.name) return;
    }
    out.push_back(d);
  };
  for (const LogDevice& d : found) add(d);
  for (const LogDevice& d : used) add(d);
  return out;
}

LogReport ParseLogReport(std::string_view log) {
  LogReport report;
  bool in_device_info = false;
  std::string cuda_family;  // "CUDA" or "ROCm" after `ggml_cuda_init: found N ... devices:`
  bool in_sycl_table = false;
  int number = 0;
  for (string_view line : absl::StrSplit(ToAbsl(log), '\n')) {
    ++number;
    absl::ConsumeSuffix(&line, "\r");
    if (report.no_gpu_warning.empty() && absl::StrContains(line, "no usable GPU found")) {
      report.no_gpu_warning = std::string(absl::StripAsciiWhitespace(line));
      report.no_gpu_line = number;
      continue;
    }
    if (report.build.empty()) {
      std::optional<string_view> build = After(line, "print_info: build ");
      if (!build.has_value()) build = After(line, "build: ");
      if (build.has_value() && !build->empty() && std::isdigit(static_cast<unsigned char>((*build)[0]))) {
        report.build = std::string(absl::StripAsciiWhitespace(*build));
        report.build_line = number;
        continue;
      }
    }
    if (absl::StrContains(line, "device_info:")) {
      in_device_info = true;
      continue;
    }
    if (in_device_info) {
      if (std::optional<LogDevice> device = ParseDeviceInfoRow(line, number)) {
        AddFound(&report, std::move(*device));
        continue;
      }
      in_device_info = false;
    }
    if (std::optional<string_view> rest = After(line, "ggml_cuda_init: found ")) {
      // `ggml_cuda_init: found 1 CUDA devices:` / `... found 2 ROCm devices (Total VRAM: ...):`
      cuda_family = absl::StrContains(*rest, " ROCm devices") ? "ROCm" : "CUDA";
      continue;
    }
    if (!cuda_family.empty()) {
      string_view t = absl::StripLeadingAsciiWhitespace(line);
      if (absl::ConsumePrefix(&t, "Device ")) {
        const size_t colon = t.find(':');
        int index = 0;
        if (colon != string_view::npos && absl::SimpleAtoi(t.substr(0, colon), &index)) {
          LogDevice device;
          device.name = absl::StrCat(cuda_family, index);
          string_view description = t.substr(colon + 1);
          description = description.substr(0, description.find(','));
          device.description = std::string(absl::StripAsciiWhitespace(description));
          device.gpu = true;
          device.line = number;
          AddFound(&report, std::move(device));
          continue;
        }
      }
      cuda_family.clear();
    }
    if (std::optional<string_view> rest = After(line, "ggml_vulkan: ")) {
      // `ggml_vulkan: 0 = NVIDIA GeForce RTX 3090 (NVIDIA) | uma: 0 | fp16: 1 | ...`
      const size_t eq = rest->find(" = ");
      int index = 0;
      if (eq != string_view::npos && absl::SimpleAtoi(rest->substr(0, eq), &index)) {
        string_view description = rest->substr(eq + 3);
        description = description.substr(0, description.find(" |"));
        if (const size_t paren = description.rfind(" ("); paren != string_view::npos) {
          description = description.substr(0, paren);
        }
        LogDevice device;
        device.name = absl::StrCat("Vulkan", index);
        device.description = std::string(absl::StripAsciiWhitespace(description));
        device.gpu = true;
        device.line = number;
        AddFound(&report, std::move(device));
        continue;
      }
    }
    {
      // Metal: `ggml_metal_device_init: GPU name:   Apple M1 Pro` (current builds) or
      // `ggml_metal_init: found device: Apple M1 Pro` (older ones).
      std::optional<string_view> metal;
      if (absl::StrContains(line, "ggml_metal")) {
        metal = After(line, "GPU name:");
        if (!metal.has_value()) metal = After(line, "found device:");
      }
      if (metal.has_value()) {
        LogDevice device;
        device.name = "MTL0";
        device.description = std::string(absl::StripAsciiWhitespace(*metal));
        device.gpu = true;
        device.line = number;
        AddFound(&report, std::move(device));
        continue;
      }
    }
    if (absl::StrContains(line, "SYCL devices:")) {
      in_sycl_table = true;
      continue;
    }
    if (in_sycl_table) {
      // `|  0| [level_zero:gpu:0]|  Intel Arc A770 Graphics|  12.55|  512| ...`
      std::vector<string_view> cells = absl::StrSplit(line.substr(std::min(line.find('|'), line.size())), '|');
      int index = 0;
      if (cells.size() >= 4 && absl::SimpleAtoi(absl::StripAsciiWhitespace(cells[1]), &index) &&
          absl::StrContains(cells[2], "[")) {
        LogDevice device;
        device.name = absl::StrCat("SYCL", index);
        device.description = std::string(absl::StripAsciiWhitespace(cells[3]));
        device.gpu = !absl::StrContains(cells[2], ":cpu:");
        device.line = number;
        AddFound(&report, std::move(device));
        continue;
      }
      // The table's header and rule lines go on; anything else ends it.
      if (!absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "|") &&
          !absl::StrContains(line, "|--")) {
        in_sycl_table = false;
      }
    }
    if (std::optional<LogDevice> device = ParseUsingDevice(line, number)) {
      report.used.push_back(std::move(*device));
      continue;
    }
    if (std::optional<string_view> rest = After(line, "offloaded ")) {
      // `load_tensors: offloaded 33/33 layers to GPU`
      const size_t slash = rest->find('/');
      const size_t space = rest->find(' ');
      LogOffload offload;
      if (slash != string_view::npos && space != string_view::npos && slash < space &&
          absl::StartsWith(rest->substr(space), " layers to GPU") &&
          absl::SimpleAtoi(rest->substr(0, slash), &offload.offloaded) &&
          absl::SimpleAtoi(rest->substr(slash + 1, space - slash - 1), &offload.total)) {
        offload.line = number;
        report.offload = offload;
      }
    }
  }
  return report;
}

v1::MemoryKind ClassifyBuffer(std::string_view name_in, const LogReport& report, bool device_row) {
  const string_view name = ToAbsl(name_in);
  if (IsHostName(name)) return v1::MEMORY_KIND_HOST_BUFFER;
  const std::string family = Family(name);
  for (const LogDevice& gpu : report.Gpus()) {
    if (gpu.name == name || (!family.empty() && Family(gpu.name) == family)) return v1::MEMORY_KIND_DEVICE_BUFFER;
  }
  if (device_row && !IsCpuDeviceName(name)) return v1::MEMORY_KIND_DEVICE_BUFFER;
  // The report lists the devices and this is none of its GPUs: a CPU-type backend's buffer
  // (AMX, CPU_REPACK, ...), unless it is named after a GPU backend the report does not name.
  if (report.reports_devices() && !IsGpuFamily(family)) return v1::MEMORY_KIND_HOST_BUFFER;
  return v1::MEMORY_KIND_BUFFER_UNKNOWN;
}

std::string DescribeDevice(const LogDevice& device) {
  if (device.description.empty()) return device.name;
  return absl::StrCat(device.name, " (", device.description, ")");
}

std::string DevicesText(const LogReport& report) {
  std::vector<std::string> gpus;
  for (const LogDevice& gpu : report.Gpus()) gpus.push_back(DescribeDevice(gpu));
  if (!gpus.empty()) return absl::StrJoin(gpus, "; ");
  if (!report.no_usable_gpu()) return "";
  if (!report.no_gpu_warning.empty()) return absl::StrCat("none (", report.no_gpu_warning, ")");
  return "none (no GPU in the server's device list)";
}

std::string OffloadedLayersText(const LogReport& report) {
  if (report.offload.has_value()) return absl::StrCat(report.offload->offloaded, "/", report.offload->total);
  if (report.no_usable_gpu()) return "0/0";
  return "";
}

}  // namespace benchfleet::llama_cpp
