// The figures of a run of many requests: percentiles (p50/p90/p99) of latency, time to first
// token (TTFT), time per output token (TPOT = (latency - TTFT) / (tokens - 1)) and inter-token
// latency (ITL, every gap of every request), throughput, errors by kind, and goodput against
// optional SLOs. Owner: the openai backend. Pure functions; thread-safe.
#ifndef BENCHFLEET_AGENT_BACKENDS_OPENAI_REQUEST_STATS_H_
#define BENCHFLEET_AGENT_BACKENDS_OPENAI_REQUEST_STATS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "benchfleet/v1/record.pb.h"

namespace benchfleet::agent::openai {

// Why a request failed; kNone when it succeeded.
enum class ErrorKind { kNone, kHttp, kStreamCut, kTimeout, kConnection, kBadResponse };

// The metric suffix of a kind: "http", "stream_cut", "timeout", "connection", "bad_response".
std::string ErrorKindName(ErrorKind kind);

// One request as measured. timing.error is empty exactly when kind is kNone.
struct RequestResult {
  v1::RequestTiming timing;
  ErrorKind kind = ErrorKind::kNone;
};

// Returns the p-th percentile (0..100) of values by linear interpolation between the closest
// ranks (numpy's default: rank p/100 * (n - 1) of the sorted values); nullopt when empty.
std::optional<double> Percentile(std::vector<double> values, double p);

// Returns a request's TPOT, (latency - TTFT) / (output_tokens - 1); nullopt when it failed, has
// no TTFT or fewer than 2 output tokens.
std::optional<double> TimePerOutputToken(const v1::RequestTiming& timing);

struct Slos {
  std::optional<double> ttft_seconds;
  std::optional<double> tpot_seconds;
  bool any() const { return ttft_seconds.has_value() || tpot_seconds.has_value(); }
};

// Returns the run's metrics from its requests and its wall time (monotonic, first request sent
// to last answer), in this order: requests, requests_ok, errors, errors_<kind> (kinds that
// occurred), output_tokens, output_tokens_per_second, requests_per_second, latency_mean_seconds,
// latency_p50/p90/p99_seconds, then ttft_, tpot_, itl_ p50/p90/p99 (where measured), then with
// SLOs slo_met_requests and goodput_requests_per_second. Rates and percentiles cover the
// successful requests only; a request that failed is counted in errors, never dropped.
std::vector<v1::Metric> RunMetrics(const std::vector<RequestResult>& requests, absl::Duration wall, const Slos& slos);

}  // namespace benchfleet::agent::openai

#endif  // BENCHFLEET_AGENT_BACKENDS_OPENAI_REQUEST_STATS_H_
