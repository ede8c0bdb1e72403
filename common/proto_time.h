// Conversions between Abseil's time types and the protobuf well-known types every record carries
// (start_time, end_time, wall_duration), both ways, and the text forms of an instant in UTC that
// messages, tables and SQL show. The one place for each: nothing else converts by hand. Pure
// functions; thread-safe.
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

// The instant / span a Timestamp / Duration holds. Exact for every value the types allow; a
// Timestamp out of proto3's range still converts (Abseil's range is wider).
absl::Time ToTime(const google::protobuf::Timestamp& ts);
absl::Duration ToDuration(const google::protobuf::Duration& d);

// The seconds a Duration holds, as a double: seconds + nanos / 1e9, the one formula every figure
// of a run's wall time (tables, CSV, SQL columns, metrics, the guide) is computed with.
double ToSeconds(const google::protobuf::Duration& d);

// RFC 3339 in UTC to the second, "2026-03-01T10:00:00Z": how logs, errors and tables show an
// instant to a person.
std::string FormatUtcSeconds(absl::Time t);

// RFC 3339 in UTC with the fraction of a second it has, "2026-03-01T10:00:00.25Z" (none when
// whole): an instant given back exactly, as in CSV cells, SQL literals and command lines.
std::string FormatUtc(absl::Time t);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_PROTO_TIME_H_
