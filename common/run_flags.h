// The flags a run can carry and which of them keep it out of aggregates: the one home of the
// "accepted run" rule (an accepted run is status OK, no excluding flag, and not invalidated by an
// operator). The agent raises the flags; the agent's warm-until rule, the scheduler's regression
// check, the CLI's spread and the guide call IsAcceptedRun / ExcludesRun; the store's baseline
// query writes the same rule in SQL from kExcludingFlags (store/pg_fleet_store.cc, its one SQL
// form). Pure; thread-safe.
#ifndef BENCHFLEET_COMMON_RUN_FLAGS_H_
#define BENCHFLEET_COMMON_RUN_FLAGS_H_

#include <algorithm>
#include <array>
#include <string_view>

#include "benchfleet/v1/record.pb.h"

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

// Returns true when a flag code keeps its run out of aggregates: an excluding flag, or
// INVALIDATED (an operator's annotation, which ListRuns and the readers give as a flag).
inline bool ExcludesRun(std::string_view code) { return IsExcludingFlag(code) || code == kInvalidatedCode; }

// The accepted-run rule: status OK and no flag that ExcludesRun.
inline bool IsAcceptedRun(const v1::RunRecord& record) {
  if (record.status().code() != v1::RunStatus::CODE_OK) return false;
  return std::none_of(record.flags().begin(), record.flags().end(),
                      [](const v1::Flag& flag) { return ExcludesRun(flag.code()); });
}

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_RUN_FLAGS_H_
