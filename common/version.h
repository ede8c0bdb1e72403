// Versions every program reports, and the API revisions of benchfleet.v1 (see
// proto/benchfleet/v1/README.md). Constants only; thread-safe.
#ifndef BENCHFLEET_COMMON_VERSION_H_
#define BENCHFLEET_COMMON_VERSION_H_

#include <cstdint>

namespace benchfleet {

inline constexpr char kVersion[] = BENCHFLEET_VERSION;

// Revision of benchfleet.v1 this build speaks. Raised when fields or messages are added.
inline constexpr uint32_t kApiRevision = 1;

// Oldest agent revision a coordinator of this build accepts.
inline constexpr uint32_t kMinAgentApiRevision = 1;

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_VERSION_H_
