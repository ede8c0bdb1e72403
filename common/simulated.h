// The word a benchfleet simulator announces itself with, in the strings a server says about
// itself (build_info, comfyui_version, a model's id, an answer's system_fingerprint, a tool's
// name, a log's build line): the one check every reader of such a string calls, so that a
// simulated figure is never taken for a measured one. Constants only; thread-safe.
#ifndef BENCHFLEET_COMMON_SIMULATED_H_
#define BENCHFLEET_COMMON_SIMULATED_H_

#include <string_view>

namespace benchfleet {

inline constexpr std::string_view kSimulatedMarker = "SIMULATED";

// Returns true when an identity or version string says it comes from a simulator.
inline bool SaysSimulated(std::string_view text) { return text.find(kSimulatedMarker) != std::string_view::npos; }

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_SIMULATED_H_
