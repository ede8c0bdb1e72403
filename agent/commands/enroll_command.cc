// benchfleet-agent enroll: trades the operator's one-time token for this agent's certificate.
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/commands/agent_context.h"
#include "agent/commands/commands.h"
#include "agent/identity/agent_id.h"
#include "agent/uplink/enrollment.h"

namespace benchfleet::agent {

absl::Status EnrollThisAgent(Env* env, const AgentConfig& config, const std::string& state_dir,
                             const std::string& coordinator, const std::string& ca_flag,
                             const std::string& token_file) {
  if (coordinator.empty()) {
    return absl::InvalidArgumentError(
        "no coordinator: pass --coordinator, set BENCHFLEET_COORDINATOR or coordinator: in agent.yaml");
  }
  const std::string ca_path = !ca_flag.empty() ? ca_flag : config.ca_cert;
  if (ca_path.empty()) {
    return absl::InvalidArgumentError(
        "enrollment needs the fleet CA certificate that verifies the coordinator: --ca-cert, BENCHFLEET_CA_CERT "
        "or ca_cert: in agent.yaml");
  }
  auto ca = ReadCredentialFile(ca_path, "the fleet CA certificate");
  if (!ca.ok()) return ca.status();
  std::string token;
  if (!token_file.empty()) {
    auto read = ReadCredentialFile(token_file, "the enrollment token file");
    if (!read.ok()) return read.status();
    token = std::move(*read);
  } else if (const char* from_env = std::getenv("BENCHFLEET_ENROLL_TOKEN"); from_env != nullptr) {
    token = from_env;
  }
  if (token.empty()) {
    return absl::InvalidArgumentError("no enrollment token: --token-file FILE or BENCHFLEET_ENROLL_TOKEN");
  }
  auto agent_id = LoadOrCreateAgentId(env, state_dir);
  if (!agent_id.ok()) {
    return absl::Status(agent_id.status().code(),
                        absl::StrCat("state directory ", state_dir, ": ", agent_id.status().message()));
  }
  EnrollmentRequest request;
  request.coordinator = coordinator;
  request.ca_cert_pem = std::move(*ca);
  request.agent_id = *agent_id;
  request.token = std::move(token);
  request.tls_dir = JoinPath(state_dir, kTlsDirName);
  auto enrolled = Enroll(request);
  if (!enrolled.ok()) return enrolled.status();
  PrintProgress(absl::StrCat("enrolled agent ", *agent_id, " at ", coordinator, ": ", enrolled->certificate_path,
                             " valid until ", absl::FormatTime("%Y-%m-%d", enrolled->not_after, absl::UTCTimeZone())));
  return absl::OkStatus();
}

int RunEnrollCommand(const EnrollFlags& flags) {
  Env* env = Env::Default();
  auto config = LoadConfigFor(env, flags.config);
  if (!config.ok()) {
    PrintError("enroll", config.status());
    return kExitBadInput;
  }
  absl::Status status = EnrollThisAgent(env, *config, ResolveStateDir(flags.state_dir, *config),
                                        ResolveCoordinator(flags.coordinator, *config), flags.ca_cert,
                                        flags.token_file);
  if (!status.ok()) {
    PrintError("enroll", status);
    return absl::IsInvalidArgument(status) || absl::IsNotFound(status) ? kExitBadInput : kExitFailed;
  }
  return kExitOk;
}

}  // namespace benchfleet::agent
