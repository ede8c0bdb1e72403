// CheckRegression: the key figure, the threshold AND the spread rule, durations where lower is
// better, no verdict without a baseline, and the conditions change named beside the verdict.
#include "coordinator/scheduler/regression.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace benchfleet::coordinator {
namespace {

v1::RunRecord NewRun(const std::string& metric, double value, const std::string& fingerprint = "fp1") {
  v1::RunRecord r;
  r.set_run_id("run-new");
  r.set_conditions_fingerprint(fingerprint);
  if (!metric.empty()) {
    auto* m = r.add_metrics();
    m->set_name(metric);
    m->set_value(value);
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
  EXPECT_DOUBLE_EQ(v->baseline_median(), 50);
  EXPECT_DOUBLE_EQ(v->baseline_min(), 48);
  EXPECT_DOUBLE_EQ(v->baseline_max(), 52);
  EXPECT_DOUBLE_EQ(v->change(), -0.2);
  EXPECT_THAT(v->baseline_run_ids(), ::testing::ElementsAre("b1", "b2", "b3", "b4", "b5"));
  EXPECT_EQ(v->conditions_change(), "");
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

TEST(RegressionTest, PreferredRateThenWallSecondsWhereLowerIsBetter) {
  v1::RunRecord run = NewRun("tokens_per_second", 40);
  auto* m = run.add_metrics();
  m->set_name("predicted_per_second");
  m->set_value(30);
  auto v = CheckRegression(run, Baseline("predicted_per_second", {31, 30}), 0.10, {});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->metric(), "predicted_per_second");
  EXPECT_FALSE(v->regression());

  // No rate: wall seconds, 10 s against 8 s is 25% slower.
  auto w = CheckRegression(NewRun("", 0), Baseline("none", {8, 8, 7.5}), 0.10, {});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->metric(), "wall_seconds");
  EXPECT_TRUE(w->regression());
  EXPECT_DOUBLE_EQ(w->change(), 0.25);
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
