// agent.yaml: the operator's configuration of one agent (coordinator address, state directory,
// labels, allow-list). Bad configuration fails fast at start-up with the file and line; unknown
// keys are errors, so a typo never silently widens or narrows what an agent does.
// Plain data and pure functions; thread-safe. See agent/agent.example.yaml.
#ifndef BENCHFLEET_AGENT_CONFIG_AGENT_CONFIG_H_
#define BENCHFLEET_AGENT_CONFIG_AGENT_CONFIG_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/env.h"

namespace benchfleet::agent {

// A command the operator lets specs run (allow.commands), by name: the spec names it and fills
// its placeholders; it never supplies a program or arguments of its own.
struct CommandTemplate {
  // argv[0] an absolute path; arguments may hold the placeholders of kCommandPlaceholders, whole
  // or inside an argument ("--input={prompts}"), which the backend fills with checked values.
  std::vector<std::string> argv;
  // Names of environment variables a spec may set for it (e.g. ACCELERATOR); none by default.
  std::vector<std::string> env;
};

// The placeholders a command template may hold; {container} is a fresh name the agent gives each
// run's container (docker run --name {container} ...), whose memory it then reads from docker stats;
// {batch_size} is the run's batch size (the workflow backend's matrix axis batch_size), a checked
// positive integer.
inline constexpr const char* kCommandPlaceholders[] = {"{config}", "{prompts}", "{output}", "{container}",
                                                       "{batch_size}"};

// What the agent may touch on behalf of a coordinator. Empty lists allow nothing.
struct AllowConfig {
  std::vector<std::string> backends;     // backend kinds, e.g. "llama-server"
  std::vector<std::string> executables;  // absolute paths of programs it may start
  std::vector<std::string> model_dirs;   // absolute directories models may be read from
  std::vector<std::string> urls;         // base URLs it may call, e.g. "http://127.0.0.1:8188"
  // Absolute directories a coordinator's task may name a ComfyUI workflow file in (a workflow is
  // read, and sent to ComfyUI: without this, a coordinator could have any readable file read).
  std::vector<std::string> workflow_dirs;
  // Commands (backend workflow) by name, e.g. "workflow-v6".
  std::map<std::string, CommandTemplate> commands;
};

// What the agent samples during each timed run (agent/probes/device_sampler.h).
enum class DeviceSampling {
  kAuto,         // the accelerators' tools only (nvidia-smi, rocm-smi, pmset); nothing without one
  kOff,          // nothing
  kWithCpuLoad,  // as kAuto, else the host's CPU load (flags CONTENDED on a shared machine)
};

// Parses "auto", "off" or "with_cpu_load"; INVALID_ARGUMENT naming the three otherwise.
absl::StatusOr<DeviceSampling> ParseDeviceSampling(std::string_view text);

struct AgentConfig {
  // The file this was read from; empty when the agent runs without one.
  std::string source;
  // coordinator: one address (HOST:PORT, or any gRPC target: a DNS name with several addresses
  // works as gRPC resolves it) or, from a YAML list, several joined by commas, which the uplink
  // tries in order, moving to the next when one cannot be reached or its stream breaks.
  std::string coordinator;
  std::string state_dir;
  // Where `serve` serves its own /metrics, HOST:PORT; empty: not served.
  std::string metrics_listen;
  std::map<std::string, std::string> labels;
  AllowConfig allow;
  // device_sampling; the --device-sampling flag of run and serve overrides it.
  DeviceSampling device_sampling = DeviceSampling::kAuto;
  // ca_cert: the fleet CA certificate that verifies the coordinator (--ca-cert overrides it);
  // empty: <state_dir>/tls/ca.pem once enrolled, else plaintext to a loopback coordinator only.
  std::string ca_cert;
  // plaintext: true allows plaintext to a non-loopback coordinator (one run with --insecure).
  bool plaintext = false;
  // renew_before: `serve` renews the agent certificate when less than this is left of it (an
  // absl duration, "720h"); --renew-before overrides it.
  absl::Duration renew_before = absl::Hours(720);
};

// Parses agent.yaml text. source names it in error messages ("FILE:LINE: ...").
absl::StatusOr<AgentConfig> ParseAgentConfig(std::string_view yaml, std::string_view source);

// Reads and parses the file at path.
absl::StatusOr<AgentConfig> LoadAgentConfig(Env* env, const std::string& path);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_CONFIG_AGENT_CONFIG_H_
