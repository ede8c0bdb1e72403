#include "coordinator/admin/admin_service.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "coordinator/grpc_status.h"

namespace benchfleet::coordinator {
namespace {

absl::StatusOr<absl::Time> TimeOf(const google::protobuf::Timestamp& ts, const char* field) {
  if (ts.nanos() < 0 || ts.nanos() > 999999999) {
    return absl::InvalidArgumentError(absl::StrCat(field, " has nanos out of range"));
  }
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

}  // namespace

absl::StatusOr<RunQuery> RunQueryFromRequest(const v1::ListRunsRequest& request) {
  RunQuery query;
  query.agent_ids.assign(request.agent_ids().begin(), request.agent_ids().end());
  query.labels.insert(request.labels().begin(), request.labels().end());
  query.backend = request.backend();
  query.task = request.task();
  query.series_id = request.series_id();
  if (request.has_since()) {
    absl::StatusOr<absl::Time> since = TimeOf(request.since(), "since");
    if (!since.ok()) return since.status();
    query.since = *since;
  }
  if (request.has_until()) {
    absl::StatusOr<absl::Time> until = TimeOf(request.until(), "until");
    if (!until.ok()) return until.status();
    query.until = *until;
  }
  query.page_size = request.page_size() == 0
                        ? kDefaultRunPageSize
                        : static_cast<int>(std::min<uint32_t>(request.page_size(), kMaxRunPageSize));
  query.page_token = request.page_token();
  return query;
}

AdminService::AdminService(RunStore* store, ConnectedAgents* agents, Scheduler* scheduler)
    : store_(store), agents_(agents), scheduler_(scheduler) {}

std::map<std::string, v1::MachineTask> CurrentTasks(const std::vector<v1::SeriesStatus>& active) {
  std::map<std::string, v1::MachineTask> current;
  // Oldest series first, so a later PENDING task does not replace an earlier one.
  for (auto series = active.rbegin(); series != active.rend(); ++series) {
    for (const v1::TaskStatus& task : series->tasks()) {
      const bool running = task.state() == v1::TaskStatus::STATE_RUNNING;
      if (!running && task.state() != v1::TaskStatus::STATE_PENDING) continue;
      auto it = current.find(task.agent_id());
      if (it != current.end() &&
          (!running || it->second.state() == v1::TaskStatus::STATE_RUNNING)) {
        continue;
      }
      v1::MachineTask& entry = current[task.agent_id()];
      entry.set_series_id(series->series_id());
      entry.set_series_name(series->name());
      entry.set_task_id(task.task_id());
      entry.set_state(task.state());
    }
  }
  return current;
}

grpc::Status AdminService::ListRuns(grpc::ServerContext*, const v1::ListRunsRequest* request,
                                    v1::ListRunsResponse* response) {
  absl::StatusOr<RunQuery> query = RunQueryFromRequest(*request);
  if (!query.ok()) return ToGrpcStatus(query.status());
  absl::StatusOr<RunPage> page = store_->ListRuns(*query);
  if (!page.ok()) return ToGrpcStatus(page.status());
  response->mutable_runs()->Reserve(static_cast<int>(page->runs.size()));
  for (v1::RunRecord& run : page->runs) *response->add_runs() = std::move(run);
  response->set_next_page_token(page->next_page_token);
  return grpc::Status::OK;
}

grpc::Status AdminService::ListMachines(grpc::ServerContext*, const v1::ListMachinesRequest* request,
                                        v1::ListMachinesResponse* response) {
  absl::StatusOr<std::vector<v1::Machine>> machines = store_->ListMachines(
      std::map<std::string, std::string>(request->labels().begin(), request->labels().end()));
  if (!machines.ok()) return ToGrpcStatus(machines.status());
  std::map<std::string, v1::MachineTask> tasks;
  if (scheduler_ != nullptr) {
    absl::StatusOr<std::vector<v1::SeriesStatus>> active = scheduler_->ListSeries(true);
    if (!active.ok()) return ToGrpcStatus(active.status());
    tasks = CurrentTasks(*active);
  }
  for (v1::Machine& machine : *machines) {
    machine.set_connected(agents_->IsConnected(machine.agent_id()));
    if (auto it = tasks.find(machine.agent_id()); it != tasks.end()) {
      *machine.mutable_current_task() = it->second;
    }
    *response->add_machines() = std::move(machine);
  }
  return grpc::Status::OK;
}

grpc::Status AdminService::GetConditions(grpc::ServerContext*, const v1::GetConditionsRequest* request,
                                         v1::GetConditionsResponse* response) {
  if (request->fingerprints_size() > kMaxConditionsFingerprints) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("GetConditions names ", request->fingerprints_size(), " fingerprints; at most ",
                     kMaxConditionsFingerprints, " per call")));
  }
  const std::set<std::string> wanted(request->fingerprints().begin(), request->fingerprints().end());
  if (wanted.empty()) return grpc::Status::OK;
  absl::StatusOr<std::vector<v1::MachineConditions>> conditions =
      store_->GetConditions(std::vector<std::string>(wanted.begin(), wanted.end()));
  if (!conditions.ok()) return ToGrpcStatus(conditions.status());
  response->mutable_conditions()->Reserve(static_cast<int>(conditions->size()));
  for (v1::MachineConditions& c : *conditions) *response->add_conditions() = std::move(c);
  return grpc::Status::OK;
}

}  // namespace benchfleet::coordinator
