// runs.csv: one flat row per run, one value per cell, so a series opens in a spreadsheet without
// benchfleet. Fixed columns first, then one column per metric name ("metric:NAME [UNIT]"), per
// memory figure ("memory:KIND:SCOPE [bytes]"), and per param ("param:NAME"), in sorted order.
// Thread-safe (pure functions).
#ifndef BENCHFLEET_COMMON_RECORD_CSV_H_
#define BENCHFLEET_COMMON_RECORD_CSV_H_

#include <string>
#include <string_view>
#include <vector>

#include "benchfleet/v1/record.pb.h"

namespace benchfleet {

// Returns the CSV text (header line, then one line per record in the given order), RFC 4180
// quoting, "\n" line ends.
std::string RunsToCsv(const std::vector<v1::RunRecord>& records);

// Quotes one CSV field when it needs it.
std::string CsvField(std::string_view value);

// Returns the timestamp as RFC 3339 UTC with nanoseconds trimmed ("2026-01-01T00:00:00.5Z").
std::string FormatTimestamp(const google::protobuf::Timestamp& ts);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_RECORD_CSV_H_
