#include "cli/admin_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "cli/connection.h"

namespace benchfleet::cli {

AdminClient::AdminClient(std::string address, absl::Duration deadline)
    : address_(std::move(address)), deadline_(deadline) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  auto channel = CoordinatorChannel(address_, args);
  if (!channel.ok()) {
    init_ = channel.status();
    return;
  }
  stub_ = v1::Admin::NewStub(*channel);
}

absl::StatusOr<std::vector<v1::RunRecord>> AdminClient::ListAllRuns(v1::ListRunsRequest request) {
  if (!init_.ok()) return init_;
  std::vector<v1::RunRecord> runs;
  while (true) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + deadline_));
    v1::ListRunsResponse response;
    grpc::Status s = stub_->ListRuns(&context, request, &response);
    if (!s.ok()) return CoordinatorCallError(s, address_, "ListRuns");
    for (auto& run : *response.mutable_runs()) runs.push_back(std::move(run));
    if (response.next_page_token().empty()) break;
    request.set_page_token(response.next_page_token());
  }
  std::reverse(runs.begin(), runs.end());
  return runs;
}

absl::StatusOr<std::vector<v1::Machine>> AdminClient::ListMachines(
    const v1::ListMachinesRequest& request) {
  if (!init_.ok()) return init_;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline_));
  v1::ListMachinesResponse response;
  grpc::Status s = stub_->ListMachines(&context, request, &response);
  if (!s.ok()) return CoordinatorCallError(s, address_, "ListMachines");
  return std::vector<v1::Machine>(response.machines().begin(), response.machines().end());
}

absl::StatusOr<std::vector<v1::MachineConditions>> AdminClient::GetConditions(
    const std::vector<std::string>& fingerprints, size_t per_call) {
  if (!init_.ok()) return init_;
  std::vector<v1::MachineConditions> found;
  for (size_t start = 0; start < fingerprints.size(); start += per_call) {
    v1::GetConditionsRequest request;
    for (size_t i = start; i < fingerprints.size() && i < start + per_call; ++i) {
      request.add_fingerprints(fingerprints[i]);
    }
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + deadline_));
    v1::GetConditionsResponse response;
    grpc::Status s = stub_->GetConditions(&context, request, &response);
    if (!s.ok()) return CoordinatorCallError(s, address_, "GetConditions");
    for (auto& c : *response.mutable_conditions()) found.push_back(std::move(c));
  }
  return found;
}

absl::StatusOr<v1::ImportRunsResponse> AdminClient::ImportRuns(const std::vector<v1::RunRecord>& runs,
                                                               size_t per_call) {
  if (!init_.ok()) return init_;
  v1::ImportRunsResponse merged;
  for (size_t start = 0; start < runs.size(); start += per_call) {
    v1::ImportRunsRequest request;
    for (size_t i = start; i < runs.size() && i < start + per_call; ++i) *request.add_runs() = runs[i];
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + deadline_));
    v1::ImportRunsResponse response;
    grpc::Status s = stub_->ImportRuns(&context, request, &response);
    if (!s.ok()) return CoordinatorCallError(s, address_, "ImportRuns");
    merged.MergeFrom(response);
  }
  return merged;
}

absl::StatusOr<v1::CreateEnrollmentTokenResponse> AdminClient::CreateEnrollmentToken(
    const v1::CreateEnrollmentTokenRequest& request) {
  if (!init_.ok()) return init_;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline_));
  v1::CreateEnrollmentTokenResponse response;
  grpc::Status s = stub_->CreateEnrollmentToken(&context, request, &response);
  if (!s.ok()) return CoordinatorCallError(s, address_, "CreateEnrollmentToken");
  return response;
}

absl::StatusOr<v1::RevokeAgentResponse> AdminClient::RevokeAgent(const std::string& agent_id) {
  if (!init_.ok()) return init_;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline_));
  v1::RevokeAgentRequest request;
  request.set_agent_id(agent_id);
  v1::RevokeAgentResponse response;
  grpc::Status s = stub_->RevokeAgent(&context, request, &response);
  if (!s.ok()) return CoordinatorCallError(s, address_, "RevokeAgent");
  return response;
}

absl::StatusOr<std::string> AdminClient::CreateApiToken(const std::string& name, v1::Role role) {
  if (!init_.ok()) return init_;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline_));
  v1::CreateApiTokenRequest request;
  request.set_name(name);
  request.set_role(role);
  v1::CreateApiTokenResponse response;
  grpc::Status s = stub_->CreateApiToken(&context, request, &response);
  if (!s.ok()) return CoordinatorCallError(s, address_, "CreateApiToken");
  return response.token();
}

absl::Status AdminClient::RevokeApiToken(const std::string& name) {
  if (!init_.ok()) return init_;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline_));
  v1::RevokeApiTokenRequest request;
  request.set_name(name);
  v1::RevokeApiTokenResponse response;
  grpc::Status s = stub_->RevokeApiToken(&context, request, &response);
  if (!s.ok()) return CoordinatorCallError(s, address_, "RevokeApiToken");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::AuditEntry>> AdminClient::ListAudit(uint32_t limit) {
  if (!init_.ok()) return init_;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline_));
  v1::ListAuditRequest request;
  request.set_limit(limit);
  v1::ListAuditResponse response;
  grpc::Status s = stub_->ListAudit(&context, request, &response);
  if (!s.ok()) return CoordinatorCallError(s, address_, "ListAudit");
  return std::vector<v1::AuditEntry>(response.entries().begin(), response.entries().end());
}

absl::StatusOr<RunAgents> LookUpRunAgents(AdminClient& client, const std::vector<v1::RunRecord>& runs) {
  RunAgents agents;
  std::set<std::string> fingerprints;
  for (const v1::RunRecord& r : runs) {
    if (!r.conditions_fingerprint().empty()) fingerprints.insert(r.conditions_fingerprint());
  }
  if (!fingerprints.empty()) {
    absl::StatusOr<std::vector<v1::MachineConditions>> found =
        client.GetConditions(std::vector<std::string>(fingerprints.begin(), fingerprints.end()));
    if (!found.ok() && found.status().code() != absl::StatusCode::kUnimplemented) return found.status();
    if (found.ok()) {
      for (const v1::MachineConditions& c : *found) agents.by_fingerprint[c.fingerprint()] = AgentNameOf(c);
    }
  }
  const bool all_known = std::all_of(runs.begin(), runs.end(), [&](const v1::RunRecord& r) {
    return agents.by_fingerprint.count(r.conditions_fingerprint()) > 0;
  });
  if (all_known) return agents;
  absl::StatusOr<std::vector<v1::Machine>> machines = client.ListMachines(v1::ListMachinesRequest());
  if (!machines.ok()) return machines.status();
  for (const v1::Machine& m : *machines) agents.by_agent_id[m.agent_id()] = AgentNameOf(m.conditions());
  return agents;
}

}  // namespace benchfleet::cli
