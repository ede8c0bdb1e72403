// The steady state of a serving run (backends that send many requests per run: openai, workflow):
// the warm-up transient of the run's per-request latencies found by MSER-5 (common/stats/mser.h),
// and the figures of the requests after it beside those of the whole run. Computed from
// RunRecord.requests alone (RequestTiming, record.proto), so it names no backend's metric; the
// series runner adds the figures to every record that has requests, after the backend's own.
// Pure functions; thread-safe.
#ifndef BENCHFLEET_AGENT_RUNNER_STEADY_STATE_H_
#define BENCHFLEET_AGENT_RUNNER_STEADY_STATE_H_

#include <cstddef>
#include <optional>
#include <string>

#include "benchfleet/v1/record.pb.h"
#include "common/figures.h"
#include "common/stats/mser.h"

namespace benchfleet::agent {

inline constexpr char kSteadyLatencyMeanMetric[] = "steady_state_latency_mean_seconds";
inline constexpr char kSteadyWarmUpRequestsMetric[] = "steady_state_warmup_requests";
inline constexpr char kSteadyRequestsMetric[] = "steady_state_requests";
inline constexpr char kSteadyLatencyP50Metric[] = "steady_state_latency_p50_seconds";
inline constexpr char kSteadyLatencyP90Metric[] = "steady_state_latency_p90_seconds";
inline constexpr char kSteadyTokensPerSecondMetric[] = "steady_state_request_output_tokens_per_second";

// The declaration of the steady-state figures (common/figures.h), which the runner joins after the
// backend's and the device sampler's: two headline figures, so that the guide lists them with the
// backend's further figures and the coordinator exports them as gauges (openai's 5 headline
// figures, energy per token and these two stay within the coordinator's 8 figures per task).
inline constexpr FigureDeclaration kSteadyStateFigures[] = {
    {.name = kSteadyLatencyMeanMetric, .unit = "s", .better = v1::BETTER_LOWER, .headline = 1,
     .label = "steady-state mean latency"},
    {.name = kSteadyWarmUpRequestsMetric, .unit = "requests", .headline = 2, .label = "MSER-5 warm-up requests"},
    {.name = kSteadyRequestsMetric, .unit = "requests"},
    {.name = kSteadyLatencyP50Metric, .unit = "s", .better = v1::BETTER_LOWER, .distribution = "steady_state_latency",
     .percentile = 50},
    {.name = kSteadyLatencyP90Metric, .unit = "s", .better = v1::BETTER_LOWER, .distribution = "steady_state_latency",
     .percentile = 90},
    {.name = kSteadyTokensPerSecondMetric, .unit = "tokens/s", .better = v1::BETTER_HIGHER},
};

// Figures of a set of successful requests: latencies' mean and percentiles (Hyndman-Fan type 7,
// as everywhere in the project), and the output tokens over the summed latencies (the rate one
// request sees; with several requests in flight it is not the run's throughput).
struct RequestFigures {
  size_t requests = 0;
  double latency_mean_seconds = 0;
  double latency_p50_seconds = 0;
  double latency_p90_seconds = 0;
  std::optional<double> output_tokens_per_second;  // nullopt when no request counted a token
};

struct SteadyState {
  stats::MserTruncation truncation;  // over the successful requests, in the order sent
  RequestFigures whole;              // every successful request
  RequestFigures steady;             // those after the truncation point
};

// Returns the steady state of the record's successful requests (RequestTiming.error empty), in
// the order sent; nullopt when MSER-5 gives no truncation point (fewer than 20 of them) or when
// it ends at its limit (half the run: no steady state within the run).
std::optional<SteadyState> SteadyStateOf(const v1::RunRecord& record);

// Adds kSteadyStateFigures' metrics of `steady` to record (the warm-up count, the steady requests'
// count, mean, p50, p90 latency and tokens/s when counted).
void AddSteadyStateFigures(const SteadyState& steady, v1::RunRecord* record);

// One line for the operator, e.g. "steady state (MSER-5): 20 of 100 requests warm-up; mean latency
// 1.21 s -> 999 ms, p90 2.01 s -> 1.04 s, tokens/s per request 90.9 -> 110.1".
std::string SteadyStateLine(const SteadyState& steady);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_RUNNER_STEADY_STATE_H_
