// FleetService: the gRPC Fleet API (fleet.proto), the operator's console for fleet scheduling
// (`benchfleet series`, `schedule`, `runs invalidate`). Each RPC is one Scheduler call; the
// absl::Status of the scheduler becomes the gRPC status here, once. WatchSeries streams a series'
// status on every change until the series ends or the client goes away. A status it answers
// names each task's agent (TaskStatus.hostname, agent_class, from the machines the run store
// knows) and, but in ListSeries, carries the task's newest stored run (TaskStatus.last_run: its
// mode, phase, call and headline figures). Owned by CoordinatorServer; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_ADMIN_FLEET_SERVICE_H_
#define BENCHFLEET_COORDINATOR_ADMIN_FLEET_SERVICE_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "benchfleet/v1/fleet.grpc.pb.h"
#include "coordinator/auth/authorizer.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/store/run_store.h"

namespace benchfleet::coordinator {

class FleetService final : public v1::Fleet::Service {
 public:
  // `scheduler` must outlive the service. WatchSeries looks for changes (and for a client that
  // went away) every `watch_poll`.
  // Every call is first checked by `authorizer` (coordinator/auth/authorizer.h), and every change
  // is written to its audit log. Both pointers must outlive the service.
  // `runs` (which must outlive the service too) names the agents and finds each task's newest
  // run; nullptr leaves TaskStatus.hostname, agent_class and last_run unset.
  FleetService(Scheduler* scheduler, const Authorizer* authorizer, RunStore* runs,
               absl::Duration watch_poll = absl::Seconds(1));

  grpc::Status SubmitSeries(grpc::ServerContext* context, const v1::SubmitSeriesRequest* request,
                            v1::SubmitSeriesResponse* response) override;
  grpc::Status CancelSeries(grpc::ServerContext* context, const v1::CancelSeriesRequest* request,
                            v1::SeriesStatus* response) override;
  grpc::Status ListSeries(grpc::ServerContext* context, const v1::ListSeriesRequest* request,
                          v1::ListSeriesResponse* response) override;
  grpc::Status GetSeries(grpc::ServerContext* context, const v1::GetSeriesRequest* request,
                         v1::SeriesStatus* response) override;
  grpc::Status WatchSeries(grpc::ServerContext* context, const v1::GetSeriesRequest* request,
                           grpc::ServerWriter<v1::SeriesStatus>* writer) override;

  grpc::Status AddSchedule(grpc::ServerContext* context, const v1::AddScheduleRequest* request,
                           v1::Schedule* response) override;
  grpc::Status ListSchedules(grpc::ServerContext* context, const v1::ListSchedulesRequest* request,
                             v1::ListSchedulesResponse* response) override;
  grpc::Status RemoveSchedule(grpc::ServerContext* context,
                              const v1::RemoveScheduleRequest* request,
                              v1::RemoveScheduleResponse* response) override;

  grpc::Status InvalidateRuns(grpc::ServerContext* context,
                              const v1::InvalidateRunsRequest* request,
                              v1::InvalidateRunsResponse* response) override;

 private:
  struct AgentName {
    std::string hostname;
    std::string agent_class;
  };
  using AgentNames = std::map<std::string, AgentName>;  // by agent id

  // Fills the tasks' hostname and agent_class from *names, read again from the store when it
  // lacks a task's agent, and, with_last_run, each task's last_run. What the store cannot say
  // (it failed, or knows no such machine or run) is left unset: the status stands without it.
  void Describe(v1::SeriesStatus* status, bool with_last_run, AgentNames* names) const;
  // The scheduler's status of the series, described.
  absl::StatusOr<v1::SeriesStatus> Described(const std::string& series_id, AgentNames* names) const;

  Scheduler* const scheduler_;
  const Authorizer* const authorizer_;
  RunStore* const runs_;
  const absl::Duration watch_poll_;
};

// Returns true while a task of the status that is RUNNING, or whose agent said how it ended, has
// progressed past its newest stored run (the record of its latest run is still on its way): its
// last_run is unset, or names another phase or call.
bool LastRunsTrail(const v1::SeriesStatus& status);

// Returns true once a series in this state will not change any more (DONE or CANCELLED).
bool SeriesEnded(const v1::SeriesStatus& status);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_ADMIN_FLEET_SERVICE_H_
