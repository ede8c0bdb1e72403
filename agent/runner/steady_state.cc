#include "agent/runner/steady_state.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/record_metric.h"

namespace benchfleet::agent {
namespace {

// Hyndman-Fan type 7 of `sorted` (non-empty, ascending): h = (n - 1) p.
double Quantile(const std::vector<double>& sorted, double p) {
  const double h = (static_cast<double>(sorted.size()) - 1) * p;
  const size_t lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

RequestFigures FiguresOf(const std::vector<const v1::RequestTiming*>& requests, size_t from) {
  RequestFigures f;
  std::vector<double> latencies;
  double seconds = 0, tokens = 0;
  for (size_t i = from; i < requests.size(); ++i) {
    latencies.push_back(requests[i]->latency_seconds());
    seconds += requests[i]->latency_seconds();
    tokens += requests[i]->output_tokens();
  }
  f.requests = latencies.size();
  if (latencies.empty()) return f;
  f.latency_mean_seconds = seconds / static_cast<double>(latencies.size());
  std::sort(latencies.begin(), latencies.end());
  f.latency_p50_seconds = Quantile(latencies, 0.5);
  f.latency_p90_seconds = Quantile(latencies, 0.9);
  if (tokens > 0 && seconds > 0) f.output_tokens_per_second = tokens / seconds;
  return f;
}

}  // namespace

std::optional<SteadyState> SteadyStateOf(const v1::RunRecord& record) {
  std::vector<const v1::RequestTiming*> ok;
  std::vector<double> latencies;
  for (const v1::RequestTiming& r : record.requests()) {
    if (!r.error().empty()) continue;
    ok.push_back(&r);
    latencies.push_back(r.latency_seconds());
  }
  std::optional<stats::MserTruncation> truncation = stats::Mser(latencies);
  if (!truncation || truncation->at_limit) return std::nullopt;
  SteadyState s;
  s.truncation = *truncation;
  s.whole = FiguresOf(ok, 0);
  s.steady = FiguresOf(ok, truncation->truncated);
  return s;
}

void AddSteadyStateFigures(const SteadyState& steady, v1::RunRecord* record) {
  AddMetric(record, kSteadyLatencyMeanMetric, steady.steady.latency_mean_seconds, "s");
  AddMetric(record, kSteadyWarmUpRequestsMetric, static_cast<double>(steady.truncation.truncated), "requests");
  AddMetric(record, kSteadyRequestsMetric, static_cast<double>(steady.steady.requests), "requests");
  AddMetric(record, kSteadyLatencyP50Metric, steady.steady.latency_p50_seconds, "s");
  AddMetric(record, kSteadyLatencyP90Metric, steady.steady.latency_p90_seconds, "s");
  if (steady.steady.output_tokens_per_second) {
    AddMetric(record, kSteadyTokensPerSecondMetric, *steady.steady.output_tokens_per_second, "tokens/s");
  }
}

std::string SteadyStateLine(const SteadyState& s) {
  std::string line = absl::StrCat("steady state (MSER-5): ", s.truncation.truncated, " of ", s.whole.requests,
                                  " requests warm-up; mean latency ", HumanFigure(s.whole.latency_mean_seconds, "s"),
                                  " -> ", HumanFigure(s.steady.latency_mean_seconds, "s"), ", p50 ",
                                  HumanFigure(s.whole.latency_p50_seconds, "s"), " -> ",
                                  HumanFigure(s.steady.latency_p50_seconds, "s"), ", p90 ",
                                  HumanFigure(s.whole.latency_p90_seconds, "s"), " -> ",
                                  HumanFigure(s.steady.latency_p90_seconds, "s"));
  if (s.whole.output_tokens_per_second && s.steady.output_tokens_per_second) {
    absl::StrAppend(&line, ", tokens/s per request ", FormatFigureNumber(*s.whole.output_tokens_per_second), " -> ",
                    FormatFigureNumber(*s.steady.output_tokens_per_second));
  }
  return line;
}

}  // namespace benchfleet::agent
