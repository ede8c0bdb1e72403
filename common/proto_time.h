// Conversions from Abseil's time types to the protobuf well-known types every record carries
// (start_time, end_time, wall_duration), and the one text form of an instant that messages and
// tables show. Pure functions; thread-safe.
#ifndef BENCHFLEET_COMMON_PROTO_TIME_H_
#define BENCHFLEET_COMMON_PROTO_TIME_H_

#include <string>

#include "absl/time/time.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/timestamp.pb.h"

namespace benchfleet {

// Sets out to t, to the nanosecond (nanos always in [0, 1e9), as Timestamp requires).
void SetTimestamp(absl::Time t, google::protobuf::Timestamp* out);

// Sets out to d, to the nanosecond (seconds and nanos of the same sign, as Duration requires).
void SetDuration(absl::Duration d, google::protobuf::Duration* out);

// RFC 3339 in UTC to the second, "2026-03-01T10:00:00Z": how logs, errors and tables show an
// instant to a person.
std::string FormatUtcSeconds(absl::Time t);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_PROTO_TIME_H_
