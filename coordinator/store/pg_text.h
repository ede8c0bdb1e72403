// Text forms PostgreSQL reads: COPY text-format fields, JSON literals for jsonb parameters and
// columns, timestamptz literals. Owned by store/ (the only place that speaks SQL). Pure
// functions; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_STORE_PG_TEXT_H_
#define BENCHFLEET_COORDINATOR_STORE_PG_TEXT_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"

namespace benchfleet::coordinator {

// Appends `value` as one COPY text-format field: backslash, tab, newline and carriage return
// escaped; a NUL (which no PostgreSQL text can hold) becomes U+FFFD.
void AppendCopyField(std::string_view value, std::string* out);

// AppendCopyField for JSON text (as the JSON writers make it: control characters escaped).
void AppendCopyJson(std::string_view json, std::string* out);

// Appends a COPY NULL field.
inline void AppendCopyNull(std::string* out) { out->append("\\N"); }

// Appends `value` as a JSON string literal (quotes included). A NUL becomes U+FFFD, since
// jsonb refuses \u0000.
void AppendJsonString(std::string_view value, std::string* out);

// Appends `value` the way jsonb reads a number back unchanged (shortest round-trip form);
// NaN and infinities, which JSON cannot hold, become null.
void AppendJsonNumber(double value, std::string* out);

// Returns a PostgreSQL array literal of `values`, e.g. {"a","b \"c\""}, for a text[] (or uuid[])
// parameter: membership is then `x = ANY($1::text[])`, which PostgreSQL tests with a hash
// whatever its row estimates (an IN over a set-returning function was planned as a nested loop
// on fresh tables: 10,000 agents x 10,000 tasks took 9 s). A NUL becomes U+FFFD.
std::string TextArrayLiteral(const std::vector<std::string>& values);

// Returns a JSON array of strings / an object of string values.
std::string JsonStringArray(const std::vector<std::string>& values);
std::string JsonStringObject(const std::map<std::string, std::string>& values);

// Rewrites every \u0000 escape of a JSON text as \ufffd: jsonb refuses \u0000, and one NUL in a
// log tail must not keep a whole record out.
void ReplaceJsonNulEscapes(std::string* json);

// Returns t as a timestamptz literal in UTC with microseconds, e.g.
// "2026-01-01 00:00:00.500000+00".
std::string TimestamptzLiteral(absl::Time t);

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_PG_TEXT_H_
