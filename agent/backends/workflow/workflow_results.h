// The results file a workflow command writes (schema: README.md here), read through the JSON
// pointers of the section, and the summary figures of one run computed from it. Untrusted input:
// anything malformed is an INVALID_ARGUMENT naming the field, never a crash.
// Owner: the workflow backend. Pure functions; thread-safe.
#ifndef BENCHFLEET_AGENT_BACKENDS_WORKFLOW_WORKFLOW_RESULTS_H_
#define BENCHFLEET_AGENT_BACKENDS_WORKFLOW_WORKFLOW_RESULTS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/backends/workflow/workflow_config.h"
#include "benchfleet/v1/record.pb.h"

namespace benchfleet::agent::workflow {

struct WorkflowResults {
  std::vector<v1::RequestTiming> requests;  // in the file's order
  // The time the tool spent on the requests (model load excluded), when the file says.
  std::optional<double> duration_seconds;
  std::string tool;        // e.g. "workflow-standin 1 SIMULATED"; "" when not given
  bool simulated = false;  // the tool says it is a stand-in
};

// Parses a results file. INVALID_ARGUMENT for text that is not JSON, a requests array missing or
// empty, or a request whose latency is not a finite number >= 0 or whose output tokens are not an
// integer from 0 to 2^32-1 (naming the request's index and the pointer).
absl::StatusOr<WorkflowResults> ParseResults(std::string_view json, const ResultsFormat& format);

// Returns the p-th percentile (0..100) of values by linear interpolation between the closest
// ranks (numpy's default, as in vLLM's benchmark reports); nullopt for no values.
std::optional<double> Percentile(std::vector<double> values, double p);

// Returns the summary metrics of a run: requests, failed_requests, output_tokens,
// latency_mean/p50/p90/p99_seconds and time_to_first_token_* (of the requests that succeeded;
// TTFT only when every one of them has it), output_tokens_per_second and requests_per_second over
// the results' duration_seconds when given, else over command_wall (model load included).
std::vector<v1::Metric> SummaryMetrics(const WorkflowResults& results, absl::Duration command_wall);

// Returns what the rates of SummaryMetrics are over, for the record's params.
std::string ThroughputBasis(const WorkflowResults& results);

}  // namespace benchfleet::agent::workflow

#endif  // BENCHFLEET_AGENT_BACKENDS_WORKFLOW_WORKFLOW_RESULTS_H_
