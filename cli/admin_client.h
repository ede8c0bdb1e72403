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
#include "cli/output_format.h"

namespace benchfleet::cli {

class AdminClient {
 public:
  // address is host:port; deadline bounds each call.
  explicit AdminClient(std::string address, absl::Duration deadline = absl::Seconds(30));

  // Returns every run matching request, following pages, oldest first (the order a series ran
  // in; the Admin service pages newest first).
  absl::StatusOr<std::vector<v1::RunRecord>> ListAllRuns(v1::ListRunsRequest request);

  absl::StatusOr<std::vector<v1::Machine>> ListMachines(const v1::ListMachinesRequest& request);

  // Returns the conditions recorded under each of the fingerprints the coordinator knows (the
  // others are left out), asking at most `per_call` at a time (the Admin service takes 10000).
  // UNIMPLEMENTED from a coordinator that predates GetConditions.
  absl::StatusOr<std::vector<v1::MachineConditions>> GetConditions(const std::vector<std::string>& fingerprints,
                                                                   size_t per_call = 10000);

  // Operator calls (coordinator/auth/README.md).
  // Sends the records in calls of at most `per_call` records; the responses merged.
  absl::StatusOr<v1::ImportRunsResponse> ImportRuns(const std::vector<v1::RunRecord>& runs, size_t per_call = 500);
  absl::StatusOr<v1::CreateEnrollmentTokenResponse> CreateEnrollmentToken(const v1::CreateEnrollmentTokenRequest& request);
  absl::StatusOr<v1::RevokeAgentResponse> RevokeAgent(const std::string& agent_id);
  absl::StatusOr<std::string> CreateApiToken(const std::string& name, v1::Role role);
  absl::Status RevokeApiToken(const std::string& name);
  absl::StatusOr<std::vector<v1::AuditEntry>> ListAudit(uint32_t limit);

 private:
  std::string address_;
  absl::Status init_;  // not OK when no channel could be made (bad TLS settings): every call returns it
  absl::Duration deadline_;
  std::unique_ptr<v1::Admin::Stub> stub_;
};

// Returns who measured each of `runs`, for FormatRuns: the conditions their fingerprints name
// (GetConditions) and, when some fingerprint is unknown to the coordinator (or it predates
// GetConditions), the latest conditions of every agent (ListMachines).
absl::StatusOr<RunAgents> LookUpRunAgents(AdminClient& client, const std::vector<v1::RunRecord>& runs);

}  // namespace benchfleet::cli

#endif  // BENCHFLEET_CLI_ADMIN_CLIENT_H_
