// What a coordinator answers to an agent's Hello: the Welcome, and whether the stream may go on.
// Used by AgentGatewayService. Pure functions; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_INGEST_HELLO_H_
#define BENCHFLEET_COORDINATOR_INGEST_HELLO_H_

#include "absl/status/status.h"
#include "benchfleet/v1/gateway.pb.h"

namespace benchfleet::coordinator {

// Returns OK when the agent may connect; otherwise the status the stream ends with:
// FAILED_PRECONDITION when its API revision is outside what this build accepts
// ("agent speaks API revision 0; this coordinator accepts 1..1; upgrade the agent"),
// INVALID_ARGUMENT when the Hello has no agent_id.
absl::Status CheckHello(const v1::Hello& hello);

// Returns the Welcome for `hello`, given CheckHello's verdict (the reason is its message).
v1::Welcome MakeWelcome(const v1::Hello& hello, const absl::Status& verdict);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_INGEST_HELLO_H_
