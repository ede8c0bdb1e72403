#include "common/grpc_status.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/string_views.h"

namespace benchfleet {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // absl::StatusCode and grpc::StatusCode share the canonical numbering.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& status, std::string_view context) {
  if (status.ok()) return absl::OkStatus();
  const auto code = static_cast<absl::StatusCode>(status.error_code());
  if (context.empty()) return absl::Status(code, status.error_message());
  return absl::Status(code, absl::StrCat(ToAbsl(context), ": ", status.error_message()));
}

}  // namespace benchfleet
