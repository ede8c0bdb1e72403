#include "agent/backends/workflow/container_stats.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/string_views.h"
#include "nlohmann/json.hpp"

namespace benchfleet::agent::workflow {
namespace {

// The first line of a tool's output, for a reason.
std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > 200) line = line.substr(0, 200) + "...";
  return std::string(absl::StripAsciiWhitespace(line));
}

}  // namespace

absl::StatusOr<uint64_t> ParseDockerSize(std::string_view text) {
  const absl::string_view trimmed = absl::StripAsciiWhitespace(ToAbsl(text));
  const size_t end = trimmed.find_first_not_of("0123456789.");
  const absl::string_view number = trimmed.substr(0, end);
  const absl::string_view unit =
      end == absl::string_view::npos ? absl::string_view() : absl::StripAsciiWhitespace(trimmed.substr(end));
  double value = 0;
  if (number.empty() || !absl::SimpleAtod(number, &value) || !std::isfinite(value) || value < 0) {
    return absl::InvalidArgumentError(absl::StrCat("not a size: '", std::string(trimmed), "'"));
  }
  static constexpr std::pair<const char*, double> kUnits[] = {
      {"B", 1},         {"KiB", 1024.0},       {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
      {"kB", 1e3},      {"KB", 1e3},           {"MB", 1e6},        {"GB", 1e9},           {"TB", 1e12}};
  for (const auto& [name, scale] : kUnits) {
    if (unit != name) continue;
    const double bytes = std::round(value * scale);
    if (bytes >= 18446744073709551615.0) {
      return absl::InvalidArgumentError(absl::StrCat("not a size: '", std::string(trimmed), "' (too large)"));
    }
    return static_cast<uint64_t>(bytes);
  }
  return absl::InvalidArgumentError(absl::StrCat("not a size: '", std::string(trimmed), "' (unknown unit)"));
}

absl::StatusOr<DockerStats> ParseDockerStatsLine(std::string_view line) {
  using nlohmann::json;
  json parsed = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("docker stats: not a JSON object: '", FirstLine(std::string(line)), "'"));
  }
  DockerStats stats;
  // The CLI prints "--" for the name of a container whose stats it could not read.
  for (const char* key : {"Name", "Container"}) {
    if (auto it = parsed.find(key);
        it != parsed.end() && it->is_string() && !it->get<std::string>().empty() && it->get<std::string>() != "--") {
      stats.name = it->get<std::string>();
      break;
    }
  }
  auto usage = parsed.find("MemUsage");
  if (usage == parsed.end() || !usage->is_string()) {
    return absl::InvalidArgumentError("docker stats: no MemUsage in the line");
  }
  const std::string text = usage->get<std::string>();
  const size_t slash = text.find('/');
  const std::string used_text = text.substr(0, slash);
  if (absl::StripAsciiWhitespace(used_text) == "--") {
    return absl::InvalidArgumentError(absl::StrCat("docker stats: container ", stats.name, " is not running (MemUsage '",
                                                   text, "')"));
  }
  absl::StatusOr<uint64_t> used = ParseDockerSize(used_text);
  if (!used.ok()) return absl::InvalidArgumentError(absl::StrCat("docker stats: MemUsage ", used.status().message()));
  stats.memory_used_bytes = *used;
  if (slash != std::string::npos) {
    if (absl::StatusOr<uint64_t> limit = ParseDockerSize(text.substr(slash + 1)); limit.ok()) {
      stats.memory_limit_bytes = *limit;
    }
  }
  return stats;
}

std::string DockerProgramFor(const std::string& program) {
  const size_t slash = program.rfind('/');
  const std::string name = slash == std::string::npos ? program : program.substr(slash + 1);
  return name == "docker" ? program : "docker";
}

ContainerMemorySampler::ContainerMemorySampler(CommandRunner* runner, Clock* clock, std::string docker,
                                               std::string container, absl::Duration period, absl::Duration timeout)
    : runner_(runner),
      clock_(clock),
      docker_(std::move(docker)),
      container_(std::move(container)),
      period_(period),
      timeout_(timeout) {}

ContainerMemorySampler::~ContainerMemorySampler() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::vector<std::string> ContainerMemorySampler::argv() const {
  return {docker_, "stats", "--no-stream", "--format", "{{json .}}", container_};
}

void ContainerMemorySampler::SampleOnce() {
  std::string error;
  std::optional<uint64_t> used;
  const std::vector<std::string> command = argv();
  absl::StatusOr<CommandOutput> output = runner_->Run(command, timeout_);
  if (!output.ok()) {
    error = std::string(output.status().message());
  } else if (output->exit_code != 0) {
    error = DescribeFailure(command, *output);
  } else {
    // One line per container named; the first that parses is ours.
    std::string first_error = "docker stats printed nothing";
    size_t start = 0;
    while (start < output->stdout_text.size() && !used.has_value()) {
      size_t end = output->stdout_text.find('\n', start);
      if (end == std::string::npos) end = output->stdout_text.size();
      const std::string line = output->stdout_text.substr(start, end - start);
      start = end + 1;
      if (absl::StripAsciiWhitespace(line).empty()) continue;
      absl::StatusOr<DockerStats> stats = ParseDockerStatsLine(line);
      if (stats.ok()) {
        used = stats->memory_used_bytes;
      } else {
        first_error = std::string(stats.status().message());
      }
    }
    if (!used.has_value()) error = first_error;
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++peak_.attempts;
  if (used.has_value()) {
    ++peak_.samples;
    peak_.peak_bytes = std::max(peak_.peak_bytes.value_or(0), *used);
  } else {
    peak_.last_error = error;
  }
}

void ContainerMemorySampler::Loop() {
  absl::Duration next = clock_->Monotonic() + period_;
  // Sleeps in short slices so Stop never waits a whole period for the thread.
  const absl::Duration slice = std::min(period_, absl::Milliseconds(50));
  while (!stop_) {
    const absl::Duration now = clock_->Monotonic();
    if (now < next) {
      clock_->SleepFor(std::min(slice, next - now));
      continue;
    }
    SampleOnce();
    next += period_;
    if (next < clock_->Monotonic()) next = clock_->Monotonic() + period_;  // a slow sample: no burst
  }
}

void ContainerMemorySampler::Start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] {
    SampleOnce();
    Loop();
  });
}

ContainerPeak ContainerMemorySampler::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  return peak();
}

ContainerPeak ContainerMemorySampler::peak() {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_;
}

}  // namespace benchfleet::agent::workflow
