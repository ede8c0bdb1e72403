// CheckRegression: the key figure (the run's main figure as its declaration stamps it, else the
// wall time), the threshold AND the spread rule, figures where lower is better, no verdict
// without a baseline, and the conditions change named beside the verdict.
#include "coordinator/scheduler/regression.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace benchfleet::coordinator {
namespace {

// A run whose `metric` is stamped as its main figure (headline 1), as a backend declares it.
v1::RunRecord NewRun(const std::string& metric, double value, const std::string& fingerprint = "fp1",
                     v1::Better better = v1::BETTER_HIGHER, const std::string& label = "output tokens/s",
                     const std::string& unit = "tokens/s") {
  v1::RunRecord r;
  r.set_run_id("run-new");
  r.set_conditions_fingerprint(fingerprint);
  if (!metric.empty()) {
    auto* m = r.add_metrics();
    m->set_name(metric);
    m->set_value(value);
    m->set_unit(unit);
    m->set_headline(1);
    m->set_label(label);
    m->set_better(better);
  }
  r.mutable_wall_duration()->set_seconds(10);
  return r;
}

std::vector<BaselineRun> Baseline(const std::string& metric, const std::vector<double>& values,
                                  const std::string& fingerprint = "fp1") {
  std::vector<BaselineRun> out;
  int i = 0;
  for (double v : values) {
    BaselineRun b;
    b.run_id = "b" + std::to_string(++i);
    b.metrics[metric] = v;
    b.wall_seconds = v;
    b.conditions_fingerprint = fingerprint;
    out.push_back(b);
  }
  return out;
}

TEST(RegressionTest, WorseByMoreThanThresholdAndOutsideSpreadIsARegression) {
  auto v = CheckRegression(NewRun("tokens_per_second", 40), Baseline("tokens_per_second", {50, 52, 48, 51, 49}),
                           0.10, {});
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(v->regression());
  EXPECT_EQ(v->metric(), "tokens_per_second");
  EXPECT_EQ(v->label(), "output tokens/s");
  EXPECT_EQ(v->unit(), "tokens/s");
  EXPECT_EQ(v->better(), v1::BETTER_HIGHER);
  EXPECT_DOUBLE_EQ(v->baseline_median(), 50);
  EXPECT_DOUBLE_EQ(v->baseline_min(), 48);
  EXPECT_DOUBLE_EQ(v->baseline_max(), 52);
  EXPECT_DOUBLE_EQ(v->change(), -0.2);
  EXPECT_THAT(v->baseline_run_ids(), ::testing::ElementsAre("b1", "b2", "b3", "b4", "b5"));
  EXPECT_EQ(v->conditions_change(), "");
  EXPECT_EQ(RegressionReason(*v),
            "output tokens/s 40 tokens/s is 20.0% worse than the median 50 of 5 runs (min 48, max 52)");
  // A verdict stored before label and unit: named by its metric.
  v->clear_label();
  v->clear_unit();
  EXPECT_EQ(RegressionReason(*v),
            "tokens_per_second 40 is 20.0% worse than the median 50 of 5 runs (min 48, max 52)");
}

TEST(RegressionTest, InsideTheSpreadIsNotARegression) {
  // 20% below the median, but the baseline itself went as low: noise, not a regression.
  auto v = CheckRegression(NewRun("tokens_per_second", 40), Baseline("tokens_per_second", {50, 39, 60}), 0.10, {});
  ASSERT_TRUE(v.has_value());
  EXPECT_FALSE(v->regression());
}

TEST(RegressionTest, WithinTheThresholdIsNotARegression) {
  auto v = CheckRegression(NewRun("tokens_per_second", 46), Baseline("tokens_per_second", {50, 50, 50}), 0.10, {});
  ASSERT_TRUE(v.has_value());
  EXPECT_FALSE(v->regression());
  EXPECT_DOUBLE_EQ(v->change(), -0.08);
}

TEST(RegressionTest, TheMainFigureWhateverItsNameThenWallSecondsWhereLowerIsBetter) {
  // The figure stamped headline 1 is the key, not one of a list of names: a rate the declaration
  // does not make the main figure (headline 0) or makes a further headline (2) is not.
  v1::RunRecord run = NewRun("images_per_second", 0.5, "fp1", v1::BETTER_HIGHER, "images/s", "images/s");
  auto* other = run.add_metrics();
  other->set_name("tokens_per_second");
  other->set_value(40);
  auto* second = run.add_metrics();
  second->set_name("server_execution_seconds");
  second->set_value(2);
  second->set_headline(2);
  auto v = CheckRegression(run, Baseline("images_per_second", {0.51, 0.5}), 0.10, {});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->metric(), "images_per_second");
  EXPECT_FALSE(v->regression());

