// Conversions from Abseil's time types to the protobuf well-known types every record carries
// (start_time, end_time, wall_duration). Pure functions; thread-safe.
#ifndef BENCHFLEET_COMMON_PROTO_TIME_H_
#define BENCHFLEET_COMMON_PROTO_TIME_H_

#include "absl/time/time.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/timestamp.pb.h"

namespace benchfleet {

// Sets out to t, to the nanosecond (nanos always in [0, 1e9), as Timestamp requires).
void SetTimestamp(absl::Time t, google::protobuf::Timestamp* out);

// Sets out to d, to the nanosecond (seconds and nanos of the same sign, as Duration requires).
void SetDuration(absl::Duration d, google::protobuf::Duration* out);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_PROTO_TIME_H_
