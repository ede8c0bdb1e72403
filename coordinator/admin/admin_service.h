// AdminService: the gRPC Admin API (ListRuns, ListMachines, GetConditions) that operators and the `benchfleet`
// CLI read a coordinator through. Translates requests into store queries; the store does the
// SQL; each machine's current fleet task comes from the Scheduler. Owned by CoordinatorServer;
// thread-safe.
#ifndef BENCHFLEET_COORDINATOR_ADMIN_ADMIN_SERVICE_H_
#define BENCHFLEET_COORDINATOR_ADMIN_ADMIN_SERVICE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "benchfleet/v1/admin.grpc.pb.h"
#include "coordinator/ingest/connected_agents.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/store/run_store.h"

namespace benchfleet::coordinator {

// Page sizes of ListRuns: the default for 0, and the most one page holds.
inline constexpr int kDefaultRunPageSize = 1000;
inline constexpr int kMaxRunPageSize = 10000;
// The most fingerprints one GetConditions call may name.
inline constexpr int kMaxConditionsFingerprints = 10000;

// Returns the store query for a ListRuns request (page_size defaulted and capped).
absl::StatusOr<RunQuery> RunQueryFromRequest(const v1::ListRunsRequest& request);

class AdminService final : public v1::Admin::Service {
 public:
  // The pointers must outlive the service. `scheduler` may be null: no machine has a current
  // task then.
  AdminService(RunStore* store, ConnectedAgents* agents, Scheduler* scheduler = nullptr);

  grpc::Status ListRuns(grpc::ServerContext* context, const v1::ListRunsRequest* request,
                        v1::ListRunsResponse* response) override;
  grpc::Status ListMachines(grpc::ServerContext* context, const v1::ListMachinesRequest* request,
                            v1::ListMachinesResponse* response) override;
  // Resolves fingerprints to conditions from every set ever reported (RunStore::GetConditions).
  grpc::Status GetConditions(grpc::ServerContext* context, const v1::GetConditionsRequest* request,
                             v1::GetConditionsResponse* response) override;

 private:
  RunStore* const store_;
  ConnectedAgents* const agents_;
  Scheduler* const scheduler_;
};

// Returns each agent's current task among `active` (series newest first, as ListSeries gives
// them): its RUNNING task, else the PENDING task of its oldest series.
std::map<std::string, v1::MachineTask> CurrentTasks(const std::vector<v1::SeriesStatus>& active);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_ADMIN_ADMIN_SERVICE_H_
