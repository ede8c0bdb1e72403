// The fast path of JsonToMessage (proto_json.h): the proto3 JSON mapping read from simdjson's DOM
// straight into a message through protobuf's reflection, for the shapes benchfleet writes
// (objects, arrays, numbers, strings, enums by name or number, string-keyed maps, Timestamp and
// Duration). protobuf's own JsonStringToMessage converts JSON to the binary form through a type
// resolver and parses that again: about 14,000 records a second, the limit of reading a million
// runs.jsonl records (issue 21).
//
// It never decides an error: anything it does not handle exactly as protobuf does (an unknown
// field when they are not ignored, a duplicate key, two members of a oneof, an enum name it does not
// know, bytes, another well-known type, a number out of its field's range, a malformed JSON text,
// ...) makes it answer kNotHandled, and JsonToMessage then asks protobuf, whose answer and error
// words stand. Internal to common/; exposed for its differential test. Thread-safe (a parser and
// a field index per thread).
#ifndef BENCHFLEET_COMMON_PROTO_JSON_FAST_H_
#define BENCHFLEET_COMMON_PROTO_JSON_FAST_H_

#include <string_view>

#include "google/protobuf/message.h"

namespace benchfleet::internal {

enum class FastJson {
  kParsed,      // *message holds exactly what protobuf's parser would have given
  kNotHandled,  // *message is cleared; protobuf's parser must decide
};

FastJson FastJsonToMessage(std::string_view json, google::protobuf::Message* message, bool ignore_unknown_fields);

}  // namespace benchfleet::internal

#endif  // BENCHFLEET_COMMON_PROTO_JSON_FAST_H_
