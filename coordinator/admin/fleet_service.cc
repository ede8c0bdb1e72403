#include "coordinator/admin/fleet_service.h"

#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/hashing.h"
#include "common/record_validation.h"
#include "common/grpc_status.h"

namespace benchfleet::coordinator {
namespace {

// Once a watched series ended, how many polls WatchSeries waits at most for the records of its
// tasks' last runs before it ends the stream.
constexpr int kEndGracePolls = 5;

// The run as a watcher needs it (fleet.proto TaskStatus.last_run).
v1::RunRecord Trimmed(const v1::RunRecord& run) {
  v1::RunRecord out;
  out.set_run_id(run.run_id());
  out.set_mode(run.mode());
  out.set_phase(run.phase());
  out.set_call_index(run.call_index());
  *out.mutable_status() = run.status();
  *out.mutable_flags() = run.flags();
  out.set_simulated(run.simulated());
  for (const v1::Metric& m : run.metrics()) {
    if (m.headline() > 0) *out.add_metrics() = m;
  }
  return out;
}

bool HasProgressed(const v1::TaskStatus& task) { return task.runs_done() > 0 || !task.phase().empty(); }

}  // namespace

bool SeriesEnded(const v1::SeriesStatus& status) {
  return status.state() == v1::SeriesStatus::STATE_DONE ||
         status.state() == v1::SeriesStatus::STATE_CANCELLED;
}

bool LastRunsTrail(const v1::SeriesStatus& status) {
  for (const v1::TaskStatus& t : status.tasks()) {
    // Only an agent that is running the task, or said how it ended, has records on their way (a
    // LOST agent's may never come).
    const bool reporting = t.state() == v1::TaskStatus::STATE_RUNNING || t.state() == v1::TaskStatus::STATE_SUCCEEDED ||
                           t.state() == v1::TaskStatus::STATE_FAILED || t.state() == v1::TaskStatus::STATE_CANCELLED;
    if (!reporting || t.runs_done() == 0) continue;
    if (!t.has_last_run()) return true;
    if (!absl::EqualsIgnoreCase(PhaseName(t.last_run().phase()), t.phase()) ||
        t.last_run().call_index() != t.call_index()) {
      return true;
    }
  }
  return false;
}

FleetService::FleetService(Scheduler* scheduler, const Authorizer* authorizer, RunStore* runs,
                           absl::Duration watch_poll)
    : scheduler_(scheduler), authorizer_(authorizer), runs_(runs), watch_poll_(watch_poll) {}

void FleetService::Describe(v1::SeriesStatus* status, bool with_last_run, AgentNames* names) const {
  if (runs_ == nullptr) return;
  const bool unknown = std::any_of(status->tasks().begin(), status->tasks().end(),
                                   [&](const v1::TaskStatus& t) { return names->count(t.agent_id()) == 0; });
  if (unknown) {
    absl::StatusOr<std::vector<v1::Machine>> machines = runs_->ListMachines({});
    if (machines.ok()) {
      for (const v1::Machine& m : *machines) {
        AgentName& name = (*names)[m.agent_id()];
        name.hostname = m.conditions().hostname();
        const auto it = m.conditions().labels().find("class");
        name.agent_class = it == m.conditions().labels().end() ? "" : it->second;
      }
      // An agent the store does not know stays nameless rather than being looked for every time.
      for (const v1::TaskStatus& t : status->tasks()) names->try_emplace(t.agent_id());
    }
  }
  for (v1::TaskStatus& t : *status->mutable_tasks()) {
    if (const auto it = names->find(t.agent_id()); it != names->end()) {
      t.set_hostname(it->second.hostname);
      t.set_agent_class(it->second.agent_class);
    }
    if (!with_last_run || !HasProgressed(t)) continue;
    RunQuery query;
    query.series_id = status->series_id();
    query.agent_ids = {t.agent_id()};
    query.page_size = 1;  // newest first
    absl::StatusOr<RunPage> page = runs_->ListRuns(query);
    if (page.ok() && !page->runs.empty()) *t.mutable_last_run() = Trimmed(page->runs.front());
  }
}

absl::StatusOr<v1::SeriesStatus> FleetService::Described(const std::string& series_id, AgentNames* names) const {
  absl::StatusOr<v1::SeriesStatus> status = scheduler_->GetSeries(series_id);
  if (status.ok()) Describe(&*status, /*with_last_run=*/true, names);
  return status;
}

grpc::Status FleetService::SubmitSeries(grpc::ServerContext* context,
                                        const v1::SubmitSeriesRequest* request,
                                        v1::SubmitSeriesResponse* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Fleet/SubmitSeries";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  absl::StatusOr<v1::SubmitSeriesResponse> submitted = scheduler_->Submit(*request);
  if (!submitted.ok()) return ToGrpcStatus(submitted.status());
  if (!request->dry_run()) {
    authorizer_->Audit(caller, kMethod, submitted->series_id(),
                       nlohmann::json{{"spec_sha256", Sha256Hex(request->spec_yaml())},
                                      {"source_name", request->source_name()},
                                      {"agent_ids", std::vector<std::string>(submitted->agent_ids().begin(), submitted->agent_ids().end())}}
                           .dump());
  }
  *response = std::move(*submitted);
  return grpc::Status::OK;
}

grpc::Status FleetService::CancelSeries(grpc::ServerContext* context,
                                        const v1::CancelSeriesRequest* request,
                                        v1::SeriesStatus* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Fleet/CancelSeries";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  absl::StatusOr<v1::SeriesStatus> status = scheduler_->Cancel(request->series_id());
  if (!status.ok()) return ToGrpcStatus(status.status());
  authorizer_->Audit(caller, kMethod, request->series_id());
  AgentNames names;
  Describe(&*status, /*with_last_run=*/true, &names);
  *response = std::move(*status);
  return grpc::Status::OK;
}

grpc::Status FleetService::ListSeries(grpc::ServerContext* context, const v1::ListSeriesRequest* request,
                                      v1::ListSeriesResponse* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Fleet/ListSeries";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  absl::StatusOr<std::vector<v1::SeriesStatus>> series =
      scheduler_->ListSeries(request->active_only());
  if (!series.ok()) return ToGrpcStatus(series.status());
  response->mutable_series()->Reserve(static_cast<int>(series->size()));
  AgentNames names;
  for (v1::SeriesStatus& s : *series) {
    Describe(&s, /*with_last_run=*/false, &names);
    *response->add_series() = std::move(s);
  }
  return grpc::Status::OK;
}

grpc::Status FleetService::GetSeries(grpc::ServerContext* context, const v1::GetSeriesRequest* request,
                                     v1::SeriesStatus* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Fleet/GetSeries";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  AgentNames names;
  absl::StatusOr<v1::SeriesStatus> status = Described(request->series_id(), &names);
  if (!status.ok()) return ToGrpcStatus(status.status());
  *response = std::move(*status);
  return grpc::Status::OK;
}

grpc::Status FleetService::WatchSeries(grpc::ServerContext* context,
                                       const v1::GetSeriesRequest* request,
                                       grpc::ServerWriter<v1::SeriesStatus>* writer) {
  static constexpr char kMethod[] = "/benchfleet.v1.Fleet/WatchSeries";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  // The version is read before the status, so a change between the two is seen next round.
  // WaitForChange returns at once for a version it has moved past; max() is one it has not.
  uint64_t version =
      scheduler_->WaitForChange(std::numeric_limits<uint64_t>::max(), absl::ZeroDuration());
  AgentNames names;  // read once, and again only for an agent it does not know
  absl::StatusOr<v1::SeriesStatus> status = Described(request->series_id(), &names);
  if (!status.ok()) return ToGrpcStatus(status.status());
  if (!writer->Write(*status)) return grpc::Status::OK;  // the client went away
  v1::SeriesStatus sent = std::move(*status);
  int grace_polls = 0;
  while (true) {
    // A stored record changes no version: while a task's newest run is not stored yet, the
    // status is read again every poll. Once the series ended, that wait is short.
    const bool trailing = runs_ != nullptr && LastRunsTrail(sent);
    if (SeriesEnded(sent) && (!trailing || ++grace_polls > kEndGracePolls)) break;
    if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "watch cancelled");
    const uint64_t now = scheduler_->WaitForChange(version, watch_poll_);
    if (now == version && !trailing) continue;
    version = now;
    status = Described(request->series_id(), &names);
    if (!status.ok()) return ToGrpcStatus(status.status());
    // Versions move on every change of any series: send only when this one changed.
    if (google::protobuf::util::MessageDifferencer::Equals(*status, sent)) continue;
    if (!writer->Write(*status)) return grpc::Status::OK;
    sent = std::move(*status);
  }
  return grpc::Status::OK;
}

