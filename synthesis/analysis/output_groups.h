// The guide's comparison of outputs across machines: the accepted runs of one task, backend, mode
// and matrix combination with the same params.inputs_sha256 (recorded by a backend under
// deterministic settings, common/output_determinism.h) should give the same outputs. Where the
// records expect that on every machine (outputs.deterministic true, the default), the runs whose
// outputs differ from the first run's are listed as mismatches; where they do not (per_machine,
// false), the groups of identical outputs are. Every count is a "count" source naming its runs.
// Pure functions, no I/O; part of benchfleet_synthesis_analysis; thread-compatible.
#ifndef BENCHFLEET_SYNTHESIS_ANALYSIS_OUTPUT_GROUPS_H_
#define BENCHFLEET_SYNTHESIS_ANALYSIS_OUTPUT_GROUPS_H_

#include <string>
#include <string_view>
#include <vector>

#include "benchfleet/v1/record.pb.h"
#include "common/output_determinism.h"
#include "synthesis/analysis/run_row.h"
#include "synthesis/analysis/sources.h"

namespace benchfleet::synthesis {

// How many hex digits of a hash the guide shows.
inline constexpr size_t kGuideHashPrefix = 12;

// A run as the listing names it.
struct OutputRun {
  std::string run_id;
  std::string machine;
  v1::Phase phase = v1::PHASE_UNSPECIFIED;
  uint32_t call_index = 0;
};

// One distinct output (the run's outputs, in order, by kind and hash) and where it was given.
struct OutputGroup {
  std::string outputs;  // the hashes' first kGuideHashPrefix digits, joined by "+"
  OutputRun first;      // the first run that gave it (run order)
  struct On {
    std::string machine;
    Figure runs;  // count source: this machine's runs that gave it
  };
  std::vector<On> machines;  // in the order they first gave it
};

// A run whose outputs differ from the reference.
struct OutputMismatch {
  OutputRun run;
  std::string outputs;  // as OutputGroup::outputs
  Figure source;        // count source of this one run (its link)
};

// One set of inputs of a task, compared over machines.
struct OutputComparison {
  std::string task, backend, mode;
  std::string matrix;  // "k=v;k=v", "" when none
  std::string inputs_sha256;
  // The weakest expectation its runs state (params.outputs_deterministic; absent: kEverywhere).
  OutputDeterminism expected = OutputDeterminism::kEverywhere;
  Figure runs;                      // count source: every run compared
  std::vector<OutputGroup> groups;  // in order of first appearance
  Figure distinct;                  // count source: the first run of each group
  // kEverywhere only: the first run's outputs are the reference, and every run whose outputs
  // differ is a mismatch (run order).
  std::vector<OutputMismatch> mismatches;
  Figure reference;   // count source of the reference run (its link), when there are mismatches
  Figure mismatched;  // count source over the mismatches' runs (when any)
};

// Compares the outputs of `rows` (machines[i] the machine label of rows[i]). Compared: the runs
// that are OK, carry no flag that keeps them out of aggregates (a CACHE_HIT computed nothing) and
// no INVALIDATED annotation, have params.inputs_sha256 and at least one output. A set of inputs
// is listed from two compared runs on. Sorted by task, backend, mode, matrix (MatrixStringLess),
// then inputs; the count sources are added to `sources` in that order.
std::vector<OutputComparison> CompareOutputs(const std::vector<const RunRow*>& rows,
                                             const std::vector<std::string_view>& machines, SourceTable* sources);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_ANALYSIS_OUTPUT_GROUPS_H_
