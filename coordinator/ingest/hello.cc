#include "coordinator/ingest/hello.h"

#include "absl/strings/str_cat.h"
#include "common/version.h"

namespace benchfleet::coordinator {

absl::Status CheckHello(const v1::Hello& hello) {
  const uint32_t revision = hello.api_revision();
  if (revision < kMinAgentApiRevision || revision > kApiRevision) {
    return absl::FailedPreconditionError(absl::StrCat(
        "agent speaks API revision ", revision, "; this coordinator accepts ", kMinAgentApiRevision,
        "..", kApiRevision, "; upgrade the ", revision < kMinAgentApiRevision ? "agent" : "coordinator"));
  }
  if (hello.agent_id().empty()) return absl::InvalidArgumentError("Hello has no agent_id");
  return absl::OkStatus();
}

v1::Welcome MakeWelcome(const v1::Hello& hello, const absl::Status& verdict) {
  v1::Welcome welcome;
  welcome.set_coordinator_version(kVersion);
  welcome.set_api_revision(kApiRevision);
  welcome.set_min_agent_api_revision(kMinAgentApiRevision);
  welcome.set_accepted(verdict.ok());
  welcome.set_reason(std::string(verdict.message()));
  welcome.set_agent_id(hello.agent_id());
  return welcome;
}

}  // namespace benchfleet::coordinator
