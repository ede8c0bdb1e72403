// The short codes of refused records (the `reason` label of
// benchfleet_coordinator_records_rejected_total): every value RejectionCode (batch.h) returns.
// Listed here so the metrics can create each at 0 before the first refusal. Constants only.
#ifndef BENCHFLEET_COORDINATOR_INGEST_REJECTION_CODES_H_
#define BENCHFLEET_COORDINATOR_INGEST_REJECTION_CODES_H_

namespace benchfleet::coordinator {

inline constexpr const char* kRejectionCodes[] = {
    "missing_run_id",  "invalid_run_id", "unknown_phase",       "unknown_status",  "missing_agent_id",
    "too_large",       "malformed",      "refused_by_database", "unrepresentable", "permission_denied",
    "out_of_bounds",
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_INGEST_REJECTION_CODES_H_
