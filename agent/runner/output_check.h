// OUTPUT_MISMATCH within a series: runs of the same mode, matrix combination and inputs (the
// backend's params.inputs_sha256, recorded only under deterministic settings) should give the
// same outputs; the first outputs seen for an input are its reference, and a later run whose
// outputs differ is flagged, naming the hashes and the run it differs from. Across machines the
// guide compares them (synthesis/analysis/output_groups.h). Owned by the series runner: one per
// series, fed every run in run order; not thread-safe.
#ifndef BENCHFLEET_AGENT_RUNNER_OUTPUT_CHECK_H_
#define BENCHFLEET_AGENT_RUNNER_OUTPUT_CHECK_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "benchfleet/v1/record.pb.h"
#include "common/output_determinism.h"
#include "common/spec/series_spec.h"

namespace benchfleet::agent {

// How many hex digits of a hash a reason shows.
inline constexpr size_t kHashPrefixLength = 12;

class OutputCheck {
 public:
  explicit OutputCheck(const OutputsSpec& spec);

  // Looks at one run, in run order. When the spec has an outputs: section, stamps
  // params.outputs_deterministic on the record first. Then, unless the spec says deterministic:
  // false, compares the run's outputs (in order, by kind and sha256: names such as ComfyUI's
  // numbered file names are not compared) with the reference of its inputs. Neither compared nor
  // a reference: a run that is not OK, has no inputs_sha256 or no output, or carries a flag that
  // keeps it out of aggregates (a CACHE_HIT computed nothing; PROMPT_CACHE_USED reused a cache;
  // NO_OFFLOAD and PARTIAL_OFFLOAD ran on other devices than the mode asks; CONTENDED;
  // common/run_flags.h). A run that differs gets {OUTPUT_MISMATCH, "output 1 of 1 (text content):
  // sha256 9f8e7d6c5b4a, expected a1b2c3d4e5f6 as run RUN_ID (cold 1) gave for the same inputs
  // (inputs_sha256 0123456789ab)"}, and the reason is returned; nullopt otherwise.
  std::optional<std::string> Observe(v1::RunRecord* record);

 private:
  struct Reference {
    std::vector<v1::Output> outputs;
    std::string run_id;
    v1::Phase phase = v1::PHASE_UNSPECIFIED;
    uint32_t call_index = 0;
    uint32_t repetition = 0;
  };

  const OutputsSpec spec_;
  // By mode, matrix combination and inputs_sha256.
  std::map<std::string, Reference> references_;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_RUNNER_OUTPUT_CHECK_H_
