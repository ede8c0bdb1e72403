#include "cli/fleet_client.h"

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "cli/connection.h"

namespace benchfleet::cli {
namespace {

absl::Status FromGrpc(const grpc::Status& s, const std::string& address, const char* what) {
  // The coordinator's own words for a bad spec or request: "spec.yaml:4: runs.cold must be ...".
  if (s.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
    return absl::InvalidArgumentError(s.error_message());
  }
  return CoordinatorCallError(s, address, what);
}

bool Ended(const v1::SeriesStatus& status) {
  return status.state() == v1::SeriesStatus::STATE_DONE ||
         status.state() == v1::SeriesStatus::STATE_CANCELLED;
}

}  // namespace

FleetClient::FleetClient(std::string address, absl::Duration deadline)
    : address_(std::move(address)), deadline_(deadline) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  auto channel = CoordinatorChannel(address_, args);
  if (!channel.ok()) {
    init_ = channel.status();
    return;
  }
  stub_ = v1::Fleet::NewStub(*channel);
}

std::unique_ptr<grpc::ClientContext> FleetClient::NewContext() const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(absl::ToChronoTime(absl::Now() + deadline_));
  return context;
}

absl::StatusOr<v1::SubmitSeriesResponse> FleetClient::SubmitSeries(
    const v1::SubmitSeriesRequest& request) {
  if (!init_.ok()) return init_;
  v1::SubmitSeriesResponse response;
  grpc::Status s = stub_->SubmitSeries(NewContext().get(), request, &response);
  if (!s.ok()) return FromGrpc(s, address_, "SubmitSeries");
  return response;
}

absl::StatusOr<v1::SeriesStatus> FleetClient::CancelSeries(const std::string& series_id) {
  if (!init_.ok()) return init_;
  v1::CancelSeriesRequest request;
  request.set_series_id(series_id);
  v1::SeriesStatus response;
  grpc::Status s = stub_->CancelSeries(NewContext().get(), request, &response);
  if (!s.ok()) return FromGrpc(s, address_, "CancelSeries");
  return response;
}

absl::StatusOr<std::vector<v1::SeriesStatus>> FleetClient::ListSeries(bool active_only) {
  if (!init_.ok()) return init_;
  v1::ListSeriesRequest request;
  request.set_active_only(active_only);
  v1::ListSeriesResponse response;
  grpc::Status s = stub_->ListSeries(NewContext().get(), request, &response);
  if (!s.ok()) return FromGrpc(s, address_, "ListSeries");
  return std::vector<v1::SeriesStatus>(response.series().begin(), response.series().end());
}

absl::StatusOr<v1::SeriesStatus> FleetClient::GetSeries(const std::string& series_id) {
  if (!init_.ok()) return init_;
  v1::GetSeriesRequest request;
  request.set_series_id(series_id);
  v1::SeriesStatus response;
  grpc::Status s = stub_->GetSeries(NewContext().get(), request, &response);
  if (!s.ok()) return FromGrpc(s, address_, "GetSeries");
  return response;
}

absl::StatusOr<v1::SeriesStatus> FleetClient::WatchSeries(
    const std::string& series_id, const std::function<void(const v1::SeriesStatus&)>& on_status) {
  if (!init_.ok()) return init_;
  v1::GetSeriesRequest request;
  request.set_series_id(series_id);
  grpc::ClientContext context;  // no deadline: a series may run for hours
  std::unique_ptr<grpc::ClientReader<v1::SeriesStatus>> reader =
      stub_->WatchSeries(&context, request);
  v1::SeriesStatus status;
  v1::SeriesStatus last;
  bool any = false;
  while (reader->Read(&status)) {
    on_status(status);
    last = status;
    any = true;
  }
  grpc::Status s = reader->Finish();
  if (!s.ok()) return FromGrpc(s, address_, "WatchSeries");
  if (!any || !Ended(last)) {
    return absl::UnavailableError(
        absl::StrCat("the coordinator at ", address_, " ended the watch before the series ended"));
  }
  return last;
}

absl::StatusOr<v1::Schedule> FleetClient::AddSchedule(const v1::AddScheduleRequest& request) {
  if (!init_.ok()) return init_;
  v1::Schedule response;
  grpc::Status s = stub_->AddSchedule(NewContext().get(), request, &response);
  if (!s.ok()) return FromGrpc(s, address_, "AddSchedule");
  return response;
}

absl::StatusOr<std::vector<v1::Schedule>> FleetClient::ListSchedules() {
  if (!init_.ok()) return init_;
  v1::ListSchedulesResponse response;
  grpc::Status s = stub_->ListSchedules(NewContext().get(), v1::ListSchedulesRequest(), &response);
  if (!s.ok()) return FromGrpc(s, address_, "ListSchedules");
  return std::vector<v1::Schedule>(response.schedules().begin(), response.schedules().end());
}

absl::Status FleetClient::RemoveSchedule(const std::string& schedule_id) {
  if (!init_.ok()) return init_;
  v1::RemoveScheduleRequest request;
  request.set_schedule_id(schedule_id);
  v1::RemoveScheduleResponse response;
  grpc::Status s = stub_->RemoveSchedule(NewContext().get(), request, &response);
  if (!s.ok()) return FromGrpc(s, address_, "RemoveSchedule");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> FleetClient::InvalidateRuns(
    const v1::InvalidateRunsRequest& request) {
  if (!init_.ok()) return init_;
  v1::InvalidateRunsResponse response;
  grpc::Status s = stub_->InvalidateRuns(NewContext().get(), request, &response);
  if (!s.ok()) return FromGrpc(s, address_, "InvalidateRuns");
  return std::vector<std::string>(response.run_ids().begin(), response.run_ids().end());
}

}  // namespace benchfleet::cli
