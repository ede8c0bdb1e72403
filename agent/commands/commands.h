// The benchfleet-agent commands, one Run function each; main.cc parses the flags into these
// structs. Each returns the process exit code (agent_context.h) and prints its own errors.
// Called once per process from the main thread.
#ifndef BENCHFLEET_AGENT_COMMANDS_COMMANDS_H_
#define BENCHFLEET_AGENT_COMMANDS_COMMANDS_H_

#include <string>
#include <vector>

namespace benchfleet::agent {

struct ConditionsFlags {
  std::string config;
};
int RunConditionsCommand(const ConditionsFlags& flags);

struct ServeFlags {
  std::string config;
  std::string coordinator;
  std::string state_dir;
  std::string ca_cert;  // the fleet CA (--ca-cert, BENCHFLEET_CA_CERT); else ca_cert: of agent.yaml
  double send_rate = 0;
  bool exit_when_drained = false;
  // HOST:PORT for the agent's own /metrics; empty: metrics_listen of agent.yaml, else not served.
  std::string metrics_listen;
  // "auto", "off" or "with_cpu_load"; empty: device_sampling of agent.yaml.
  std::string device_sampling;
  // Enrolls first when the state directory holds no certificate yet.
  std::string enroll_token_file;
  // Renews the agent certificate when less than this is left of it (absl duration: "720h");
  // empty: renew_before of agent.yaml (default 720h).
  std::string renew_before;
};
int RunServeCommand(const ServeFlags& flags);

struct SimulateFlags {
  std::string out;
  int runs = 12;
  std::string series;
  std::string config;
  std::string state_dir;
  std::string coordinator;
  std::string ca_cert;  // the fleet CA (--ca-cert, BENCHFLEET_CA_CERT); else ca_cert: of agent.yaml
  double timeout_seconds = 300;
  int connect_attempts = 5;
};
int RunSimulateCommand(const SimulateFlags& flags);

struct ImportFlags {
  std::vector<std::string> paths;
  std::string coordinator;
  std::string config;
  std::string state_dir;
  std::string ca_cert;  // the fleet CA (--ca-cert, BENCHFLEET_CA_CERT); else ca_cert: of agent.yaml
  double timeout_seconds = 300;
  int connect_attempts = 5;
};
int RunImportCommand(const ImportFlags& flags);

struct RunFlags {
  std::string spec;  // the series spec (YAML)
  std::string out;   // the series folder to write
  std::string config;
  std::string state_dir;
  std::string coordinator;
  std::string ca_cert;  // the fleet CA (--ca-cert, BENCHFLEET_CA_CERT); else ca_cert: of agent.yaml
  double timeout_seconds = 300;
  int connect_attempts = 5;
  // "auto", "off" or "with_cpu_load"; empty: device_sampling of agent.yaml.
  std::string device_sampling;
};
int RunRunCommand(const RunFlags& flags);

struct EnrollFlags {
  std::string config;
  std::string coordinator;
  std::string state_dir;
  std::string ca_cert;
  std::string token_file;  // else $BENCHFLEET_ENROLL_TOKEN
};
int RunEnrollCommand(const EnrollFlags& flags);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_COMMANDS_COMMANDS_H_
