// What makes a RunRecord acceptable to a coordinator. Flags, metric names, memory kinds and
// output kinds are open sets (a newer agent's new value is stored); a missing or non-UUID
// run_id, an unknown phase or status, an oversized record, or a value outside the record bounds
// below (CheckRecordBounds) is refused. The guide's readers skip a stored or imported record
// outside the same bounds. Thread-safe.
#ifndef BENCHFLEET_COMMON_RECORD_VALIDATION_H_
#define BENCHFLEET_COMMON_RECORD_VALIDATION_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "benchfleet/v1/record.pb.h"

namespace benchfleet {

// Largest serialized RunRecord a coordinator stores (1 MiB): log tails and per-request
// latencies fit well inside it.
inline constexpr size_t kMaxRecordBytes = 1 << 20;

// The record bounds (also in record.proto and README.md: "Record bounds"). A record past one is
// refused at ingest and import, per record, and skipped by the guide's readers.
//
// call_index and repetition: a series runs at most this many calls per (mode, phase) and this
// many repetitions (a spec asking for more is far beyond any real benchmark).
inline constexpr uint32_t kMaxCallIndex = 100000;
inline constexpr uint32_t kMaxRepetition = 10000;
// The longest run: wall_duration, and end_time - start_time (7 days).
inline constexpr int64_t kMaxRunSeconds = 7 * 24 * 3600;
// The run's window: end_time - start_time (wall clock) and wall_duration (monotonic clock) may
// differ by a clock step (NTP), never by more than this (1 hour); no request of the run
// (RequestTiming latency, TTFT, inter-token gap) is longer than the window plus this.
inline constexpr int64_t kMaxClockDisagreementSeconds = 3600;

// Returns OK, or OUT_OF_RANGE with the first bound `record` is past: a metric value or request
// time (or a number of warm_stop) that is NaN or infinite, a negative duration or request time, end_time before
// start_time, call_index or repetition over its maximum, a run longer than kMaxRunSeconds, or
// times outside the run's window (kMaxClockDisagreementSeconds).
absl::Status CheckRecordBounds(const v1::RunRecord& record);

// Returns OK, or the reason the record is refused: INVALID_ARGUMENT for a missing or malformed
// field, OUT_OF_RANGE for a value past the record bounds (CheckRecordBounds).
absl::Status ValidateRecord(const v1::RunRecord& record);

// Parses one serialized record of a RecordBatch and validates it. On failure the status says why
// (too large, not a RunRecord, invalid UTF-8 in a string field, or ValidateRecord's reason) and,
// when the bytes hold one, *run_id_out receives the run_id read leniently from field 1.
absl::Status ParseAndValidateRecord(std::string_view bytes, v1::RunRecord* record,
                                    std::string* run_id_out);

// Returns the phase's short name ("validation", "cold", "warm"), as stored in SQL and CSV.
std::string PhaseName(v1::Phase phase);

// Returns a count of runs of one phase for people: "1 warm call", "4 warm calls", "2 cold runs",
// "1 validation run"; "N runs" for an unspecified phase.
std::string PhaseRunCount(v1::Phase phase, int n);

// Returns the status's short name ("ok", "failed").
std::string StatusName(v1::RunStatus::Code code);

// Returns where a record came from as one text: "live", or "FILE:LINE" for a record read from a
// file ("unspecified" when the record does not say). The form of runs.csv and of runs.provenance.
std::string ProvenanceText(const v1::Provenance& provenance);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_RECORD_VALIDATION_H_
