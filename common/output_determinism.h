// Whether the same inputs must give the same outputs: the vocabulary shared by the spec's
// `outputs: {deterministic: ...}` (common/spec/), the backends that say which inputs decide their
// outputs (params.inputs_sha256), the agent's OUTPUT_MISMATCH check (agent/runner/output_check.h)
// and the guide's listing of mismatches and groups (synthesis/analysis/output_groups.h). A record
// carries both params, so the guide needs nothing but records. Constants and pure functions;
// thread-safe.
#ifndef BENCHFLEET_COMMON_OUTPUT_DETERMINISM_H_
#define BENCHFLEET_COMMON_OUTPUT_DETERMINISM_H_

#include <optional>
#include <string_view>

namespace benchfleet {

// A run whose outputs differ from those the first run of the same inputs gave.
inline constexpr char kOutputMismatchFlag[] = "OUTPUT_MISMATCH";

// Param a backend records when its settings are deterministic (llama-server and openai at
// temperature 0 with a fixed seed, ComfyUI's substituted graph with its seed): the lower-case hex
// SHA-256 of every input that decides the run's outputs. Runs of one task, mode and matrix
// combination with the same value should give the same outputs. Absent: no expectation at all
// (temperature above 0, outputs with timings in them).
inline constexpr char kInputsSha256Param[] = "inputs_sha256";

// Param the runner records on every run of a spec that has an `outputs:` section: what the spec
// expects of the outputs (OutputDeterminismName). Absent: the default, kEverywhere.
inline constexpr char kOutputsDeterministicParam[] = "outputs_deterministic";

enum class OutputDeterminism {
  // `deterministic: true`, the default: the same outputs on every run and every machine.
  kEverywhere,
  // `deterministic: per_machine`: the same on every run of one machine; machines may differ (GPU
  // kernels differ across devices). The guide reports the groups of identical outputs.
  kPerMachine,
  // `deterministic: false`: no expectation. No run is flagged; the guide reports the groups.
  kNone,
};

// The spec's and the param's word: "true", "per_machine", "false".
inline std::string_view OutputDeterminismName(OutputDeterminism d) {
  switch (d) {
    case OutputDeterminism::kPerMachine:
      return "per_machine";
    case OutputDeterminism::kNone:
      return "false";
    default:
      return "true";
  }
}

// Reads OutputDeterminismName's words back; nullopt for anything else.
inline std::optional<OutputDeterminism> ParseOutputDeterminism(std::string_view word) {
  if (word == "true") return OutputDeterminism::kEverywhere;
  if (word == "per_machine") return OutputDeterminism::kPerMachine;
  if (word == "false") return OutputDeterminism::kNone;
  return std::nullopt;
}

// The weaker of two expectations (kNone < kPerMachine < kEverywhere): what runs that say
// different things can be held to together.
inline OutputDeterminism WeakerDeterminism(OutputDeterminism a, OutputDeterminism b) {
  return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_OUTPUT_DETERMINISM_H_
