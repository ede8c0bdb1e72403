#include "agent/backends/openai/request_stats.h"

#include <algorithm>
#include <cmath>

namespace benchfleet::agent::openai {
namespace {

void Add(std::vector<v1::Metric>* out, const std::string& name, double value, const std::string& unit) {
  v1::Metric m;
  m.set_name(name);
  m.set_value(value);
  m.set_unit(unit);
  out->push_back(std::move(m));
}

void AddPercentiles(std::vector<v1::Metric>* out, const std::string& prefix, const std::vector<double>& values) {
  if (values.empty()) return;
  for (int p : {50, 90, 99}) {
    Add(out, prefix + "_p" + std::to_string(p) + "_seconds", *Percentile(values, p), "s");
  }
}

}  // namespace

std::string ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNone:
      return "none";
    case ErrorKind::kHttp:
      return "http";
    case ErrorKind::kStreamCut:
      return "stream_cut";
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kConnection:
      return "connection";
    case ErrorKind::kBadResponse:
      return "bad_response";
  }
  return "unknown";
}

std::optional<double> Percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (rank - static_cast<double>(lo));
}

std::optional<double> TimePerOutputToken(const v1::RequestTiming& t) {
  if (!t.error().empty() || t.time_to_first_token_seconds() <= 0 || t.output_tokens() < 2) return std::nullopt;
  return (t.latency_seconds() - t.time_to_first_token_seconds()) / static_cast<double>(t.output_tokens() - 1);
}

std::vector<v1::Metric> RunMetrics(const std::vector<RequestResult>& requests, absl::Duration wall, const Slos& slos) {
  std::vector<v1::Metric> out;
  std::map<std::string, int> errors_by_kind;
  std::vector<double> latency, ttft, tpot, itl;
  double tokens = 0;
  int ok = 0;
  int slo_met = 0;
  for (const RequestResult& r : requests) {
    if (r.kind != ErrorKind::kNone) {
      ++errors_by_kind[ErrorKindName(r.kind)];
      continue;
    }
    const v1::RequestTiming& t = r.timing;
    ++ok;
    tokens += t.output_tokens();
    latency.push_back(t.latency_seconds());
    if (t.time_to_first_token_seconds() > 0) ttft.push_back(t.time_to_first_token_seconds());
    const std::optional<double> request_tpot = TimePerOutputToken(t);
    if (request_tpot.has_value()) tpot.push_back(*request_tpot);
    itl.insert(itl.end(), t.inter_token_seconds().begin(), t.inter_token_seconds().end());
    if (slos.any()) {
      // A request without the figure an SLO needs cannot be shown to meet it.
      const bool ttft_ok = !slos.ttft_seconds.has_value() || (t.time_to_first_token_seconds() > 0 &&
                                                              t.time_to_first_token_seconds() <= *slos.ttft_seconds);
      const bool tpot_ok = !slos.tpot_seconds.has_value() ||
                           (t.output_tokens() == 1 && t.time_to_first_token_seconds() > 0) ||
                           (request_tpot.has_value() && *request_tpot <= *slos.tpot_seconds);
      if (ttft_ok && tpot_ok) ++slo_met;
    }
  }
  const int errors = static_cast<int>(requests.size()) - ok;
  const double seconds = absl::ToDoubleSeconds(wall);
  Add(&out, "requests", static_cast<double>(requests.size()), "requests");
  Add(&out, "requests_ok", ok, "requests");
  Add(&out, "errors", errors, "requests");
  for (const auto& [kind, count] : errors_by_kind) Add(&out, "errors_" + kind, count, "requests");
  Add(&out, "output_tokens", tokens, "tokens");
  if (seconds > 0) {
    Add(&out, "output_tokens_per_second", tokens / seconds, "tokens/s");
    Add(&out, "requests_per_second", ok / seconds, "requests/s");
  }
  if (!latency.empty()) {
    double sum = 0;
    for (double v : latency) sum += v;
    Add(&out, "latency_mean_seconds", sum / static_cast<double>(latency.size()), "s");
  }
  AddPercentiles(&out, "latency", latency);
  AddPercentiles(&out, "ttft", ttft);
  AddPercentiles(&out, "tpot", tpot);
  AddPercentiles(&out, "itl", itl);
  if (slos.any()) {
    Add(&out, "slo_met_requests", slo_met, "requests");
    if (seconds > 0) Add(&out, "goodput_requests_per_second", slo_met / seconds, "requests/s");
  }
  return out;
}

}  // namespace benchfleet::agent::openai
