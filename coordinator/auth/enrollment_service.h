// EnrollmentService: the gRPC Enrollment API (auth.proto). Enroll is open to anyone (no
// certificate, no token: the enrollment token is the credential); Renew needs the agent's
// current certificate. Each enrollment and renewal is audited. Thread-safe.
#ifndef BENCHFLEET_COORDINATOR_AUTH_ENROLLMENT_SERVICE_H_
#define BENCHFLEET_COORDINATOR_AUTH_ENROLLMENT_SERVICE_H_

#include "benchfleet/v1/auth.grpc.pb.h"
#include "coordinator/auth/auth_admin.h"
#include "coordinator/auth/authorizer.h"

namespace benchfleet::coordinator {

class EnrollmentService final : public v1::Enrollment::Service {
 public:
  // The pointers must outlive the service.
  EnrollmentService(AuthAdmin* admin, const Authorizer* authorizer);

  grpc::Status Enroll(grpc::ServerContext* context, const v1::EnrollRequest* request,
                      v1::EnrollResponse* response) override;
  grpc::Status Renew(grpc::ServerContext* context, const v1::RenewRequest* request,
                     v1::EnrollResponse* response) override;

 private:
  AuthAdmin* const admin_;
  const Authorizer* const authorizer_;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_AUTH_ENROLLMENT_SERVICE_H_