  // No main figure (a record older than the declarations): wall seconds, 10 s against 8 s is
  // 25% slower.
  v1::RunRecord undeclared = NewRun("", 0);
  undeclared.add_metrics()->set_name("tokens_per_second");
  undeclared.mutable_metrics(0)->set_value(40);
  auto w = CheckRegression(undeclared, Baseline("tokens_per_second", {8, 8, 7.5}), 0.10, {});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->metric(), "wall_seconds");
  EXPECT_EQ(w->label(), "wall time");
  EXPECT_EQ(w->unit(), "s");
  EXPECT_EQ(w->better(), v1::BETTER_LOWER);
  EXPECT_TRUE(w->regression());
  EXPECT_DOUBLE_EQ(w->change(), 0.25);
  EXPECT_EQ(RegressionReason(*w), "wall time 10 s is 25.0% worse than the median 8 of 3 runs (min 7.5, max 8)");
}

TEST(RegressionTest, AMainFigureWhereLowerIsBetterRegressesWhenItRises) {
  // A backend whose main figure is a latency (declared BETTER_LOWER): 30% slower is a regression.
  auto v = CheckRegression(NewRun("latency_mean_seconds", 0.52, "fp1", v1::BETTER_LOWER, "mean latency", "s"),
                           Baseline("latency_mean_seconds", {0.4, 0.41, 0.39}), 0.10, {});
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(v->regression());
  EXPECT_NEAR(v->change(), 0.3, 1e-12);
  EXPECT_EQ(v->better(), v1::BETTER_LOWER);
  EXPECT_EQ(RegressionReason(*v), "mean latency 0.52 s is 30.0% worse than the median 0.4 of 3 runs (min 0.39, max 0.41)");
  // 30% faster is not.
  auto faster = CheckRegression(NewRun("latency_mean_seconds", 0.28, "fp1", v1::BETTER_LOWER, "mean latency", "s"),
                                Baseline("latency_mean_seconds", {0.4, 0.41, 0.39}), 0.10, {});
  ASSERT_TRUE(faster.has_value());
  EXPECT_FALSE(faster->regression());
  // A main figure whose declaration says neither way is taken as a rate (higher is better).
  auto unspecified = CheckRegression(NewRun("latency_mean_seconds", 0.28, "fp1", v1::BETTER_UNSPECIFIED),
                                     Baseline("latency_mean_seconds", {0.4, 0.41, 0.39}), 0.10, {});
  ASSERT_TRUE(unspecified.has_value());
  EXPECT_TRUE(unspecified->regression());
  EXPECT_EQ(unspecified->better(), v1::BETTER_HIGHER);
}

TEST(RegressionTest, NoBaselineNoVerdict) {
  EXPECT_FALSE(CheckRegression(NewRun("tokens_per_second", 40), {}, 0.10, {}).has_value());
  EXPECT_FALSE(CheckRegression(NewRun("tokens_per_second", 40), Baseline("images_per_second", {1}), 0.10, {})
                   .has_value());
}

TEST(RegressionTest, ConditionsChangeIsNamedBesideTheVerdict) {
  v1::MachineConditions before, after;
  auto* a = before.add_accelerators();
  a->set_index("0");
  a->set_driver("550.54");
  (*before.mutable_backend_versions())["llama-server"] = "b4000";
  after = before;
  after.mutable_accelerators(0)->set_driver("560.28");
  (*after.mutable_backend_versions())["llama-server"] = "b4123";
  auto v = CheckRegression(NewRun("tokens_per_second", 40, "fp2"), Baseline("tokens_per_second", {50, 50}, "fp1"),
                           0.10, {{"fp1", before}, {"fp2", after}});
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(v->regression());
  EXPECT_EQ(v->conditions_change(), "driver 550.54 -> 560.28, llama-server b4000 -> b4123");
}

}  // namespace
}  // namespace benchfleet::coordinator
