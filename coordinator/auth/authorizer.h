// Authorizer: who may call which method (the table of coordinator/auth/README.md). Every handler
// of AgentGateway, Admin, Fleet and Enrollment asks it first, with its own full method name:
//
//   Caller caller;
//   if (grpc::Status s = authorizer_->Authorize(context, kSubmitSeriesMethod, &caller); !s.ok()) return s;
//
// A method missing from the table is refused (PERMISSION_DENIED), so a new RPC is closed until
// someone decides who may call it. With enforcement off (--plaintext) everyone may call
// everything and the caller is "plaintext". Thread-safe.
#ifndef BENCHFLEET_COORDINATOR_AUTH_AUTHORIZER_H_
#define BENCHFLEET_COORDINATOR_AUTH_AUTHORIZER_H_

#include <grpcpp/server_context.h>

#include <map>
#include <string>
#include <string_view>

#include "benchfleet/v1/auth.pb.h"
#include "common/clock.h"
#include "coordinator/store/auth_store.h"

namespace benchfleet::coordinator {

enum class Access {
  kAnyone,    // health, enrollment
  kAgent,     // an enrolled agent's certificate
  kViewer,    // a viewer or operator token
  kOperator,  // an operator token
};

// Full method name ("/benchfleet.v1.Fleet/SubmitSeries") -> who may call it.
const std::map<std::string, Access, std::less<>>& MethodAccessTable();

struct Caller {
  enum class Kind { kAnonymous, kAgent, kToken, kPlaintext };
  Kind kind = Kind::kAnonymous;
  std::string agent_id;    // kAgent: from the certificate
  std::string certificate_sha256;  // kAgent: the presented certificate's fingerprint (hex)
  std::string token_name;  // kToken
  v1::Role role = v1::ROLE_UNSPECIFIED;

  // For the audit log: "agent:<id>", "token:<name>", "plaintext" or "anonymous".
  std::string Actor() const;
};

// The metadata key and scheme of API tokens.
inline constexpr char kAuthorizationHeader[] = "authorization";
inline constexpr char kBearerPrefix[] = "Bearer ";

// The CN an agent's certificate carries: "agent:<agent_id>".
std::string AgentCommonName(std::string_view agent_id);

class Authorizer {
 public:
  // `store` must outlive the authorizer. enforce=false: --plaintext.
  Authorizer(AuthStore* store, Clock* clock, bool enforce);

  bool enforcing() const { return enforce_; }
  absl::Time Now() const { return clock_->Now(); }

  // OK when the caller may call `method`; fills *caller. UNAUTHENTICATED (no or unknown
  // credentials, revoked), PERMISSION_DENIED (a viewer on an operator method, an unknown method),
  // UNAVAILABLE (the database could not be asked).
  grpc::Status Authorize(const grpc::ServerContextBase* context, std::string_view method, Caller* caller) const;

  // Writes one audit row for a change `caller` made; a failure is logged, never returned (the
  // change is already done).
  void Audit(const Caller& caller, std::string_view method, std::string_view target,
             const std::string& detail_json = "{}") const;

 private:
  grpc::Status AuthorizeAgent(const grpc::ServerContextBase* context, Caller* caller) const;
  grpc::Status AuthorizeToken(const grpc::ServerContextBase* context, Access access, Caller* caller) const;

  AuthStore* const store_;
  Clock* const clock_;
  const bool enforce_;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_AUTH_AUTHORIZER_H_
