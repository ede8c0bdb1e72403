// The agent's identity: a UUID made once and kept in state_dir/agent_id, so that the coordinator
// sees the same agent across restarts and upgrades. Stateless functions over the Env; callers
// must not race two first starts on one state directory (the service manager runs one agent).
#ifndef BENCHFLEET_AGENT_IDENTITY_AGENT_ID_H_
#define BENCHFLEET_AGENT_IDENTITY_AGENT_ID_H_

#include <string>

#include "absl/status/statusor.h"
#include "common/env.h"

namespace benchfleet::agent {

inline constexpr char kAgentIdFile[] = "agent_id";

// Returns the id kept in state_dir/agent_id, making (and durably writing) a new one the first
// time. FAILED_PRECONDITION when the file holds something other than a UUID: an id is never
// replaced silently, since the coordinator would see a new agent.
absl::StatusOr<std::string> LoadOrCreateAgentId(Env* env, const std::string& state_dir);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_IDENTITY_AGENT_ID_H_
