// What makes a RunRecord acceptable to a coordinator. Flags, metric names, memory kinds and
// output kinds are open sets (a newer agent's new value is stored); only a missing or
// non-UUID run_id, an unknown phase or status, or an oversized record is refused. Thread-safe.
#ifndef BENCHFLEET_COMMON_RECORD_VALIDATION_H_
#define BENCHFLEET_COMMON_RECORD_VALIDATION_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "benchfleet/v1/record.pb.h"

namespace benchfleet {

// Largest serialized RunRecord a coordinator stores (1 MiB): log tails and per-request
// latencies fit well inside it.
inline constexpr size_t kMaxRecordBytes = 1 << 20;

// Returns OK, or INVALID_ARGUMENT with the reason the record is refused.
absl::Status ValidateRecord(const v1::RunRecord& record);

// Parses one serialized record of a RecordBatch and validates it. On failure the status says why
// (too large, not a RunRecord, invalid UTF-8 in a string field, or ValidateRecord's reason) and,
// when the bytes hold one, *run_id_out receives the run_id read leniently from field 1.
absl::Status ParseAndValidateRecord(std::string_view bytes, v1::RunRecord* record,
                                    std::string* run_id_out);

// Returns the phase's short name ("validation", "cold", "warm"), as stored in SQL and CSV.
std::string PhaseName(v1::Phase phase);

// Returns the status's short name ("ok", "failed").
std::string StatusName(v1::RunStatus::Code code);

// Returns where a record came from as one text: "live", or "FILE:LINE" for a record read from a
// file ("unspecified" when the record does not say). The form of runs.csv and of runs.provenance.
std::string ProvenanceText(const v1::Provenance& provenance);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_RECORD_VALIDATION_H_
