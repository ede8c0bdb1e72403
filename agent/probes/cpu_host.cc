#include "agent/probes/cpu_host.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/string_views.h"
#include "nlohmann/json.hpp"

namespace benchfleet::agent {
namespace {

using nlohmann::json;

std::optional<uint32_t> Count(const std::string& text) {
  uint32_t n = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &n)) return std::nullopt;
  return n;
}

void Visit(const json& entries, LscpuFacts* facts, int depth) {
  if (!entries.is_array() || depth > 8) return;
  for (const json& entry : entries) {
    if (!entry.is_object()) continue;
    auto field = entry.find("field");
    auto data = entry.find("data");
    if (field != entry.end() && field->is_string() && data != entry.end() && data->is_string()) {
      const std::string name(absl::StripSuffix(absl::StripAsciiWhitespace(field->get<std::string>()), ":"));
      const std::string value = data->get<std::string>();
      if (name == "Architecture") facts->architecture = value;
      if (name == "Model name" && facts->model_name.empty()) facts->model_name = value;
      if (name == "CPU(s)") facts->cpus = Count(value);
      if (name == "Socket(s)") facts->sockets = Count(value);
      if (name == "Core(s) per socket" || name == "Core(s) per cluster") facts->cores_per_socket = Count(value);
      if (name == "Thread(s) per core") facts->threads_per_core = Count(value);
      if (name == "NUMA node(s)") facts->numa_nodes = Count(value);
    }
    if (auto children = entry.find("children"); children != entry.end()) Visit(*children, facts, depth + 1);
  }
}

}  // namespace

absl::StatusOr<LscpuFacts> ParseLscpuJson(std::string_view text) {
  json parsed = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object() || !parsed.contains("lscpu") || !parsed["lscpu"].is_array()) {
    return absl::InvalidArgumentError("lscpu -J: the output is not {\"lscpu\": [...]}");
  }
  LscpuFacts facts;
  Visit(parsed["lscpu"], &facts, 0);
  if (facts.architecture.empty() && !facts.cpus.has_value()) {
    return absl::InvalidArgumentError("lscpu -J: neither Architecture nor CPU(s) in the output");
  }
  return facts;
}

absl::StatusOr<LoadAverage> ParseLoadAvg(std::string_view text) {
  std::vector<absl::string_view> fields = absl::StrSplit(ToAbsl(text), absl::ByAnyChar(" \n"), absl::SkipEmpty());
  LoadAverage load;
  std::vector<absl::string_view> tasks;
  if (fields.size() >= 4) tasks = absl::StrSplit(fields[3], '/');
  if (fields.size() < 4 || !absl::SimpleAtod(fields[0], &load.one_minute) || tasks.size() != 2 ||
      !absl::SimpleAtoi(tasks[0], &load.runnable) || !absl::SimpleAtoi(tasks[1], &load.total)) {
    return absl::InvalidArgumentError(
        absl::StrCat("/proc/loadavg: not 'load1 load5 load15 runnable/total last_pid': '",
                     absl::StripAsciiWhitespace(ToAbsl(text)).substr(0, 80), "'"));
  }
  return load;
}

std::optional<uint32_t> CountCpuList(std::string_view list) {
  const absl::string_view trimmed = absl::StripAsciiWhitespace(ToAbsl(list));
  if (trimmed.empty()) return std::nullopt;
  uint32_t count = 0;
  for (absl::string_view part : absl::StrSplit(trimmed, ',')) {
    std::vector<absl::string_view> range = absl::StrSplit(part, '-');
    uint32_t lo = 0, hi = 0;
    if (range.size() == 1 && absl::SimpleAtoi(range[0], &lo)) {
      ++count;
    } else if (range.size() == 2 && absl::SimpleAtoi(range[0], &lo) && absl::SimpleAtoi(range[1], &hi) && lo <= hi) {
      count += hi - lo + 1;
    } else {
      return std::nullopt;
    }
  }
  return count;
}

CpuHostFacts ProbeCpuHost(Env* env, CommandRunner* runner, const std::string& root, absl::Duration timeout) {
  CpuHostFacts facts;
  const std::vector<std::string> argv = {"lscpu", "-J"};
  auto output = runner->Run(argv, timeout);
  if (!output.ok()) {
    facts.notes.push_back({"cpu", std::string(output.status().message())});
  } else if (output->exit_code != 0) {
    facts.notes.push_back({"cpu", DescribeFailure(argv, *output)});
  } else if (auto lscpu = ParseLscpuJson(output->stdout_text); lscpu.ok()) {
    facts.lscpu = std::move(*lscpu);
  } else {
    facts.notes.push_back({"cpu", std::string(lscpu.status().message())});
  }
  const std::string governor_path = root + "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor";
  if (auto governor = env->ReadFile(governor_path); governor.ok()) {
    facts.governor = std::string(absl::StripAsciiWhitespace(*governor));
  } else {
    facts.notes.push_back({"cpu", absl::StrCat("no cpufreq governor: ", governor.status().message())});
  }
  const std::string nodes_path = root + "/sys/devices/system/node/online";
  if (auto nodes = env->ReadFile(nodes_path); nodes.ok()) {
    facts.numa_nodes = CountCpuList(*nodes);
    if (!facts.numa_nodes) facts.notes.push_back({"cpu", absl::StrCat(nodes_path, ": not a node list")});
  } else {
    facts.numa_nodes = facts.lscpu.numa_nodes;
    if (!facts.numa_nodes) facts.notes.push_back({"cpu", absl::StrCat("no NUMA nodes: ", nodes.status().message())});
  }
  return facts;
}

std::map<std::string, std::string> HostAttributes(const CpuHostFacts& facts) {
  std::map<std::string, std::string> attributes;
  if (!facts.governor.empty()) attributes["cpufreq_governor"] = facts.governor;
  const auto add = [&](const char* key, const std::optional<uint32_t>& value) {
    if (value) attributes[key] = absl::StrCat(*value);
  };
  add("numa_nodes", facts.numa_nodes);
  add("sockets", facts.lscpu.sockets);
  add("cores_per_socket", facts.lscpu.cores_per_socket);
  add("threads_per_core", facts.lscpu.threads_per_core);
  return attributes;
}

}  // namespace benchfleet::agent
