// A fast writer of the proto3 JSON form (the one common/proto_json.h's MessageToJson writes:
// proto field names, defaults left out, protobuf's own escaping and number forms), for the
// ingest hot path: protobuf 3.21's converter costs ~24 us per RunRecord, which alone would use
// most of a core at the ingest rates we aim for; this one walks the message by reflection in a
// few microseconds. Only the store uses it (the runs row's JSON columns); its output is checked against
// MessageToJson byte for byte in tests. Pure; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_STORE_PROTO_JSON_WRITER_H_
#define BENCHFLEET_COORDINATOR_STORE_PROTO_JSON_WRITER_H_

#include <string>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace benchfleet::coordinator {

// Appends the JSON of `message` to `out`. INVALID_ARGUMENT (and `out` unspecified) when a
// Timestamp or Duration is out of the range proto3 JSON allows. Map entries come in key order.
// Well-known types other than Timestamp and Duration go through MessageToJson.
absl::Status AppendProtoJson(const google::protobuf::Message& message, std::string* out);

// Returns what AppendProtoJson would of `message` without writing it: INVALID_ARGUMENT when a
// Timestamp or Duration inside is out of proto3 JSON's range, so the message has no JSON form.
// For the store, which keeps records in binary but must be able to derive their JSON later.
absl::Status CheckJsonForm(const google::protobuf::Message& message);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_PROTO_JSON_WRITER_H_
