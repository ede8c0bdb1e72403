// The short codes of refused records (the `reason` label of
// benchfleet_coordinator_records_rejected_total): every value the coordinator's RejectionCode
// (coordinator/ingest/batch.h) returns. In common/ so that the metrics create each at 0 before the
// first refusal without depending on the ingest path. Constants only.
#ifndef BENCHFLEET_COMMON_REJECTION_CODES_H_
#define BENCHFLEET_COMMON_REJECTION_CODES_H_

namespace benchfleet {

inline constexpr const char* kRejectionCodes[] = {
    "missing_run_id",  "invalid_run_id", "unknown_phase",       "unknown_status",  "missing_agent_id",
    "too_large",       "malformed",      "refused_by_database", "unrepresentable", "permission_denied",
    "out_of_bounds",
};

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_REJECTION_CODES_H_
