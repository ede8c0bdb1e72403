// The one place a status crosses between gRPC and Abseil: canonical codes map one to one, both
// ways. The coordinator's services answer with ToGrpcStatus; the agent and the CLI read a call's
// outcome with FromGrpcStatus. Part of benchfleet_channel (the library that links gRPC). Pure;
// thread-safe.
#ifndef BENCHFLEET_COMMON_GRPC_STATUS_H_
#define BENCHFLEET_COMMON_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include <string_view>

#include "absl/status/status.h"

namespace benchfleet {

grpc::Status ToGrpcStatus(const absl::Status& status);

// The status of a gRPC call as an absl::Status of the same code; its message is "CONTEXT: " then
// the server's message when `context` is not empty, else the server's message alone.
absl::Status FromGrpcStatus(const grpc::Status& status, std::string_view context = {});

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_GRPC_STATUS_H_
