#include "coordinator/scheduler/regression.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace benchfleet::coordinator {
namespace {

constexpr const char* kRates[] = {"predicted_per_second", "images_per_second", "tokens_per_second"};
constexpr char kWallSeconds[] = "wall_seconds";

std::optional<double> RunMetric(const v1::RunRecord& run, const std::string& name) {
  if (name == kWallSeconds) {
    if (!run.has_wall_duration()) return std::nullopt;
    return static_cast<double>(run.wall_duration().seconds()) + run.wall_duration().nanos() * 1e-9;
  }
  std::optional<double> value;
  for (const auto& m : run.metrics()) {
    if (m.name() == name && std::isfinite(m.value())) value = m.value();  // the last one, as stored
  }
  return value;
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
  std::string metric;
  std::optional<double> value;
  for (const char* name : kRates) {
    value = RunMetric(run, name);
    if (value.has_value()) {
      metric = name;
      break;
    }
  }
  if (!value.has_value()) {
    metric = kWallSeconds;
    value = RunMetric(run, metric);
  }
  if (!value.has_value()) return std::nullopt;
  const bool higher_is_better = metric != kWallSeconds;

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
  verdict.set_value(*value);
  verdict.set_baseline_median(median);
  verdict.set_baseline_min(min);
  verdict.set_baseline_max(max);
  const double change = median != 0 ? (*value - median) / median : 0;
  verdict.set_change(change);
  const bool worse_by_threshold = higher_is_better ? change < -threshold : change > threshold;
  const bool outside = higher_is_better ? *value < min : *value > max;
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
  std::string reason = absl::StrFormat(
      "%s %.4g is %.1f%% worse than the median %.4g of %d runs (min %.4g, max %.4g)", v.metric(), v.value(),
      std::fabs(v.change()) * 100, v.baseline_median(), v.baseline_run_ids_size(), v.baseline_min(),
      v.baseline_max());
  if (!v.conditions_change().empty()) absl::StrAppend(&reason, "; conditions changed: ", v.conditions_change());
  return reason;
}

}  // namespace benchfleet::coordinator
