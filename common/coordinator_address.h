// A coordinator's address as people and agent.yaml write it: one gRPC target or several to fail
// over between, and whether it is loopback (where plaintext is allowed without asking). Pure
// functions on text, no gRPC; part of benchfleet_common.
#ifndef BENCHFLEET_COMMON_COORDINATOR_ADDRESS_H_
#define BENCHFLEET_COMMON_COORDINATOR_ADDRESS_H_

#include <string>
#include <string_view>
#include <vector>

namespace benchfleet {

// Returns the coordinator addresses in `addresses`: one gRPC target ("host:port", "dns:///name:port",
// "ipv4:10.0.0.1:7443,10.0.0.2:7443", ...) or several separated by commas ("a:7443,b:7443", what an
// agent fails over between, in order). A target with an "ipv4:" or "ipv6:" scheme is one target even
// with commas: gRPC picks among its addresses itself. Surrounding spaces and empty entries go.
std::vector<std::string> SplitCoordinatorAddresses(std::string_view addresses);

// True when every address `target` names is a literal loopback address (an IPv4 address in
// 127.0.0.0/8, parsed as an IP; ::1 bare or in brackets) or the name localhost, each with or
// without a port, under no scheme, "dns:" / "dns:///", "ipv4:" or "ipv6:", or a comma-separated
// list of such addresses (SplitCoordinatorAddresses). Any other name is not, even "127.x.example":
// what it resolves to is not ours to know. A "dns://SERVER/" authority is not either.
bool IsLoopbackTarget(const std::string& target);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_COORDINATOR_ADDRESS_H_
