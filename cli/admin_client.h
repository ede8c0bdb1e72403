// AdminClient: the CLI's connection to a coordinator's Admin service. Turns gRPC statuses into
// absl::Status with the coordinator's address in the message. Thread-compatible.
#ifndef BENCHFLEET_CLI_ADMIN_CLIENT_H_
#define BENCHFLEET_CLI_ADMIN_CLIENT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "benchfleet/v1/admin.grpc.pb.h"

namespace benchfleet::cli {

class AdminClient {
 public:
  // address is host:port; deadline bounds each call.
  explicit AdminClient(std::string address, absl::Duration deadline = absl::Seconds(30));

  // Returns every run matching request, following pages, oldest first (the order a series ran
  // in; the Admin service pages newest first).
  absl::StatusOr<std::vector<v1::RunRecord>> ListAllRuns(v1::ListRunsRequest request);

  absl::StatusOr<std::vector<v1::Machine>> ListMachines(const v1::ListMachinesRequest& request);

 private:
  std::string address_;
  absl::Duration deadline_;
  std::unique_ptr<v1::Admin::Stub> stub_;
};

}  // namespace benchfleet::cli

#endif  // BENCHFLEET_CLI_ADMIN_CLIENT_H_
