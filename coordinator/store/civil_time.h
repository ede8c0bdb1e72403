// Unix seconds to a UTC calendar date and time, without a time-zone library: the row and JSON
// writers format two timestamps per run, and absl::FormatTime costs more than the rest of a
// row. Used by store/ only. Pure; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_STORE_CIVIL_TIME_H_
#define BENCHFLEET_COORDINATOR_STORE_CIVIL_TIME_H_

#include <cstdint>
#include <string>

namespace benchfleet::coordinator {

struct CivilSecond {
  int64_t year;
  int month;  // 1..12
  int day;    // 1..31
  int hour;
  int minute;
  int second;
};

// Returns the UTC calendar time of `unix_seconds` (proleptic Gregorian calendar).
CivilSecond ToCivilSecond(int64_t unix_seconds);

// Appends "YYYY-MM-DD<sep>HH:MM:SS" (year zero-padded to 4 digits).
void AppendCivilSecond(const CivilSecond& t, char separator, std::string* out);

// Appends `nanos` (0..999999999) as ".ddd", ".dddddd" or ".ddddddddd", the shortest of the three
// that is exact; nothing when it is 0 (the proto3 JSON form of Timestamp and Duration).
void AppendJsonFraction(int32_t nanos, std::string* out);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_CIVIL_TIME_H_
