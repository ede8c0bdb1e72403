#include "agent/runner/throughput_drop.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/probes/device_sampler.h"
#include "agent/runner/figures.h"
#include "common/stats/spread.h"

namespace benchfleet::agent {
namespace {

constexpr char kSamplesMetric[] = "device_samples";

// The sampler's mean SM clock of a device: "device_sm_clock_mhz_mean" (one device) or
// "device<index>_sm_clock_mhz_mean".
bool IsClockMetric(const std::string& name) {
  return absl::StartsWith(name, "device") && absl::EndsWith(name, "sm_clock_mhz_mean");
}

// "SM clock" for the only device, "device0 SM clock" with several.
std::string ClockLabel(const std::string& metric) {
  const std::string device = metric.substr(0, metric.size() - std::string("_sm_clock_mhz_mean").size());
  return device == "device" ? std::string("SM clock") : absl::StrCat(device, " SM clock");
}

// "1-3" for consecutive calls, else "1, 3, 4".
std::string CallList(const std::vector<WarmCall>& calls) {
  bool consecutive = true;
  for (size_t i = 1; i < calls.size(); ++i) consecutive = consecutive && calls[i].call_index == calls[i - 1].call_index + 1;
  if (consecutive && calls.size() > 1) return absl::StrCat(calls.front().call_index, "-", calls.back().call_index);
  std::vector<uint32_t> indices;
  for (const WarmCall& call : calls) indices.push_back(call.call_index);
  return absl::StrJoin(indices, ", ");
}

std::string FlagReason(const v1::RunRecord& record, const char* code) {
  for (const v1::Flag& flag : record.flags()) {
    if (flag.code() == code) return flag.reason();
  }
  return "";
}

}  // namespace

std::string ThroughputDropMetric(FigureDeclarations figures) {
  const FigureDeclaration* main = MainFigure(figures);
  return main != nullptr && main->better == v1::BETTER_HIGHER ? std::string(main->name) : std::string();
}

bool HasFlag(const v1::RunRecord& record, const char* code) {
  for (const v1::Flag& flag : record.flags()) {
    if (flag.code() == code) return true;
  }
  return false;
}

std::optional<double> JudgedValue(const v1::RunRecord& record, const std::string& metric) {
  if (metric.empty() || record.phase() != v1::PHASE_WARM || record.status().code() != v1::RunStatus::CODE_OK) {
    return std::nullopt;
  }
  // A run served from a cache measured nothing: its figure is no reference and no drop.
  if (HasFlag(record, kCacheHitFlag)) return std::nullopt;
  return MetricValue(record, metric);
}

DropCause CauseOfDrop(const v1::RunRecord& record) {
  if (HasFlag(record, kThrottledFlag)) return DropCause::kThrottled;
  if (HasFlag(record, kContendedFlag)) return DropCause::kContended;
  return DropCause::kUnexplained;
}

std::optional<LevelChange> FindLevelChange(const std::vector<WarmCall>& calls) {
  std::vector<double> values;
  for (const WarmCall& call : calls) values.push_back(call.value);
  const std::optional<stats::ChangePoint> test = stats::PettittChangePoint(values);
  if (!test.has_value()) return std::nullopt;
  return LevelChange{calls[test->first_after].call_index, *test};
}

std::string DescribeLevelChange(const LevelChange& change) {
  const stats::ChangePoint& t = change.test;
  return absl::StrFormat("the level %s from %s to %s at warm call %d (Pettitt p=%.2g over %d warm calls, %s at %g%%)",
                         t.median_after < t.median_before ? "fell" : "rose", FormatFigure(t.median_before),
                         FormatFigure(t.median_after), change.call_index, t.p_value, t.n,
                         t.significant() ? "significant" : "not significant", stats::kChangePointLevel * 100);
}

ThroughputDropTracker::ThroughputDropTracker(std::string metric, double threshold)
    : metric_(std::move(metric)), threshold_(threshold) {}

std::optional<double> ThroughputDropTracker::Observe(v1::RunRecord* record) {
  const std::optional<double> value = JudgedValue(*record, metric_);
  if (!value.has_value()) return std::nullopt;
  calls_.push_back(WarmCall{record->call_index(), *value});
  if (!reference_.has_value()) {
    for (const v1::Metric& metric : record->metrics()) {
      if (IsClockMetric(metric.name())) reference_clock_values_[metric.name()].push_back(metric.value());
    }
    if (calls_.size() < size_t(kDropReferenceCalls)) return std::nullopt;
    std::vector<double> values;
    for (const WarmCall& call : calls_) values.push_back(call.value);
    reference_ = stats::Median(values);
    for (const auto& [name, clocks] : reference_clock_values_) reference_clocks_[name] = *stats::Median(clocks);
  }
  if (*reference_ <= 0) return std::nullopt;
  const double drop = (*reference_ - *value) / *reference_;
  if (drop <= threshold_) return std::nullopt;

  const std::vector<WarmCall> reference_calls(calls_.begin(), calls_.begin() + kDropReferenceCalls);
  std::string reason = absl::StrFormat("%s %s is %.1f%% below the reference %s, the median of warm calls %s "
                                       "(threshold %g%%)",
                                       metric_, FormatFigure(*value), drop * 100, FormatFigure(*reference_),
                                       CallList(reference_calls), threshold_ * 100);
  // The change of level over the calls so far; one that is not a fall (e.g. a slow first call
  // then a normal level) does not explain this drop and is not named.
  if (const std::optional<LevelChange> change = FindLevelChange(calls_); change.has_value()) {
    const stats::ChangePoint& t = change->test;
    absl::StrAppend(&reason, "; ",
                    t.median_after < t.median_before
                        ? DescribeLevelChange(*change)
                        : absl::StrFormat("no fall of level found over %d warm calls (Pettitt p=%.2g, %s at %g%%)", t.n,
                                          t.p_value, t.significant() ? "significant" : "not significant",
                                          stats::kChangePointLevel * 100));
  }
  absl::StrAppend(&reason, "; ", Attribution(record));
  v1::Flag* flag = record->add_flags();
  flag->set_code(kThroughputDropFlag);
  flag->set_reason(reason);
  return drop;
}

std::string ThroughputDropTracker::Attribution(v1::RunRecord* record) const {
  std::vector<std::string> falls;
  for (const v1::Metric& metric : record->metrics()) {
    if (!IsClockMetric(metric.name())) continue;
    auto it = reference_clocks_.find(metric.name());
    if (it == reference_clocks_.end() || it->second <= 0) continue;
    if (metric.value() < (1 - kClockFallFraction) * it->second) {
      falls.push_back(absl::StrFormat("%s %.0f -> %.0f MHz", ClockLabel(metric.name()), it->second, metric.value()));
    }
  }
  const std::string throttled = FlagReason(*record, kThrottledFlag);
  const std::string contended = FlagReason(*record, kContendedFlag);
  const bool was_throttled = HasFlag(*record, kThrottledFlag);
  if (!falls.empty() && !was_throttled) {
    // The device reported no throttle reason (or none the sampler reads), yet its clock fell.
    v1::Flag* flag = record->add_flags();
    flag->set_code(kThrottledFlag);
    flag->set_reason(absl::StrFormat("%s (mean during the run vs the median of the reference warm calls), more than "
                                     "%g%% down with no throttle reason reported",
                                     absl::StrJoin(falls, ", "), kClockFallFraction * 100));
  }
  // What the device's own readings say: its clock falls, then the sampler's throttle reasons.
  std::vector<std::string> slowdowns = std::move(falls);
  if (was_throttled) slowdowns.push_back(throttled);
  std::vector<std::string> parts;
  if (HasFlag(*record, kContendedFlag)) {
    parts.push_back(absl::StrCat("the host was busy (", kContendedFlag, ": ", contended, ")",
                                 slowdowns.empty() ? ", not a slowdown of the device" : ""));
  }
  if (!slowdowns.empty()) {
    parts.push_back(absl::StrCat("the device throttled (", absl::StrJoin(slowdowns, ", "), ")"));
  }
  if (parts.empty()) {
    return MetricValue(*record, kSamplesMetric).has_value()
               ? "unexplained: the device samples show no throttling and no clock fall"
               : "unexplained: no device samples";
  }
  return absl::StrJoin(parts, "; ");
}

}  // namespace benchfleet::agent
