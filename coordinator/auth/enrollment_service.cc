#include "coordinator/auth/enrollment_service.h"

#include <nlohmann/json.hpp>

#include "common/grpc_status.h"
#include "coordinator/log.h"

namespace benchfleet::coordinator {

EnrollmentService::EnrollmentService(AuthAdmin* admin, const Authorizer* authorizer)
    : admin_(admin), authorizer_(authorizer) {}

grpc::Status EnrollmentService::Enroll(grpc::ServerContext* context, const v1::EnrollRequest* request,
                                       v1::EnrollResponse* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Enrollment/Enroll";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  absl::StatusOr<v1::EnrollResponse> enrolled = admin_->Enroll(*request);
  if (!enrolled.ok()) {
    Log(absl::StrCat("enrollment of agent ", request->agent_id(), " from ", context->peer(),
                     " refused: ", enrolled.status().message()));
    return ToGrpcStatus(enrolled.status());
  }
  // The agent is the actor: it proved the token, and the certificate is now its.
  caller.kind = Caller::Kind::kAgent;
  caller.agent_id = request->agent_id();
  authorizer_->Audit(caller, kMethod, request->agent_id(), nlohmann::json{{"peer", context->peer()}}.dump());
  *response = std::move(*enrolled);
  return grpc::Status::OK;
}

grpc::Status EnrollmentService::Renew(grpc::ServerContext* context, const v1::RenewRequest* request,
                                      v1::EnrollResponse* response) {
  static constexpr char kMethod[] = "/benchfleet.v1.Enrollment/Renew";
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, kMethod, &caller); !s.ok()) return s;
  if (caller.kind != Caller::Kind::kAgent) {
    // --plaintext lets everyone in, but there is no certificate to renew.
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "renewal needs TLS and the agent's current certificate (this coordinator runs --plaintext)");
  }
  absl::StatusOr<v1::EnrollResponse> renewed = admin_->Renew(caller.agent_id, caller.certificate_sha256, request->csr_pem());
  if (!renewed.ok()) {
    Log(absl::StrCat("renewal of agent ", caller.agent_id, "'s certificate from ", context->peer(),
                     " refused: ", renewed.status().message()));
    return ToGrpcStatus(renewed.status());
  }
  authorizer_->Audit(caller, kMethod, caller.agent_id,
                     nlohmann::json{{"peer", context->peer()}, {"previous_certificate_sha256", caller.certificate_sha256}}
                         .dump());
  *response = std::move(*renewed);
  return grpc::Status::OK;
}

}  // namespace benchfleet::coordinator
