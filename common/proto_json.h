// The JSON form of every benchfleet.v1 message: the proto3 JSON mapping, written by protobuf's own
// MessageToJsonString and read by a simdjson fast path that hands whatever it does not read exactly
// as protobuf's JsonStringToMessage would (errors included) to that parser (proto_json_fast.h),
// so files and the API agree field for field.
// Field names are written as in the .proto (snake_case); both spellings are read. Thread-safe.
#ifndef BENCHFLEET_COMMON_PROTO_JSON_H_
#define BENCHFLEET_COMMON_PROTO_JSON_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace benchfleet {

// Returns message as JSON: one line when pretty is false (the runs.jsonl form), indented when true.
absl::StatusOr<std::string> MessageToJson(const google::protobuf::Message& message, bool pretty = false);

// Parses json into message. Unknown fields are an error unless ignore_unknown_fields is true
// (readers of files written by a newer agent pass true).
absl::Status JsonToMessage(std::string_view json, google::protobuf::Message* message,
                           bool ignore_unknown_fields = false);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_PROTO_JSON_H_
