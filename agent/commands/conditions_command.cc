// benchfleet-agent conditions: prints this machine's MachineConditions as JSON.
#include <cstdio>

#include "agent/commands/agent_context.h"
#include "agent/commands/commands.h"
#include "agent/probes/conditions_probe.h"
#include "common/proto_json.h"

namespace benchfleet::agent {

int RunConditionsCommand(const ConditionsFlags& flags) {
  Env* env = Env::Default();
  auto config = LoadConfigFor(env, flags.config);
  if (!config.ok()) {
    PrintError("conditions", config.status());
    return kExitBadInput;
  }
  auto conditions = CaptureMachineConditions(env, config->labels);
  if (!conditions.ok()) {
    PrintError("conditions", conditions.status());
    return kExitFailed;
  }
  auto json = MessageToJson(*conditions, /*pretty=*/true);
  if (!json.ok()) {
    PrintError("conditions", json.status());
    return kExitFailed;
  }
  std::printf("%s\n", json->c_str());
  return kExitOk;
}

}  // namespace benchfleet::agent
