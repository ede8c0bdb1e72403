#include "agent/commands/agent_context.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "agent/conditions/conditions_probe.h"
#include "agent/identity/agent_id.h"
#include "agent/platform/process_tree.h"
#include "agent/platform/vendor_probes.h"

namespace benchfleet::agent {
namespace {

std::string GetEnv(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

absl::StatusOr<AgentConfig> LoadConfigFor(Env* env, const std::string& flag_path) {
  std::string path = flag_path;
  if (path.empty()) path = GetEnv("BENCHFLEET_CONFIG");
  if (path.empty() && env->FileExists(kDefaultConfigPath)) path = kDefaultConfigPath;
  if (path.empty()) return AgentConfig{};
  return LoadAgentConfig(env, path);
}

std::string ResolveStateDir(const std::string& flag, const AgentConfig& config) {
  if (!flag.empty()) return flag;
  if (!config.state_dir.empty()) return config.state_dir;
  if (::geteuid() == 0) return "/var/lib/benchfleet";
  if (std::string xdg = GetEnv("XDG_STATE_HOME"); !xdg.empty()) return JoinPath(xdg, "benchfleet");
  if (std::string home = GetEnv("HOME"); !home.empty()) return JoinPath(home, ".local/state/benchfleet");
  return "benchfleet-state";
}

std::string ResolveCoordinator(const std::string& flag, const AgentConfig& config) {
  return flag.empty() ? config.coordinator : flag;
}

absl::Status CheckTokenFile(Env* env, const std::string& path) {
  if (path.empty()) return absl::OkStatus();
  auto token = env->ReadFile(path);
  if (!token.ok()) {
    return absl::Status(token.status().code(),
                        absl::StrCat("token file (--token-file / BENCHFLEET_TOKEN_FILE): ", token.status().message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<AgentSetup> SetUpAgent(Env* env, const AgentConfig& config, const std::string& state_dir_flag) {
  AgentSetup setup;
  setup.state_dir = ResolveStateDir(state_dir_flag, config);
  auto id = LoadOrCreateAgentId(env, setup.state_dir);
  if (!id.ok()) {
    return absl::Status(id.status().code(),
                        absl::StrCat("state directory ", setup.state_dir, ": ", id.status().message()));
  }
  setup.agent_id = *id;
  auto conditions = CaptureMachineConditions(env, config.labels);
  if (!conditions.ok()) return conditions.status();
  setup.conditions = std::move(*conditions);
  return setup;
}

UplinkOptions MakeUplinkOptions(const AgentSetup& setup, const std::string& coordinator,
                                const std::string& token_file) {
  UplinkOptions options;
  options.target = coordinator;
  options.agent_id = setup.agent_id;
  options.conditions = setup.conditions;
  options.token_file = token_file;
  options.log = [](std::string_view line) {
    std::fprintf(stderr, "uplink: %.*s\n", static_cast<int>(line.size()), line.data());
  };
  return options;
}

void PrintError(std::string_view command, const absl::Status& status) {
  std::fprintf(stderr, "benchfleet-agent %.*s: error: %.*s\n", static_cast<int>(command.size()), command.data(),
               static_cast<int>(status.message().size()), status.message().data());
}

void PrintProgress(std::string_view line) {
  std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
}

absl::StatusOr<DeviceSampling> ResolveDeviceSampling(const std::string& flag, const AgentConfig& config) {
  if (flag.empty()) return config.device_sampling;
  auto mode = ParseDeviceSampling(flag);
  if (!mode.ok()) return absl::InvalidArgumentError(absl::StrCat("--device-sampling: ", mode.status().message()));
  return *mode;
}

RunSampling StartRunSampling(Env* env, DeviceSampling mode, const std::function<void(std::string_view)>& progress) {
  const auto say = [&](std::string_view line) {
    if (progress) progress(line);
  };
  if (mode == DeviceSampling::kOff) {
    say("device sampling: off");
    return RunSampling();
  }
  auto monitor = FindDeviceMonitor(SystemToolRunner(), env, mode == DeviceSampling::kWithCpuLoad);
  if (!monitor.ok()) {
    say(absl::StrCat("device sampling: none (", monitor.status().message(), ")"));
    return RunSampling();
  }
  say(absl::StrCat("device sampling: ", (*monitor)->vendor(), " (", (*monitor)->memory_source(), ")"));
  SamplerOptions options;
  options.monitor = monitor->get();
  options.clock = &env->clock();
  options.is_own_process = OwnProcessTree(env);
  auto sampler = std::make_unique<DeviceSampler>(std::move(options));
  return RunSampling(std::move(*monitor), std::move(sampler));
}

}  // namespace benchfleet::agent
