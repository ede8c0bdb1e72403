#include "coordinator/auth/authorizer.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/hashing.h"
#include "common/tls/certificates.h"
#include "common/grpc_status.h"
#include "coordinator/log.h"

namespace benchfleet::coordinator {
namespace {

constexpr char kAgentCnPrefix[] = "agent:";

grpc::Status Unauthenticated(std::string message) {
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, std::move(message));
}

}  // namespace

const std::map<std::string, Access, std::less<>>& MethodAccessTable() {
  static const auto* table = new std::map<std::string, Access, std::less<>>{
      {"/grpc.health.v1.Health/Check", Access::kAnyone},
      {"/grpc.health.v1.Health/Watch", Access::kAnyone},
      {"/benchfleet.v1.Enrollment/Enroll", Access::kAnyone},
      {"/benchfleet.v1.Enrollment/Renew", Access::kAgent},
      {"/benchfleet.v1.AgentGateway/Connect", Access::kAgent},
      {"/benchfleet.v1.Admin/ListRuns", Access::kViewer},
      {"/benchfleet.v1.Admin/ListMachines", Access::kViewer},
      {"/benchfleet.v1.Admin/GetConditions", Access::kViewer},
      {"/benchfleet.v1.Admin/ListRegressionChecks", Access::kViewer},
      {"/benchfleet.v1.Admin/ImportRuns", Access::kOperator},
      {"/benchfleet.v1.Admin/CreateEnrollmentToken", Access::kOperator},
      {"/benchfleet.v1.Admin/RevokeAgent", Access::kOperator},
      {"/benchfleet.v1.Admin/CreateApiToken", Access::kOperator},
      {"/benchfleet.v1.Admin/RevokeApiToken", Access::kOperator},
      {"/benchfleet.v1.Admin/ListAudit", Access::kOperator},
      {"/benchfleet.v1.Fleet/SubmitSeries", Access::kOperator},
      {"/benchfleet.v1.Fleet/CancelSeries", Access::kOperator},
      {"/benchfleet.v1.Fleet/ListSeries", Access::kViewer},
      {"/benchfleet.v1.Fleet/GetSeries", Access::kViewer},
      {"/benchfleet.v1.Fleet/WatchSeries", Access::kViewer},
      {"/benchfleet.v1.Fleet/AddSchedule", Access::kOperator},
      {"/benchfleet.v1.Fleet/ListSchedules", Access::kViewer},
      {"/benchfleet.v1.Fleet/RemoveSchedule", Access::kOperator},
      {"/benchfleet.v1.Fleet/InvalidateRuns", Access::kOperator},
  };
  return *table;
}

std::string Caller::Actor() const {
  switch (kind) {
    case Kind::kAgent:
      return absl::StrCat("agent:", agent_id);
    case Kind::kToken:
      return absl::StrCat("token:", token_name);
    case Kind::kPlaintext:
      return "plaintext";
    case Kind::kAnonymous:
      break;
  }
  return "anonymous";
}

std::string AgentCommonName(std::string_view agent_id) { return kAgentCnPrefix + std::string(agent_id); }

Authorizer::Authorizer(AuthStore* store, Clock* clock, bool enforce)
    : store_(store), clock_(clock), enforce_(enforce) {}

grpc::Status Authorizer::Authorize(const grpc::ServerContextBase* context, std::string_view method,
                                   Caller* caller) const {
  *caller = Caller{};
  const auto& table = MethodAccessTable();
  const auto found = table.find(method);
  if (found == table.end()) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        std::string(method) + " has no access rule: refused");
  }
  if (!enforce_) {
    caller->kind = Caller::Kind::kPlaintext;
    return grpc::Status::OK;
  }
  switch (found->second) {
    case Access::kAnyone:
      return grpc::Status::OK;
    case Access::kAgent:
      return AuthorizeAgent(context, caller);
    case Access::kViewer:
    case Access::kOperator:
      return AuthorizeToken(context, found->second, caller);
  }
  return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "refused");
}

grpc::Status Authorizer::AuthorizeAgent(const grpc::ServerContextBase* context, Caller* caller) const {
  const std::shared_ptr<const grpc::AuthContext> auth = context->auth_context();
  const std::vector<grpc::string_ref> pems =
      auth == nullptr ? std::vector<grpc::string_ref>{} : auth->FindPropertyValues("x509_pem_cert");
  if (pems.empty()) {
    return Unauthenticated(
        "agents connect with the client certificate they got by enrollment (benchfleet-agent enroll)");
  }
  auto info = tls::ParseCertificate(std::string(pems.front().data(), pems.front().size()));
  if (!info.ok()) return Unauthenticated(absl::StrCat("unreadable client certificate: ", info.status().message()));
  if (!absl::StartsWith(info->common_name, kAgentCnPrefix)) {
    return Unauthenticated(absl::StrCat("the certificate of '", info->common_name, "' is not an agent's"));
  }
  const std::string agent_id = info->common_name.substr(sizeof(kAgentCnPrefix) - 1);
  auto accepted = store_->CertificateAccepted(info->sha256_fingerprint_hex, agent_id);
  if (!accepted.ok()) return ToGrpcStatus(accepted.status());
  if (!*accepted) {
    return Unauthenticated(absl::StrCat("the certificate of agent ", agent_id,
                                        " was revoked or never issued by enrollment"));
  }
  caller->kind = Caller::Kind::kAgent;
  caller->agent_id = agent_id;
  caller->certificate_sha256 = info->sha256_fingerprint_hex;
  return grpc::Status::OK;
}

grpc::Status Authorizer::AuthorizeToken(const grpc::ServerContextBase* context, Access access,
                                        Caller* caller) const {
  const auto& metadata = context->client_metadata();
  const auto header = metadata.find(kAuthorizationHeader);
  if (header == metadata.end()) {
    return Unauthenticated("this call needs an API token (--token-file, BENCHFLEET_TOKEN_FILE or BENCHFLEET_TOKEN)");
  }
  const std::string_view value(header->second.data(), header->second.size());
  if (value.rfind(kBearerPrefix, 0) != 0) return Unauthenticated("the authorization header is not 'Bearer TOKEN'");
  auto token = store_->FindApiToken(Sha256Hex(value.substr(sizeof(kBearerPrefix) - 1)));
  if (!token.ok()) return ToGrpcStatus(token.status());
  if (!token->has_value()) return Unauthenticated("unknown or revoked API token");
  caller->kind = Caller::Kind::kToken;
  caller->token_name = (*token)->name;
  caller->role = (*token)->role;
  if (access == Access::kOperator && caller->role != v1::ROLE_OPERATOR) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat("token ", caller->token_name, " is a viewer's; this call needs an operator"));
  }
  return grpc::Status::OK;
}

void Authorizer::Audit(const Caller& caller, std::string_view method, std::string_view target,
                       const std::string& detail_json) const {
  AuditRow row;
  row.at = clock_->Now();
  row.actor = caller.Actor();
  row.role = caller.role;
  row.action = std::string(method);
  row.target = std::string(target);
  row.detail_json = detail_json;
  if (absl::Status s = store_->Audit(row); !s.ok()) {
    Log(absl::StrCat("audit log: could not record ", std::string(method), " by ", row.actor, ": ", s.ToString()));
  }
}

}  // namespace benchfleet::coordinator
