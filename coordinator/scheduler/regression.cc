#include "coordinator/scheduler/regression.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/figures.h"
#include "common/proto_time.h"
#include "common/record_validation.h"
#include "common/stats/mann_whitney.h"

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
  const double wall = ToSeconds(run.wall_duration());
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
    const v1::RunRecord& run, const std::vector<BaselineRun>& sample, const std::vector<BaselineRun>& baseline,
    const RegressionPolicy& policy, const std::map<std::string, v1::MachineConditions>& conditions) {
  const std::optional<KeyFigure> key = KeyFigureOf(run);
  if (!key.has_value()) return std::nullopt;
  const std::string& metric = key->metric;
  const bool higher_is_better = key->better == v1::BETTER_HIGHER;

  v1::RegressionVerdict verdict;
  verdict.set_run_id(run.run_id());
  verdict.set_metric(metric);
  verdict.set_label(key->label);
  verdict.set_unit(key->unit);
  verdict.set_better(key->better);
  verdict.set_value(key->value);
  verdict.set_mode(run.mode());
  verdict.set_phase(run.phase());
  verdict.mutable_matrix()->insert(run.matrix().begin(), run.matrix().end());
  verdict.set_level(policy.level);
  verdict.set_threshold(policy.threshold);
  verdict.set_baseline_runs_needed(kMinBaselineRuns);

  std::vector<double> values;
  const BaselineRun* latest = nullptr;
  for (const BaselineRun& b : baseline) {
    const std::optional<double> v = BaselineMetric(b, metric);
    if (!v.has_value() || !std::isfinite(*v)) continue;
    if (latest == nullptr) latest = &b;
    values.push_back(*v);
    verdict.add_baseline_run_ids(b.run_id);
  }
  // The sample, oldest first, ending with the run (its own figure from its record).
  std::vector<double> sampled;
  std::vector<std::string> sample_ids;
  for (auto it = sample.rbegin(); it != sample.rend(); ++it) {
    if (it->run_id == run.run_id()) continue;
    const std::optional<double> v = BaselineMetric(*it, metric);
    if (!v.has_value() || !std::isfinite(*v)) continue;
    sampled.push_back(*v);
    sample_ids.push_back(it->run_id);
  }
  sampled.push_back(key->value);
  sample_ids.push_back(run.run_id());
  for (const std::string& id : sample_ids) verdict.add_sample_run_ids(id);
  const double sample_median = Median(sampled);
  verdict.set_sample_median(sample_median);

  const int n1 = static_cast<int>(sampled.size());
  const int n2 = static_cast<int>(values.size());
  for (int n = 1; n <= 100; ++n) {
    if (stats::SmallestPValue(n, n2) < policy.level) {
      verdict.set_sample_runs_needed(n);
      break;
    }
  }
  if (n2 < kMinBaselineRuns) {
    verdict.set_kind(v1::RegressionVerdict::KIND_BASELINE_TOO_SMALL);
    return verdict;  // no baseline to speak of, nor a conditions change to name
  }
  const double median = Median(values);
  verdict.set_baseline_median(median);
  verdict.set_baseline_min(*std::min_element(values.begin(), values.end()));
  verdict.set_baseline_max(*std::max_element(values.begin(), values.end()));
  verdict.set_change(median != 0 ? (key->value - median) / median : 0);
  const double change = median != 0 ? (sample_median - median) / median : 0;
  verdict.set_sample_change(change);

  const std::optional<stats::MannWhitneyResult> test = stats::MannWhitneyU(sampled, values);
  verdict.set_test(absl::StrCat("Mann-Whitney U, two-sided, ", test->exact ? "exact" : "normal approximation"));
  verdict.set_p_value(test->p_value);
  const bool worse = higher_is_better ? change < -policy.threshold : change > policy.threshold;
  const bool better = higher_is_better ? change > policy.threshold : change < -policy.threshold;
  // Distinct values this few could never reach the level; tied ones sometimes can (a tie can
  // leave the mirror image of the most extreme split out of reach), so the p-value decides first.
  if (test->p_value >= policy.level && stats::SmallestPValue(n1, n2) >= policy.level) {
    verdict.set_kind(v1::RegressionVerdict::KIND_SAMPLE_TOO_SMALL);
  } else if (!worse && !better) {
    verdict.set_kind(v1::RegressionVerdict::KIND_NO_CHANGE);
  } else if (test->p_value >= policy.level) {
    verdict.set_kind(v1::RegressionVerdict::KIND_NOT_SIGNIFICANT);
  } else {
    verdict.set_kind(worse ? v1::RegressionVerdict::KIND_REGRESSION : v1::RegressionVerdict::KIND_IMPROVEMENT);
  }
  verdict.set_regression(verdict.kind() == v1::RegressionVerdict::KIND_REGRESSION);

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

std::string KindName(v1::RegressionVerdict::Kind kind) {
  const std::string name = v1::RegressionVerdict::Kind_Name(kind);
  return name.size() > 5 ? name.substr(5) : name;  // without "KIND_"
}

std::string ComparedText(const v1::RegressionVerdict& v) {
  const int b = v.baseline_run_ids_size();
  return absl::StrCat(PhaseRunCount(v.phase(), v.sample_run_ids_size()), " of this series vs ", b,
                      b == 1 ? " earlier run" : " earlier runs");
}

std::string RegressionReason(const v1::RegressionVerdict& v) {
  // A verdict stored before `label` and `unit` names its metric, unit-less.
  const std::string& figure = v.label().empty() ? v.metric() : v.label();
  const std::string unit = v.unit().empty() ? "" : absl::StrCat(" ", v.unit());
  std::string reason;
  if (v.kind() == v1::RegressionVerdict::KIND_UNSPECIFIED) {
    reason = absl::StrFormat("%s %.4g%s is %.1f%% worse than the median %.4g of %d runs (min %.4g, max %.4g)",
                             figure, v.value(), unit, std::fabs(v.change()) * 100, v.baseline_median(),
                             v.baseline_run_ids_size(), v.baseline_min(), v.baseline_max());
  } else if (v.kind() == v1::RegressionVerdict::KIND_BASELINE_TOO_SMALL) {
    reason = absl::StrFormat("BASELINE_TOO_SMALL: %s, %s (needs %d)", figure, ComparedText(v),
                             v.baseline_runs_needed());
  } else {
    // The test first: the guide shows the first 160 characters of a flag's reason.
    const bool higher_is_better = v.better() != v1::BETTER_LOWER;
    const bool worse = higher_is_better ? v.sample_change() < 0 : v.sample_change() > 0;
    reason = absl::StrFormat("%s: p = %.3g %s %.2g (%s), %s", KindName(v.kind()), v.p_value(),
                             v.p_value() < v.level() ? "<" : ">=", v.level(), v.test(), ComparedText(v));
    if (v.kind() == v1::RegressionVerdict::KIND_SAMPLE_TOO_SMALL) {
      absl::StrAppend(&reason, absl::StrFormat(", too few to ever get below it (needs %d)", v.sample_runs_needed()));
    }
    absl::StrAppend(&reason, absl::StrFormat(": %s median %.4g vs %.4g%s (%.1f%% %s", figure, v.sample_median(),
                                             v.baseline_median(), unit, std::fabs(v.sample_change()) * 100,
                                             worse ? "worse" : "better"));
    if (v.kind() != v1::RegressionVerdict::KIND_SAMPLE_TOO_SMALL) {
      absl::StrAppend(&reason, absl::StrFormat(", threshold %.3g%%", v.threshold() * 100));
    }
    absl::StrAppend(&reason, ")");
  }
  if (!v.conditions_change().empty()) absl::StrAppend(&reason, "; conditions changed: ", v.conditions_change());
  return reason;
}

}  // namespace benchfleet::coordinator
