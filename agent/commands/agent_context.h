// What every benchfleet-agent command resolves the same way: agent.yaml, the state directory,
// the coordinator address, the token file, and printing. Used by main.cc's commands only;
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
#include "agent/platform/device_monitor.h"
#include "agent/platform/device_sampler.h"
#include "agent/uplink/uplink.h"
#include "benchfleet/v1/conditions.pb.h"
#include "common/env.h"

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

// Checks that the token file, when one is named, can be read (it is sent once TLS is there).
absl::Status CheckTokenFile(Env* env, const std::string& path);

// Who this agent is, where it keeps its state, and what it measures under.
struct AgentSetup {
  std::string state_dir;
  std::string agent_id;
  v1::MachineConditions conditions;
};

// Resolves the state directory, loads (or makes) the agent id and captures the conditions with
// the config's labels.
absl::StatusOr<AgentSetup> SetUpAgent(Env* env, const AgentConfig& config, const std::string& state_dir_flag);

// Returns uplink options for this agent and coordinator, logging to stderr.
UplinkOptions MakeUplinkOptions(const AgentSetup& setup, const std::string& coordinator,
                                const std::string& token_file);

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
