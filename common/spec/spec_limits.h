// The one limit on the size of a series spec, shared by the coordinator (refused at submit, never
// sent to an agent) and the agent (its stream's receive limit, derived from it). Constants and a
// pure function: thread-safe.
#ifndef BENCHFLEET_COMMON_SPEC_SPEC_LIMITS_H_
#define BENCHFLEET_COMMON_SPEC_SPEC_LIMITS_H_

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace benchfleet {

// The largest series spec (bytes of YAML) a coordinator takes and sends to an agent in one
// TaskAssignment: 1 MiB. Large inputs such as prompt lists go in files the agent's allow-list
// names (allow.workflow_dirs: the `prompts` of the openai and workflow backends), not in the spec.
inline constexpr size_t kMaxSpecBytes = size_t{1} << 20;

// What an agent's Connect stream accepts in one message: a spec at its limit plus room for the
// rest of a TaskAssignment and for Acks of large batches (4 MiB, gRPC's default, in all).
inline constexpr size_t kAgentStreamHeadroomBytes = size_t{3} << 20;
inline constexpr int kAgentMaxReceiveBytes = static_cast<int>(kMaxSpecBytes + kAgentStreamHeadroomBytes);

// The bounds of the fleet keys (series_spec.h FleetFields): retry.max_attempts from 1 to
// kMaxTaskAttempts; regression.baseline_runs from kMinBaselineRuns (fewer says little of a
// machine's usual level: the scheduler's regression check, coordinator/scheduler/regression.h,
// gives no verdict below it) to kMaxBaselineRuns.
inline constexpr int kMaxTaskAttempts = 100;
inline constexpr int kMinBaselineRuns = 3;
inline constexpr int kMaxBaselineRuns = 100;

// Returns OK for a spec of at most kMaxSpecBytes, else INVALID_ARGUMENT
// "SOURCE: the spec is N bytes, over the limit of M bytes (1 MiB) ...".
inline absl::Status CheckSpecSize(size_t bytes, std::string_view source) {
  if (bytes <= kMaxSpecBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      source.empty() ? "spec" : absl::string_view(source.data(), source.size()), ": the spec is ", bytes,
      " bytes, over the limit of ", kMaxSpecBytes,
      " bytes (1 MiB) a task carries to its agents; put large inputs such as prompt lists in a file the agents' "
      "allow-list names (allow.workflow_dirs, e.g. the `prompts` file of the openai and workflow backends) and "
      "name that file in the spec"));
}

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_SPEC_SPEC_LIMITS_H_
