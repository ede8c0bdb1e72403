#include "agent/probes/linux_probe.h"

#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/probes/conditions_probe.h"
#include "agent/probes/cpu_host.h"
#include "common/string_views.h"

namespace benchfleet::agent {
namespace {

std::string Unquote(absl::string_view value) {
  value = absl::StripAsciiWhitespace(value);
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front()) {
    value = value.substr(1, value.size() - 2);
  }
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '\\' && i + 1 < value.size()) ++i;  // os-release escapes \" \\ \$ \`
    out += value[i];
  }
  return out;
}

// Returns the value of the first "key<spaces>: value" line of /proc/cpuinfo-style text.
std::string ColonField(std::string_view text, std::string_view key) {
  for (absl::string_view line : absl::StrSplit(ToAbsl(text), '\n')) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    if (absl::StripAsciiWhitespace(line.substr(0, colon)) == ToAbsl(key)) {
      return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
  }
  return "";
}

}  // namespace

OsRelease ParseOsRelease(std::string_view text) {
  OsRelease release;
  for (absl::string_view line : absl::StrSplit(ToAbsl(text), '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;
    const absl::string_view key = line.substr(0, eq);
    if (key == "NAME") release.name = Unquote(line.substr(eq + 1));
    if (key == "VERSION_ID") release.version = Unquote(line.substr(eq + 1));
  }
  return release;
}

std::string ParseCpuModel(std::string_view cpuinfo) {
  for (std::string_view key : {"model name", "Model", "Hardware", "cpu model"}) {
    std::string value = ColonField(cpuinfo, key);
    if (!value.empty()) return value;
  }
  return "";
}

uint64_t ParseMemTotalBytes(std::string_view meminfo) {
  const std::string value = ColonField(meminfo, "MemTotal");  // "16384256 kB"
  std::vector<absl::string_view> parts = absl::StrSplit(value, ' ', absl::SkipEmpty());
  uint64_t amount = 0;
  if (parts.empty() || !absl::SimpleAtoi(parts[0], &amount)) return 0;
  if (parts.size() > 1 && absl::AsciiStrToLower(parts[1]) == "kb") amount *= 1024;
  return amount;
}

absl::Status LinuxProbe::Probe(v1::MachineConditions* conditions) {
  ProbePosixIdentity(conditions);

  // os-release(5): /etc/os-release, else /usr/lib/os-release.
  OsRelease release;
  for (const char* path : {"/etc/os-release", "/usr/lib/os-release"}) {
    if (auto text = env_->ReadFile(root_ + path); text.ok()) {
      release = ParseOsRelease(*text);
      break;
    }
  }
  conditions->set_os_name(release.name.empty() ? "Linux" : release.name);
  conditions->set_os_version(release.version);

  if (auto cpuinfo = env_->ReadFile(root_ + "/proc/cpuinfo"); cpuinfo.ok()) {
    conditions->set_cpu_model(ParseCpuModel(*cpuinfo));
  }
  notes_.clear();
  if (tools_ != nullptr) {
    // lscpu names the CPU model when /proc/cpuinfo does not (most ARM servers) and, with the
    // files under /sys, the host facts that change what a run measures.
    CpuHostFacts host = ProbeCpuHost(env_, tools_, root_);
    if (conditions->cpu_model().empty()) conditions->set_cpu_model(host.lscpu.model_name);
    for (const auto& [key, value] : HostAttributes(host)) (*conditions->mutable_host_attributes())[key] = value;
    notes_ = std::move(host.notes);
  }
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (cores > 0) conditions->set_logical_cores(static_cast<uint32_t>(cores));

  uint64_t memory = 0;
  if (auto meminfo = env_->ReadFile(root_ + "/proc/meminfo"); meminfo.ok()) memory = ParseMemTotalBytes(*meminfo);
  if (memory == 0) {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page_size > 0) memory = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
  }
  conditions->set_memory_bytes(memory);
  return absl::OkStatus();
}

}  // namespace benchfleet::agent
