// AdminService: the gRPC Admin API (ListRuns, ListMachines, GetConditions, ListRegressionChecks; and, for operators,
// imports, enrollment tokens, revocation, API tokens and the audit log) that operators and the `benchfleet`
// CLI read a coordinator through. Translates requests into store queries; the store does the
// SQL; each machine's current fleet task comes from the Scheduler. Owned by CoordinatorServer;
// thread-safe.
#ifndef BENCHFLEET_COORDINATOR_ADMIN_ADMIN_SERVICE_H_
#define BENCHFLEET_COORDINATOR_ADMIN_ADMIN_SERVICE_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "benchfleet/v1/admin.grpc.pb.h"
#include "coordinator/auth/auth_admin.h"
#include "coordinator/auth/authorizer.h"
#include "coordinator/ingest/connected_agents.h"
#include "coordinator/metrics/coordinator_metrics.h"
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
  // task then. Every call is first checked by `authorizer`; every change is audited.
  // `close_agent_streams` closes the open streams of an agent on this coordinator and returns
  // how many it closed (RevokeAgent).
  // `metrics` counts the conflicts of ImportRuns.
  AdminService(RunStore* store, ConnectedAgents* agents, Scheduler* scheduler,
               const Authorizer* authorizer, AuthAdmin* auth_admin, AuthStore* auth_store,
               CoordinatorMetrics* metrics, std::function<int(const std::string&)> close_agent_streams);

  grpc::Status ListRuns(grpc::ServerContext* context, const v1::ListRunsRequest* request,
                        v1::ListRunsResponse* response) override;
  grpc::Status ListMachines(grpc::ServerContext* context, const v1::ListMachinesRequest* request,
                            v1::ListMachinesResponse* response) override;
  // Resolves fingerprints to conditions from every set ever reported (RunStore::GetConditions).
  grpc::Status GetConditions(grpc::ServerContext* context, const v1::GetConditionsRequest* request,
                             v1::GetConditionsResponse* response) override;
  // The newest verdict of each point among the matching runs (RunStore::ListRegressionChecks).
  grpc::Status ListRegressionChecks(grpc::ServerContext* context, const v1::ListRegressionChecksRequest* request,
                                    v1::ListRegressionChecksResponse* response) override;

  // Operator only. Records read from other machines' folders, stored exactly once each.
  grpc::Status ImportRuns(grpc::ServerContext* context, const v1::ImportRunsRequest* request,
                          v1::ImportRunsResponse* response) override;
  grpc::Status CreateEnrollmentToken(grpc::ServerContext* context,
                                     const v1::CreateEnrollmentTokenRequest* request,
                                     v1::CreateEnrollmentTokenResponse* response) override;
  grpc::Status RevokeAgent(grpc::ServerContext* context, const v1::RevokeAgentRequest* request,
                           v1::RevokeAgentResponse* response) override;
  grpc::Status CreateApiToken(grpc::ServerContext* context, const v1::CreateApiTokenRequest* request,
                              v1::CreateApiTokenResponse* response) override;
  grpc::Status RevokeApiToken(grpc::ServerContext* context, const v1::RevokeApiTokenRequest* request,
                              v1::RevokeApiTokenResponse* response) override;
  grpc::Status ListAudit(grpc::ServerContext* context, const v1::ListAuditRequest* request,
                         v1::ListAuditResponse* response) override;

 private:
  RunStore* const store_;
  ConnectedAgents* const agents_;
  Scheduler* const scheduler_;
  const Authorizer* const authorizer_;
  AuthAdmin* const auth_admin_;
  AuthStore* const auth_store_;
  CoordinatorMetrics* const metrics_;
  const std::function<int(const std::string&)> close_agent_streams_;
};

// Returns each agent's current task among `active` (series newest first, as ListSeries gives
// them): its RUNNING task, else the PENDING task of its oldest series.
std::map<std::string, v1::MachineTask> CurrentTasks(const std::vector<v1::SeriesStatus>& active);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_ADMIN_ADMIN_SERVICE_H_
