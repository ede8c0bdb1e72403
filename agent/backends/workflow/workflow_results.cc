#include "agent/backends/workflow/workflow_results.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/string_views.h"

namespace benchfleet::agent::workflow {
namespace {

using nlohmann::json;

// Returns the value at pointer, or nullptr when it is not there (or the pointer is malformed).
const json* At(const json& doc, const std::string& pointer) {
  try {
    const json::json_pointer p(pointer);
    if (!doc.contains(p)) return nullptr;
    return &doc.at(p);
  } catch (const json::exception&) {
    return nullptr;
  }
}

absl::Status Bad(size_t index, const std::string& pointer, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("request ", index, " (", pointer, "): ", ToAbsl(what)));
}

void Add(std::vector<v1::Metric>* out, const char* name, double value, const char* unit) {
  v1::Metric& m = out->emplace_back();
  m.set_name(name);
  m.set_value(value);
  m.set_unit(unit);
}

void AddDistribution(std::vector<v1::Metric>* out, const std::string& prefix, const std::vector<double>& values) {
  if (values.empty()) return;
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  static const std::string kNames[] = {"_mean_seconds", "_p50_seconds", "_p90_seconds", "_p99_seconds"};
  const double figures[] = {mean, *Percentile(values, 50), *Percentile(values, 90), *Percentile(values, 99)};
  for (int i = 0; i < 4; ++i) {
    v1::Metric& m = out->emplace_back();
    m.set_name(prefix + kNames[i]);
    m.set_value(figures[i]);
    m.set_unit("s");
  }
}

}  // namespace

absl::StatusOr<WorkflowResults> ParseResults(std::string_view text, const ResultsFormat& format) {
  const json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return absl::InvalidArgumentError("the results file is not JSON");
  WorkflowResults out;
  const json* requests = At(doc, format.requests);
  if (requests == nullptr || !requests->is_array()) {
    return absl::InvalidArgumentError(absl::StrCat("the results file has no array at ", format.requests));
  }
  if (requests->empty()) {
    return absl::InvalidArgumentError(absl::StrCat("the results file's ", format.requests, " is empty: no requests"));
  }
  for (size_t i = 0; i < requests->size(); ++i) {
    const json& r = (*requests)[i];
    v1::RequestTiming timing;
    timing.set_token_source("results file");
    if (const json* id = At(r, format.prompt_id); id != nullptr && id->is_string()) {
      timing.set_prompt_id(id->get<std::string>());
    } else if (id != nullptr && id->is_number_integer()) {
      timing.set_prompt_id(id->dump());
    } else {
      return Bad(i, format.prompt_id, "the prompt id is missing or not a string or integer");
    }
    if (const json* error = At(r, format.error); error != nullptr && !error->is_null()) {
      if (!error->is_string()) return Bad(i, format.error, "the error is not a string");
      timing.set_error(error->get<std::string>());
    }
    const json* latency = At(r, format.latency_seconds);
    if (latency != nullptr && latency->is_number() && std::isfinite(latency->get<double>()) &&
        latency->get<double>() >= 0) {
      timing.set_latency_seconds(latency->get<double>());
    } else if (timing.error().empty() || latency != nullptr) {
      return Bad(i, format.latency_seconds, "the latency is missing or not a finite number of seconds >= 0");
    }
    const json* tokens = At(r, format.output_tokens);
    if (tokens != nullptr && tokens->is_number_integer() && tokens->get<int64_t>() >= 0 &&
        tokens->get<int64_t>() <= 0xffffffffLL) {
      timing.set_output_tokens(static_cast<uint32_t>(tokens->get<int64_t>()));
    } else if (timing.error().empty() || tokens != nullptr) {
      return Bad(i, format.output_tokens, "the output tokens are missing or not an integer from 0 to 4294967295");
    }
    if (const json* ttft = At(r, format.time_to_first_token_seconds); ttft != nullptr && !ttft->is_null()) {
      if (!ttft->is_number() || !std::isfinite(ttft->get<double>()) || ttft->get<double>() < 0) {
        return Bad(i, format.time_to_first_token_seconds, "the time to first token is not a finite number >= 0");
      }
      timing.set_time_to_first_token_seconds(ttft->get<double>());
    }
    out.requests.push_back(std::move(timing));
  }
  if (const json* d = At(doc, format.duration_seconds); d != nullptr && !d->is_null()) {
    if (!d->is_number() || !std::isfinite(d->get<double>()) || d->get<double>() <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(format.duration_seconds, ": the duration is not a number > 0"));
    }
    out.duration_seconds = d->get<double>();
  }
  if (const json* tool = At(doc, format.tool); tool != nullptr && tool->is_string()) out.tool = tool->get<std::string>();
  if (const json* sim = At(doc, format.simulated); sim != nullptr && sim->is_boolean()) out.simulated = sim->get<bool>();
  return out;
}

std::optional<double> Percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (rank - static_cast<double>(lo));
}

std::vector<v1::Metric> SummaryMetrics(const WorkflowResults& results, absl::Duration command_wall) {
  std::vector<double> latencies;
  std::vector<double> ttfts;
  bool every_ttft = true;
  uint64_t tokens = 0;
  uint64_t failed = 0;
  for (const v1::RequestTiming& r : results.requests) {
    if (!r.error().empty()) {
      ++failed;
      continue;
    }
    latencies.push_back(r.latency_seconds());
    tokens += r.output_tokens();
    if (r.time_to_first_token_seconds() > 0) {
      ttfts.push_back(r.time_to_first_token_seconds());
    } else {
      every_ttft = false;
    }
  }
  std::vector<v1::Metric> out;
  Add(&out, "requests", static_cast<double>(results.requests.size()), "requests");
  Add(&out, "failed_requests", static_cast<double>(failed), "requests");
  Add(&out, "output_tokens", static_cast<double>(tokens), "tokens");
  AddDistribution(&out, "latency", latencies);
  if (every_ttft) AddDistribution(&out, "time_to_first_token", ttfts);
  const double window = results.duration_seconds.value_or(absl::ToDoubleSeconds(command_wall));
  if (window > 0) {
    Add(&out, "output_tokens_per_second", static_cast<double>(tokens) / window, "tokens/s");
    Add(&out, "requests_per_second", static_cast<double>(latencies.size()) / window, "requests/s");
  }
  return out;
}

std::string ThroughputBasis(const WorkflowResults& results) {
  return results.duration_seconds.has_value() ? "results duration_seconds"
                                              : "command wall time (start-up and model load included)";
}

}  // namespace benchfleet::agent::workflow
