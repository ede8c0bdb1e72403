#include "agent/runner/warm_until.h"

#include <cmath>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/runner/figures.h"
#include "common/run_flags.h"
#include "common/stats/spread.h"

namespace benchfleet::agent {
namespace {

// A fraction as a percentage with one decimal ("1.8"), or more where one decimal would show the
// comparison with the bound the wrong way round (2.04% > 2% is not "2.0% > 2%").
std::string Percent(double fraction, double bound, bool within) {
  for (int decimals = 1; decimals < 4; ++decimals) {
    const std::string shown = absl::StrFormat("%.*f", decimals, fraction * 100);
    double value = 0;
    const bool parsed = absl::SimpleAtod(shown, &value);
    if (parsed && (value <= bound * 100) == within) return shown;
  }
  return absl::StrFormat("%.4f", fraction * 100);
}

}  // namespace

WarmUntilTracker::WarmUntilTracker(const WarmUntil& until, std::string metric)
    : until_(until), metric_(std::move(metric)) {}

bool WarmUntilTracker::Observe(v1::RunRecord* record) {
  if (record->phase() != v1::PHASE_WARM) return false;
  ++calls_;
  if (IsAcceptedRun(*record)) {
    if (const std::optional<double> value = MetricValue(*record, metric_); value.has_value()) {
      accepted_.push_back(*value);
    }
  }
  v1::WarmStop stop;
  stop.set_metric(metric_);
  stop.set_warm_calls(calls_);
  stop.set_accepted_calls(static_cast<uint32_t>(accepted_.size()));
  stop.set_max_ci_halfwidth(until_.ci_halfwidth);
  stop.set_min_calls(static_cast<uint32_t>(until_.min));
  stop.set_max_calls(static_cast<uint32_t>(until_.max));
  const std::string bound = absl::StrFormat("%g%%", until_.ci_halfwidth * 100);
  const std::string accepted =
      accepted_.size() == calls_ ? "" : absl::StrCat(" (", accepted_.size(), " accepted)");

  std::optional<double> halfwidth;
  if (accepted_.size() >= static_cast<size_t>(until_.min)) {
    const std::optional<double> median = stats::Median(accepted_);
    const std::optional<stats::Interval> interval = stats::BootstrapMedianInterval(accepted_);
    if (median.has_value() && interval.has_value() && *median != 0) {
      halfwidth = (interval->high - interval->low) / 2 / std::fabs(*median);
      stop.set_median(*median);
      stop.set_ci_low(interval->low);
      stop.set_ci_high(interval->high);
      stop.set_ci_level(interval->level);
      stop.set_ci_halfwidth(*halfwidth);
    }
  }
  if (halfwidth.has_value() && *halfwidth <= until_.ci_halfwidth) {
    stop.set_reason(v1::WarmStop::REASON_STABLE);
    stop.set_message(absl::StrCat("stopped: stable, CI half-width ", Percent(*halfwidth, until_.ci_halfwidth, true),
                                  "% <= ", bound, " after ", calls_, " warm calls", accepted));
  } else if (calls_ >= static_cast<uint32_t>(until_.max)) {
    stop.set_reason(v1::WarmStop::REASON_MAX);
    std::string why;
    if (halfwidth.has_value()) {
      why = absl::StrCat("CI half-width ", Percent(*halfwidth, until_.ci_halfwidth, false), "% > ", bound);
    } else if (accepted_.size() < static_cast<size_t>(until_.min)) {
      why = absl::StrCat(accepted_.size(), " accepted, fewer than the ", until_.min, " the test needs");
    } else {
      why = "a median of 0: no relative half-width";
    }
    stop.set_message(absl::StrCat("stopped: max ", until_.max, " warm calls, ", why,
                                  halfwidth.has_value() ? accepted : ""));
  } else {
    return false;
  }
  *record->mutable_warm_stop() = std::move(stop);
  return true;
}

}  // namespace benchfleet::agent