grpc::Status FleetService::AddSchedule(grpc::ServerContext* context, const v1::AddScheduleRequest* request,
                                       v1::Schedule* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Fleet/AddSchedule";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  absl::StatusOr<v1::Schedule> schedule = scheduler_->AddSchedule(*request);
  if (!schedule.ok()) return ToGrpcStatus(schedule.status());
  authorizer_->Audit(caller, kMethod, schedule->schedule_id(),
                     nlohmann::json{{"cron", schedule->cron()}, {"spec_sha256", Sha256Hex(request->spec_yaml())}}.dump());
  *response = std::move(*schedule);
  return grpc::Status::OK;
}

grpc::Status FleetService::ListSchedules(grpc::ServerContext* context, const v1::ListSchedulesRequest*,
                                         v1::ListSchedulesResponse* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Fleet/ListSchedules";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  absl::StatusOr<std::vector<v1::Schedule>> schedules = scheduler_->ListSchedules();
  if (!schedules.ok()) return ToGrpcStatus(schedules.status());
  response->mutable_schedules()->Reserve(static_cast<int>(schedules->size()));
  for (v1::Schedule& s : *schedules) *response->add_schedules() = std::move(s);
  return grpc::Status::OK;
}

grpc::Status FleetService::RemoveSchedule(grpc::ServerContext* context,
                                          const v1::RemoveScheduleRequest* request,
                                          v1::RemoveScheduleResponse*) {
  static constexpr char kMethod[] = "/benchfleet.v1.Fleet/RemoveSchedule";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  absl::Status removed = scheduler_->RemoveSchedule(request->schedule_id());
  if (removed.ok()) authorizer_->Audit(caller, kMethod, request->schedule_id());
  return ToGrpcStatus(removed);
}

grpc::Status FleetService::InvalidateRuns(grpc::ServerContext* context,
                                          const v1::InvalidateRunsRequest* request,
                                          v1::InvalidateRunsResponse* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Fleet/InvalidateRuns";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  absl::StatusOr<std::vector<std::string>> run_ids = scheduler_->InvalidateRuns(*request);
  if (!run_ids.ok()) return ToGrpcStatus(run_ids.status());
  authorizer_->Audit(caller, kMethod, absl::StrCat(run_ids->size(), " runs"),
                     nlohmann::json{{"run_ids", *run_ids}, {"reason", request->reason()}}.dump());
  for (std::string& id : *run_ids) response->add_run_ids(std::move(id));
  return grpc::Status::OK;
}

}  // namespace benchfleet::coordinator
