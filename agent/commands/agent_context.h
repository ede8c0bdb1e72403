// What every benchfleet-agent command resolves the same way: agent.yaml, the state directory,
// the coordinator address, how to reach it (TLS), and printing. Used by main.cc's commands only;
// not thread-safe (called at start-up).
#ifndef BENCHFLEET_AGENT_COMMANDS_AGENT_CONTEXT_H_
#define BENCHFLEET_AGENT_COMMANDS_AGENT_CONTEXT_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/config/agent_config.h"
#include "agent/probes/device_monitor.h"
#include "agent/probes/device_sampler.h"
#include "agent/uplink/uplink.h"
#include "benchfleet/v1/conditions.pb.h"
#include "common/env.h"
#include "common/grpc_channel.h"

namespace benchfleet::agent {

// Exit codes of benchfleet-agent.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;      // the work failed (unreachable, rejected, refused)
inline constexpr int kExitBadInput = 2;    // bad flags, config or input files

inline constexpr char kDefaultConfigPath[] = "/etc/benchfleet/agent.yaml";

// Returns the config: from flag_path when given, else $BENCHFLEET_CONFIG, else
// /etc/benchfleet/agent.yaml when it exists, else an empty config (all defaults).
absl::StatusOr<AgentConfig> LoadConfigFor(Env* env, const std::string& flag_path);

// Returns the state directory: the flag, else state_dir of the config, else /var/lib/benchfleet
// for root, else $XDG_STATE_HOME/benchfleet, else $HOME/.local/state/benchfleet.
std::string ResolveStateDir(const std::string& flag, const AgentConfig& config);

// Returns the coordinator address: the flag (whose default is $BENCHFLEET_COORDINATOR), else
// coordinator of the config; empty when none is given.
std::string ResolveCoordinator(const std::string& flag, const AgentConfig& config);

// Where an enrolled agent keeps its certificate, key and the fleet CA: <state_dir>/tls/.
inline constexpr char kTlsDirName[] = "tls";
inline constexpr char kAgentCertFile[] = "agent.pem";
inline constexpr char kAgentKeyFile[] = "agent-key.pem";
inline constexpr char kFleetCaFile[] = "ca.pem";

// How this agent reaches `coordinator`: the CA from ca_flag, else ca_cert of the config, else
// <state_dir>/tls/ca.pem once enrolled; the client certificate from <state_dir>/tls/ when there.
// INVALID_ARGUMENT (with what to give) when the coordinator is not on loopback and there is no CA
// and the config does not say `plaintext: true`.
absl::StatusOr<ChannelSecurity> ResolveChannelSecurity(Env* env, const AgentConfig& config,
                                                       const std::string& state_dir, const std::string& ca_flag,
                                                       const std::string& coordinator);

// Who this agent is, where it keeps its state, and what it measures under.
struct AgentSetup {
  std::string state_dir;
  std::string agent_id;
  v1::MachineConditions conditions;
};

// Resolves the state directory, loads (or makes) the agent id and captures the conditions with
// the config's labels.
absl::StatusOr<AgentSetup> SetUpAgent(Env* env, const AgentConfig& config, const std::string& state_dir_flag);

// Returns uplink options for this agent and coordinator, logging to stderr; the credentials
// from ResolveChannelSecurity. INVALID_ARGUMENT when they cannot be made.
absl::StatusOr<UplinkOptions> MakeUplinkOptions(const AgentSetup& setup, const std::string& coordinator,
                                                const ChannelSecurity& security);

// Enrolls this agent (agent/uplink/enrollment.h): the CA from ca_flag or ca_cert of the config,
// the token from token_file or $BENCHFLEET_ENROLL_TOKEN. INVALID_ARGUMENT for what is missing.
absl::Status EnrollThisAgent(Env* env, const AgentConfig& config, const std::string& state_dir,
                             const std::string& coordinator, const std::string& ca_flag,
                             const std::string& token_file);

// ResolveChannelSecurity, then MakeUplinkOptions.
absl::StatusOr<UplinkOptions> MakeUplinkOptionsFor(Env* env, const AgentConfig& config, const AgentSetup& setup,
                                                   const std::string& coordinator, const std::string& ca_flag);

// The device monitor and sampler that watch a command's timed runs, kept alive for the whole
// series (or, in serve, for every task). watcher() is nullptr when nothing is sampled.
class RunSampling {
 public:
  RunSampling() = default;
  RunSampling(std::unique_ptr<DeviceMonitor> monitor, std::unique_ptr<DeviceSampler> sampler)
      : monitor_(std::move(monitor)), sampler_(std::move(sampler)) {}
  RunWatcher* watcher() const { return sampler_.get(); }

 private:
  std::unique_ptr<DeviceMonitor> monitor_;   // declared first: outlives the sampler reading it
  std::unique_ptr<DeviceSampler> sampler_;
};

// Returns the sampling mode: the flag ("auto", "off", "with_cpu_load") when given, else the
// config's device_sampling. INVALID_ARGUMENT for another flag value.
absl::StatusOr<DeviceSampling> ResolveDeviceSampling(const std::string& flag, const AgentConfig& config);

// Finds the monitor mode allows (FindDeviceMonitor through the agent's $PATH: kAuto the
// accelerators' tools only, kWithCpuLoad also the host's CPU load) and a DeviceSampler on it,
// once a second on env's clock, counting the agent's own process tree as not contention. When
// mode is kOff or no monitor answers, watcher() is nullptr; progress gets one line saying
// which monitor samples, or why none does.
RunSampling StartRunSampling(Env* env, DeviceSampling mode, const std::function<void(std::string_view)>& progress);

// Prints "benchfleet-agent COMMAND: error: MESSAGE" on stderr.
void PrintError(std::string_view command, const absl::Status& status);

// Prints one progress line on stderr.
void PrintProgress(std::string_view line);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_COMMANDS_AGENT_CONTEXT_H_
