#include "common/proto_json.h"

#include "absl/strings/str_cat.h"
#include "common/proto_json_fast.h"
#include "google/protobuf/util/json_util.h"

namespace benchfleet {

absl::StatusOr<std::string> MessageToJson(const google::protobuf::Message& message, bool pretty) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = pretty;
  options.preserve_proto_field_names = true;
  std::string out;
  auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write ", message.GetTypeName(), " as JSON: ", status.ToString()));
  }
  return out;
}

absl::Status JsonToMessage(std::string_view json, google::protobuf::Message* message,
                           bool ignore_unknown_fields) {
  // What the fast path reads it reads exactly as protobuf would; the rest, errors included, is
  // protobuf's (proto_json_fast.h).
  if (internal::FastJsonToMessage(json, message, ignore_unknown_fields) == internal::FastJson::kParsed) {
    return absl::OkStatus();
  }
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = ignore_unknown_fields;
  auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), message, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("not a valid ", message->GetTypeName(),
                                                   " in JSON: ", status.message().as_string()));
  }
  return absl::OkStatus();
}

}  // namespace benchfleet
