#include "coordinator/auth/enrollment_service.h"

#include <nlohmann/json.hpp>

#include "coordinator/grpc_status.h"
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

}  // namespace benchfleet::coordinator
