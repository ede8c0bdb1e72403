// The one place an absl::Status becomes a grpc::Status: canonical codes map one to one.
// Used by ingest/ and admin/. Pure; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_GRPC_STATUS_H_
#define BENCHFLEET_COORDINATOR_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace benchfleet::coordinator {

grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_GRPC_STATUS_H_
