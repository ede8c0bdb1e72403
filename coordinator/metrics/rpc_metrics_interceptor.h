// Counts every gRPC call the coordinator finishes (CoordinatorMetrics::RpcHandled: full method
// name and status code name) through a server interceptor, so no service handler has to remember
// to. Installed by CoordinatorServer with ServerBuilder::experimental().SetInterceptorCreators.
// The interceptor only observes: it proceeds at every hook point, so streaming calls (WatchSeries)
// run as without it. A method can be left out (`self_reported`): an intercepted call makes gRPC
// take an extra completion-queue round trip for every message it receives (call_op_set.h,
// ContinueFinalizeResultAfterInterception), which the agents' ingest stream (Connect, thousands of
// batches) should not pay; its handler calls RpcHandled itself. Thread-safe.
#ifndef BENCHFLEET_COORDINATOR_METRICS_RPC_METRICS_INTERCEPTOR_H_
#define BENCHFLEET_COORDINATOR_METRICS_RPC_METRICS_INTERCEPTOR_H_

#include <grpcpp/support/server_interceptor.h>
#include <grpcpp/support/status.h>

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "coordinator/metrics/coordinator_metrics.h"

namespace benchfleet::coordinator {

// Returns the canonical name of `code` ("OK", "NOT_FOUND", ...); "UNKNOWN" for a value outside
// the 17 canonical codes.
std::string_view StatusCodeName(grpc::StatusCode code);

// Returns the full gRPC names ("/benchfleet.v1.Admin/ListRuns") of every method of the services
// named `service_full_names` ("benchfleet.v1.Admin", i.e. v1::Admin::service_full_name()), in
// declaration order, read from the generated descriptor pool. A name not in the pool adds none.
std::vector<std::string> MethodsOfServices(const std::vector<std::string>& service_full_names);

// Creates the factory of interceptors that report each finished call to `metrics` (not owned;
// must outlive the gRPC server), except calls of the full method names in `self_reported`.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> NewRpcMetricsInterceptorFactory(
    CoordinatorMetrics* metrics, std::set<std::string> self_reported = {});

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_METRICS_RPC_METRICS_INTERCEPTOR_H_
