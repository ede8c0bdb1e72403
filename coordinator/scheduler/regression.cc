#include "coordinator/scheduler/regression.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/figures.h"

namespace benchfleet::coordinator {
namespace {

constexpr char kWallSeconds[] = "wall_seconds";

// The figure a run is judged by: what the verdict names and which way is worse.
struct KeyFigure {
  std::string metric;  // the metric's name (the baseline's `metrics` are by name), or kWallSeconds
  std::string label;
  std::string unit;
  v1::Better better = v1::BETTER_UNSPECIFIED;
  double value = 0;
};

// The run's main figure as its backend declared it, else its wall seconds; nullopt with neither.
std::optional<KeyFigure> KeyFigureOf(const v1::RunRecord& run) {
  if (const v1::Metric* main = MainFigure(run); main != nullptr) {
    // The value the `metrics` column keeps (and baselines read): the last of that name.
    std::optional<double> value;
    for (const auto& m : run.metrics()) {
      if (m.name() == main->name() && std::isfinite(m.value())) value = m.value();
    }
    if (value.has_value()) {
      // A main figure is a rate unless declared otherwise (records stamped before `better`).
      const v1::Better better = main->better() == v1::BETTER_LOWER ? v1::BETTER_LOWER : v1::BETTER_HIGHER;
      return KeyFigure{main->name(), FigureLabel(*main), main->unit(), better, *value};
    }
  }
  if (!run.has_wall_duration()) return std::nullopt;
  const double wall = static_cast<double>(run.wall_duration().seconds()) + run.wall_duration().nanos() * 1e-9;
  return KeyFigure{kWallSeconds, "wall time", "s", v1::BETTER_LOWER, wall};
}

std::optional<double> BaselineMetric(const BaselineRun& run, const std::string& name) {
  if (name == kWallSeconds) return run.wall_seconds;
  const auto it = run.metrics.find(name);
  if (it == run.metrics.end()) return std::nullopt;
  return it->second;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::string DescribeConditionsChange(const v1::MachineConditions& before, const v1::MachineConditions& after) {
  std::vector<std::string> parts;
  std::map<std::string, std::string> drivers_before, drivers_after;
  for (const auto& a : before.accelerators()) drivers_before[a.index()] = a.driver();
  for (const auto& a : after.accelerators()) drivers_after[a.index()] = a.driver();
  std::vector<std::string> seen;
  for (const auto& [index, driver] : drivers_after) {
    const auto it = drivers_before.find(index);
    const std::string old = it == drivers_before.end() ? "none" : it->second;
    const std::string change = absl::StrCat("driver ", old, " -> ", driver);
    if (old != driver && std::find(seen.begin(), seen.end(), change) == seen.end()) {
      seen.push_back(change);
      parts.push_back(change);
    }
  }
  std::map<std::string, std::string> backends(before.backend_versions().begin(), before.backend_versions().end());
  for (const auto& [backend, version] :
       std::map<std::string, std::string>(after.backend_versions().begin(), after.backend_versions().end())) {
    const auto it = backends.find(backend);
    const std::string old = it == backends.end() ? "none" : it->second;
    if (old != version) parts.push_back(absl::StrCat(backend, " ", old, " -> ", version));
  }
  if (before.os_version() != after.os_version()) {
    parts.push_back(absl::StrCat(after.os_name(), " ", before.os_version(), " -> ", after.os_version()));
  }
  if (before.kernel() != after.kernel()) parts.push_back(absl::StrCat("kernel ", before.kernel(), " -> ", after.kernel()));
  if (before.agent_version() != after.agent_version()) {
    parts.push_back(absl::StrCat("agent ", before.agent_version(), " -> ", after.agent_version()));
  }
  return absl::StrJoin(parts, ", ");
}

std::optional<v1::RegressionVerdict> CheckRegression(
    const v1::RunRecord& run, const std::vector<BaselineRun>& baseline, double threshold,
    const std::map<std::string, v1::MachineConditions>& conditions) {
  const std::optional<KeyFigure> key = KeyFigureOf(run);
  if (!key.has_value()) return std::nullopt;
  const std::string& metric = key->metric;
  const double value = key->value;
  const bool higher_is_better = key->better == v1::BETTER_HIGHER;

  v1::RegressionVerdict verdict;
  std::vector<double> values;
  const BaselineRun* latest = nullptr;
  for (const BaselineRun& b : baseline) {
    const std::optional<double> v = BaselineMetric(b, metric);
    if (!v.has_value() || !std::isfinite(*v)) continue;
    if (latest == nullptr) latest = &b;
    values.push_back(*v);
    verdict.add_baseline_run_ids(b.run_id);
  }
  if (values.empty()) return std::nullopt;
  const double median = Median(values);
  const double min = *std::min_element(values.begin(), values.end());
  const double max = *std::max_element(values.begin(), values.end());
  verdict.set_run_id(run.run_id());
  verdict.set_metric(metric);
  verdict.set_label(key->label);
  verdict.set_unit(key->unit);
  verdict.set_better(key->better);
  verdict.set_value(value);
  verdict.set_baseline_median(median);
  verdict.set_baseline_min(min);
  verdict.set_baseline_max(max);
  const double change = median != 0 ? (value - median) / median : 0;
  verdict.set_change(change);
  const bool worse_by_threshold = higher_is_better ? change < -threshold : change > threshold;
  const bool outside = higher_is_better ? value < min : value > max;
  verdict.set_regression(median != 0 && worse_by_threshold && outside);

  if (latest->conditions_fingerprint != run.conditions_fingerprint()) {
    const auto before = conditions.find(latest->conditions_fingerprint);
    const auto after = conditions.find(run.conditions_fingerprint());
    std::string change_text;
    if (before != conditions.end() && after != conditions.end()) {
      change_text = DescribeConditionsChange(before->second, after->second);
    }
    if (change_text.empty()) {
      change_text = absl::StrCat("conditions ", latest->conditions_fingerprint.substr(0, 12), " -> ",
                                 run.conditions_fingerprint().substr(0, 12));
    }
    verdict.set_conditions_change(change_text);
  }
  return verdict;
}

std::string RegressionReason(const v1::RegressionVerdict& v) {
  // A verdict stored before `label` and `unit` names its metric, unit-less.
  const std::string& figure = v.label().empty() ? v.metric() : v.label();
  const std::string unit = v.unit().empty() ? "" : absl::StrCat(" ", v.unit());
  std::string reason = absl::StrFormat(
      "%s %.4g%s is %.1f%% worse than the median %.4g of %d runs (min %.4g, max %.4g)", figure, v.value(), unit,
      std::fabs(v.change()) * 100, v.baseline_median(), v.baseline_run_ids_size(), v.baseline_min(),
      v.baseline_max());
  if (!v.conditions_change().empty()) absl::StrAppend(&reason, "; conditions changed: ", v.conditions_change());
  return reason;
}

}  // namespace benchfleet::coordinator
