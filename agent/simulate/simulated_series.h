// The demo's SIMULATED series: records shaped like a llama-server task measured on one machine
// in two modes (gpu, cpu), one cold call then warm calls per mode, with a GPU throughput collapse
// at the third warm call (52.9 -> 30.0 -> 28.2 tokens/s) for the analysis to find. Every record
// says simulated=true; no figure in it was measured. Pure function of its options; thread-safe.
#ifndef BENCHFLEET_AGENT_SIMULATE_SIMULATED_SERIES_H_
#define BENCHFLEET_AGENT_SIMULATE_SIMULATED_SERIES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "benchfleet/v1/record.pb.h"

namespace benchfleet::agent {

inline constexpr char kSimulatedTask[] = "llama-qwen2.5-3b-q4km";
inline constexpr char kSimulatedBackend[] = "llama-server";
inline constexpr char kDefaultSimulatedSeries[] = "simulated-llama-qwen2.5-3b-q4km";

struct SimulatedSeriesOptions {
  std::string series_id = kDefaultSimulatedSeries;
  std::string task_id;
  int runs = 12;  // total; the gpu mode gets the odd one
  std::string agent_id;
  std::string conditions_fingerprint;
  // The last run ends here; the runs are laid out before it, so no timestamp is in the future.
  absl::Time end_time;
  // Seeds the small run-to-run noise; the same seed gives the same figures (run_ids differ).
  uint64_t seed = 1;
};

// Returns options.runs records: gpu then cpu, each mode one PHASE_COLD call then PHASE_WARM calls
// with call_index 1, 2, ...
std::vector<v1::RunRecord> GenerateSimulatedSeries(const SimulatedSeriesOptions& options);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_SIMULATE_SIMULATED_SERIES_H_
