// libFuzzer target workflow_results: the results file a workflow command writes (ParseResults with the default
// JSON pointers, then SummaryMetrics and ThroughputBasis).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_workflow_results) over corpus/workflow_results and regressions/workflow_results in the normal build.
#include <cstddef>
#include <cstdint>

#include "absl/time/time.h"
#include "agent/backends/workflow/workflow_results.h"
#include "tests/fuzz/fuzz_input.h"

using namespace benchfleet::agent::workflow;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto results = ParseResults(benchfleet::fuzz::AsText(data, size), ResultsFormat{});
  if (!results.ok()) return 0;
  (void)SummaryMetrics(*results, absl::Seconds(10));
  (void)ThroughputBasis(*results);
  return 0;
}
