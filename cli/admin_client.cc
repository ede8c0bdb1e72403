#include "cli/admin_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace benchfleet::cli {
namespace {

absl::Status FromGrpc(const grpc::Status& s, const std::string& address, const char* what) {
  std::string message = absl::StrCat(what, " on coordinator ", address, ": ", s.error_message());
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
    message = absl::StrCat("cannot reach the coordinator at ", address, " (", s.error_message(),
                           "); is it running? (--coordinator or BENCHFLEET_COORDINATOR)");
  }
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), message);
}

}  // namespace

AdminClient::AdminClient(std::string address, absl::Duration deadline)
    : address_(std::move(address)), deadline_(deadline) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  stub_ = v1::Admin::NewStub(
      grpc::CreateCustomChannel(address_, grpc::InsecureChannelCredentials(), args));
}

absl::StatusOr<std::vector<v1::RunRecord>> AdminClient::ListAllRuns(v1::ListRunsRequest request) {
  std::vector<v1::RunRecord> runs;
  while (true) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + deadline_));
    v1::ListRunsResponse response;
    grpc::Status s = stub_->ListRuns(&context, request, &response);
    if (!s.ok()) return FromGrpc(s, address_, "ListRuns");
    for (auto& run : *response.mutable_runs()) runs.push_back(std::move(run));
    if (response.next_page_token().empty()) break;
    request.set_page_token(response.next_page_token());
  }
  std::reverse(runs.begin(), runs.end());
  return runs;
}

absl::StatusOr<std::vector<v1::Machine>> AdminClient::ListMachines(
    const v1::ListMachinesRequest& request) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline_));
  v1::ListMachinesResponse response;
  grpc::Status s = stub_->ListMachines(&context, request, &response);
  if (!s.ok()) return FromGrpc(s, address_, "ListMachines");
  return std::vector<v1::Machine>(response.machines().begin(), response.machines().end());
}

}  // namespace benchfleet::cli
