// FleetClient: the CLI's connection to a coordinator's Fleet service (series, schedules,
// invalidation). Turns gRPC statuses into absl::Status: a spec the coordinator refused keeps its
// message as is ("SOURCE:LINE: ..."), other errors name the call and the coordinator's address.
// Thread-compatible.
#ifndef BENCHFLEET_CLI_FLEET_CLIENT_H_
#define BENCHFLEET_CLI_FLEET_CLIENT_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "benchfleet/v1/fleet.grpc.pb.h"

namespace benchfleet::cli {

class FleetClient {
 public:
  // address is host:port; deadline bounds each call but WatchSeries.
  explicit FleetClient(std::string address, absl::Duration deadline = absl::Seconds(30));

  absl::StatusOr<v1::SubmitSeriesResponse> SubmitSeries(const v1::SubmitSeriesRequest& request);
  absl::StatusOr<v1::SeriesStatus> CancelSeries(const std::string& series_id);
  absl::StatusOr<std::vector<v1::SeriesStatus>> ListSeries(bool active_only);
  absl::StatusOr<v1::SeriesStatus> GetSeries(const std::string& series_id);
  // Calls on_status with each status the coordinator streams, until the series ended. Returns
  // the last status; UNAVAILABLE when the stream broke before the series ended.
  absl::StatusOr<v1::SeriesStatus> WatchSeries(
      const std::string& series_id, const std::function<void(const v1::SeriesStatus&)>& on_status);

  absl::StatusOr<v1::Schedule> AddSchedule(const v1::AddScheduleRequest& request);
  absl::StatusOr<std::vector<v1::Schedule>> ListSchedules();
  absl::Status RemoveSchedule(const std::string& schedule_id);

  absl::StatusOr<std::vector<std::string>> InvalidateRuns(const v1::InvalidateRunsRequest& request);

 private:
  std::unique_ptr<grpc::ClientContext> NewContext() const;

  std::string address_;
  absl::Status init_;  // not OK when no channel could be made (bad TLS settings): every call returns it
  absl::Duration deadline_;
  std::unique_ptr<v1::Fleet::Stub> stub_;
};

}  // namespace benchfleet::cli

#endif  // BENCHFLEET_CLI_FLEET_CLIENT_H_
