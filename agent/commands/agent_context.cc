#include "agent/commands/agent_context.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "agent/probes/conditions_probe.h"
#include "agent/identity/agent_id.h"
#include "agent/probes/process_tree.h"
#include "agent/probes/vendor_probes.h"
#include "agent/uplink/enrollment.h"

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

absl::StatusOr<ChannelSecurity> ResolveChannelSecurity(Env* env, const AgentConfig& config,
                                                       const std::string& state_dir, const std::string& ca_flag,
                                                       const std::string& coordinator) {
  ChannelSecurity security;
  security.allow_plaintext_off_loopback = config.plaintext;
  const std::string tls_dir = JoinPath(state_dir, kTlsDirName);
  std::string ca_path = !ca_flag.empty() ? ca_flag : config.ca_cert;
  if (ca_path.empty() && env->FileExists(JoinPath(tls_dir, kFleetCaFile))) ca_path = JoinPath(tls_dir, kFleetCaFile);
  // A renewal a crash cut short is completed first, so the key and certificate read match.
  if (env->FileExists(tls_dir)) {
    if (absl::Status s = FinishStagedRenewal(env, tls_dir); !s.ok()) return s;
  }
  if (!ca_path.empty()) {
    auto ca = ReadCredentialFile(ca_path, "the fleet CA certificate (--ca-cert / ca_cert:)");
    if (!ca.ok()) return ca.status();
    security.ca_cert_pem = std::move(*ca);
    const std::string cert_path = JoinPath(tls_dir, kAgentCertFile);
    const std::string key_path = JoinPath(tls_dir, kAgentKeyFile);
    if (env->FileExists(cert_path) && env->FileExists(key_path)) {
      auto cert = ReadCredentialFile(cert_path, "the agent certificate");
      if (!cert.ok()) return cert.status();
      auto key = ReadCredentialFile(key_path, "the agent key");
      if (!key.ok()) return key.status();
      security.cert_pem = std::move(*cert);
      security.key_pem = std::move(*key);
    }
  }
  if (auto credentials = MakeChannelCredentials(coordinator, security); !credentials.ok()) return credentials.status();
  return security;
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

absl::StatusOr<UplinkOptions> MakeUplinkOptions(const AgentSetup& setup, const std::string& coordinator,
                                                const ChannelSecurity& security) {
  UplinkOptions options;
  options.target = coordinator;
  options.agent_id = setup.agent_id;
  options.conditions = setup.conditions;
  auto credentials = MakeChannelCredentials(coordinator, security);
  if (!credentials.ok()) return credentials.status();
  options.credentials = std::move(*credentials);
  options.log = [](std::string_view line) {
    std::fprintf(stderr, "uplink: %.*s\n", static_cast<int>(line.size()), line.data());
  };
  return options;
}

absl::StatusOr<UplinkOptions> MakeUplinkOptionsFor(Env* env, const AgentConfig& config, const AgentSetup& setup,
                                                   const std::string& coordinator, const std::string& ca_flag) {
  auto security = ResolveChannelSecurity(env, config, setup.state_dir, ca_flag, coordinator);
  if (!security.ok()) return security.status();
  return MakeUplinkOptions(setup, coordinator, *security);
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
