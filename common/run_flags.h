// The flags a run can carry and which of them keep it out of aggregates: the one home of the
// "accepted run" rule's flag list (an accepted run is status OK, no excluding flag, and not
// invalidated by an operator). The agent raises the flags, the scheduler's regression check,
// the store's baseline query and the guide read this list. Constants only; thread-safe.
#ifndef BENCHFLEET_COMMON_RUN_FLAGS_H_
#define BENCHFLEET_COMMON_RUN_FLAGS_H_

#include <algorithm>
#include <array>
#include <string_view>

namespace benchfleet {

// ComfyUI served the work the run measures from its execution cache.
inline constexpr std::string_view kCacheHitFlag = "CACHE_HIT";
// llama-server reused cached prompt tokens although the request said cache_prompt: false.
inline constexpr std::string_view kPromptCacheUsedFlag = "PROMPT_CACHE_USED";
// The host was busy with other work during the run.
inline constexpr std::string_view kContendedFlag = "CONTENDED";
// The mode asked llama-server to offload layers to a GPU and the server offloaded none (the spec
// let the mode run without a GPU; otherwise the run is FAILED).
inline constexpr std::string_view kNoOffloadFlag = "NO_OFFLOAD";
// llama-server offloaded fewer layers than the mode asked (and the spec does not accept it).
inline constexpr std::string_view kPartialOffloadFlag = "PARTIAL_OFFLOAD";
// An operator marked the run invalid (benchfleet runs invalidate): an annotation, not a flag the
// agent raises, but it excludes the run the same way.
inline constexpr std::string_view kInvalidatedCode = "INVALIDATED";

// The flags that keep a run out of baselines, medians, verdicts and rules (it is still
// published).
inline constexpr std::array<std::string_view, 5> kExcludingFlags = {
    kCacheHitFlag, kPromptCacheUsedFlag, kContendedFlag, kNoOffloadFlag, kPartialOffloadFlag};

// Returns true when a flag code keeps its run out of aggregates.
inline bool IsExcludingFlag(std::string_view code) {
  return std::find(kExcludingFlags.begin(), kExcludingFlags.end(), code) != kExcludingFlags.end();
}

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_RUN_FLAGS_H_
