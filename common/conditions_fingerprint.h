// The conditions fingerprint: a hash of the stable fields of MachineConditions, so that a new
// driver, backend version or label shows up as new conditions. Thread-safe.
#ifndef BENCHFLEET_COMMON_CONDITIONS_FINGERPRINT_H_
#define BENCHFLEET_COMMON_CONDITIONS_FINGERPRINT_H_

#include <string>

#include "benchfleet/v1/conditions.pb.h"

namespace benchfleet {

// Returns the canonical text of the stable fields: one "key=value" line per field in a fixed
// order, map entries sorted by key, accelerators in their given order; capture_time and
// fingerprint are left out. Documented in proto/benchfleet/v1/README.md.
std::string CanonicalConditions(const v1::MachineConditions& conditions);

// Returns the lower-case hex SHA-256 of CanonicalConditions(conditions).
std::string ConditionsFingerprint(const v1::MachineConditions& conditions);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_CONDITIONS_FINGERPRINT_H_
