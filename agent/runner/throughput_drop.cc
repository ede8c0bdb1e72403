#include "agent/runner/throughput_drop.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/runner/figures.h"

namespace benchfleet::agent {

std::string ThroughputDropMetric(FigureDeclarations figures) {
  const FigureDeclaration* main = MainFigure(figures);
  return main != nullptr && main->better == v1::BETTER_HIGHER ? std::string(main->name) : std::string();
}

ThroughputDropTracker::ThroughputDropTracker(std::string metric, double threshold)
    : metric_(std::move(metric)), threshold_(threshold) {}

bool HasFlag(const v1::RunRecord& record, const char* code) {
  for (const v1::Flag& flag : record.flags()) {
    if (flag.code() == code) return true;
  }
  return false;
}

std::optional<double> ThroughputDropTracker::Observe(v1::RunRecord* record) {
  if (metric_.empty() || record->phase() != v1::PHASE_WARM || record->status().code() != v1::RunStatus::CODE_OK) {
    return std::nullopt;
  }
  // A run served from a cache measured nothing: its figure is no reference and no drop.
  if (HasFlag(*record, kCacheHitFlag)) {
    if (!reference_.has_value()) skipped_cache_hit_ = true;
    return std::nullopt;
  }
  const std::optional<double> value = MetricValue(*record, metric_);
  if (!value.has_value()) return std::nullopt;
  if (!reference_.has_value()) {
    reference_ = *value;
    reference_call_ = record->call_index();
    return std::nullopt;
  }
  if (*reference_ <= 0) return std::nullopt;
  const double drop = (*reference_ - *value) / *reference_;
  if (drop <= threshold_) return std::nullopt;
  const std::string whose =
      reference_call_ == 1 ? std::string("the first warm call's")
      : skipped_cache_hit_ ? absl::StrCat("warm call ", reference_call_, "'s (the first that succeeded without ",
                                          kCacheHitFlag, ")")
                           : absl::StrCat("warm call ", reference_call_, "'s (the first that succeeded)");
  v1::Flag* flag = record->add_flags();
  flag->set_code(kThroughputDropFlag);
  flag->set_reason(absl::StrFormat("%s %s is %.1f%% below %s %s (threshold %g%%)", metric_, FormatFigure(*value),
                                   drop * 100, whose, FormatFigure(*reference_), threshold_ * 100));
  return drop;
}

}  // namespace benchfleet::agent
