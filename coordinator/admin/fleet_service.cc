#include "coordinator/admin/fleet_service.h"

#include <google/protobuf/util/message_differencer.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/hashing.h"
#include "coordinator/grpc_status.h"

namespace benchfleet::coordinator {

bool SeriesEnded(const v1::SeriesStatus& status) {
  return status.state() == v1::SeriesStatus::STATE_DONE ||
         status.state() == v1::SeriesStatus::STATE_CANCELLED;
}

FleetService::FleetService(Scheduler* scheduler, const Authorizer* authorizer, absl::Duration watch_poll)
    : scheduler_(scheduler), authorizer_(authorizer), watch_poll_(watch_poll) {}

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
  for (v1::SeriesStatus& s : *series) *response->add_series() = std::move(s);
  return grpc::Status::OK;
}

grpc::Status FleetService::GetSeries(grpc::ServerContext* context, const v1::GetSeriesRequest* request,
                                     v1::SeriesStatus* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Fleet/GetSeries";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  absl::StatusOr<v1::SeriesStatus> status = scheduler_->GetSeries(request->series_id());
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
  absl::StatusOr<v1::SeriesStatus> status = scheduler_->GetSeries(request->series_id());
  if (!status.ok()) return ToGrpcStatus(status.status());
  if (!writer->Write(*status)) return grpc::Status::OK;  // the client went away
  v1::SeriesStatus sent = std::move(*status);
  while (!SeriesEnded(sent)) {
    if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "watch cancelled");
    const uint64_t now = scheduler_->WaitForChange(version, watch_poll_);
    if (now == version) continue;
    version = now;
    status = scheduler_->GetSeries(request->series_id());
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
