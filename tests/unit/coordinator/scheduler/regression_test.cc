// CheckRegression: the key figure (the run's main figure as its declaration stamps it, else the
// wall time), a REGRESSION or IMPROVEMENT only with both a significant Mann-Whitney U test and a
// change beyond the threshold, NO_CHANGE, NOT_SIGNIFICANT, a baseline or sample too small, figures
// where lower is better, and the conditions change named beside the verdict. Reference p-values:
// the exact two-sided permutation distribution enumerated in Python 3.11 (itertools.combinations
// over the pooled midranks), as in tests/unit/common/mann_whitney_test.cc.
#include "coordinator/scheduler/regression.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace benchfleet::coordinator {
namespace {

using ::testing::ElementsAre;

// A warm run of mode gpu whose `metric` is stamped as its main figure (headline 1), as a backend
// declares it.
v1::RunRecord NewRun(const std::string& metric, double value, const std::string& fingerprint = "fp1",
                     v1::Better better = v1::BETTER_HIGHER, const std::string& label = "output tokens/s",
                     const std::string& unit = "tokens/s") {
  v1::RunRecord r;
  r.set_run_id("run-new");
  r.set_mode("gpu");
  r.set_phase(v1::PHASE_WARM);
  (*r.mutable_matrix())["ctx"] = "4096";
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

// Runs named PREFIX1, PREFIX2, ... (newest first, as the store reads them).
std::vector<BaselineRun> Runs(const std::string& prefix, const std::string& metric, const std::vector<double>& values,
                              const std::string& fingerprint = "fp1") {
  std::vector<BaselineRun> out;
  int i = 0;
  for (double v : values) {
    BaselineRun b;
    b.run_id = prefix + std::to_string(++i);
    b.metrics[metric] = v;
    b.wall_seconds = v;
    b.conditions_fingerprint = fingerprint;
    out.push_back(b);
  }
  return out;
}

RegressionPolicy Policy(double threshold = 0.10) {
  RegressionPolicy p;
  p.threshold = threshold;
  return p;
}

constexpr char kRate[] = "tokens_per_second";

TEST(RegressionTest, ASignificantDropBeyondTheThresholdIsARegression) {
  // Sample (oldest first) 39, 42, 41, then the run's 40: median 40.5, 19% below the baseline's 50.
  // Reference: 2 of C(9, 4) = 126 splits as extreme, p = 0.015873015873015872.
  auto v = CheckRegression(NewRun(kRate, 40), Runs("s", kRate, {41, 42, 39}), Runs("b", kRate, {50, 52, 48, 51, 49}),
                           Policy(), {});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->kind(), v1::RegressionVerdict::KIND_REGRESSION);
  EXPECT_TRUE(v->regression());
  EXPECT_EQ(v->test(), "Mann-Whitney U, two-sided, exact");
  EXPECT_NEAR(v->p_value(), 0.015873015873015872, 1e-15);
  EXPECT_DOUBLE_EQ(v->level(), 0.05);
  EXPECT_DOUBLE_EQ(v->threshold(), 0.10);
  EXPECT_THAT(v->sample_run_ids(), ElementsAre("s3", "s2", "s1", "run-new"));
  EXPECT_THAT(v->baseline_run_ids(), ElementsAre("b1", "b2", "b3", "b4", "b5"));
  EXPECT_DOUBLE_EQ(v->sample_median(), 40.5);
  EXPECT_DOUBLE_EQ(v->baseline_median(), 50);
  EXPECT_DOUBLE_EQ(v->baseline_min(), 48);
  EXPECT_DOUBLE_EQ(v->baseline_max(), 52);
  EXPECT_DOUBLE_EQ(v->sample_change(), -0.19);
  EXPECT_DOUBLE_EQ(v->change(), -0.2);  // the run's own 40
  EXPECT_EQ(v->metric(), kRate);
  EXPECT_EQ(v->label(), "output tokens/s");
  EXPECT_EQ(v->unit(), "tokens/s");
  EXPECT_EQ(v->better(), v1::BETTER_HIGHER);
  EXPECT_EQ(v->mode(), "gpu");
  EXPECT_EQ(v->phase(), v1::PHASE_WARM);
  EXPECT_EQ(v->matrix().at("ctx"), "4096");
  EXPECT_EQ(v->baseline_runs_needed(), 3);
  EXPECT_EQ(v->sample_runs_needed(), 3);  // 2 / C(8, 3) = 0.036 < 0.05; 2 / C(7, 2) = 0.095
  EXPECT_EQ(v->conditions_change(), "");
  EXPECT_EQ(ComparedText(*v), "4 warm calls of this series vs 5 earlier runs");
  EXPECT_EQ(RegressionReason(*v),
            "REGRESSION: p = 0.0159 < 0.05 (Mann-Whitney U, two-sided, exact), 4 warm calls of this series vs 5 "
            "earlier runs: output tokens/s median 40.5 vs 50 tokens/s (19.0% worse, threshold 10%)");
}

TEST(RegressionTest, ASignificantChangeWithinTheThresholdIsNoChange) {
  // The same figures with a threshold of 25%: significant (p = 0.0159), 19% is within it.
  auto v = CheckRegression(NewRun(kRate, 40), Runs("s", kRate, {41, 42, 39}), Runs("b", kRate, {50, 52, 48, 51, 49}),
                           Policy(0.25), {});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->kind(), v1::RegressionVerdict::KIND_NO_CHANGE);
  EXPECT_FALSE(v->regression());
  EXPECT_NEAR(v->p_value(), 0.015873015873015872, 1e-15);
}

TEST(RegressionTest, ANoisyDropBeyondTheThresholdIsNotSignificant) {
  // Sample 40, 53, 41, run 44 (median 42.5, 15% below 50) against 50, 52, 40, 51, 42.
  // Reference: 100 of 126 splits as extreme, p = 0.7936507936507936, U = 8.5.
  auto v = CheckRegression(NewRun(kRate, 44), Runs("s", kRate, {41, 53, 40}), Runs("b", kRate, {50, 52, 40, 51, 42}),
                           Policy(), {});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->kind(), v1::RegressionVerdict::KIND_NOT_SIGNIFICANT);
  EXPECT_FALSE(v->regression());
  EXPECT_NEAR(v->p_value(), 0.7936507936507936, 1e-15);
  EXPECT_DOUBLE_EQ(v->sample_change(), -0.15);
  EXPECT_EQ(RegressionReason(*v),
            "NOT_SIGNIFICANT: p = 0.794 >= 0.05 (Mann-Whitney U, two-sided, exact), 4 warm calls of this series vs "
            "5 earlier runs: output tokens/s median 42.5 vs 50 tokens/s (15.0% worse, threshold 10%)");
}

TEST(RegressionTest, ASignificantRiseBeyondTheThresholdIsAnImprovement) {
  // Sample 60, 61, 62, run 63 (median 61.5, 23% above 50). Reference: p = 2 / 126.
  auto v = CheckRegression(NewRun(kRate, 63), Runs("s", kRate, {62, 61, 60}), Runs("b", kRate, {50, 52, 48, 51, 49}),
                           Policy(), {});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->kind(), v1::RegressionVerdict::KIND_IMPROVEMENT);
  EXPECT_FALSE(v->regression());
  EXPECT_NEAR(v->p_value(), 0.015873015873015872, 1e-15);
  EXPECT_NEAR(v->sample_change(), 0.23, 1e-12);
}

TEST(RegressionTest, FewerThanThreeBaselineRunsGiveNoVerdict) {
  auto v = CheckRegression(NewRun(kRate, 40), Runs("s", kRate, {41, 42, 39}), Runs("b", kRate, {50, 52}), Policy(), {});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->kind(), v1::RegressionVerdict::KIND_BASELINE_TOO_SMALL);
  EXPECT_FALSE(v->regression());
  EXPECT_EQ(v->test(), "");
  EXPECT_THAT(v->baseline_run_ids(), ElementsAre("b1", "b2"));
  EXPECT_EQ(RegressionReason(*v),
            "BASELINE_TOO_SMALL: output tokens/s, 4 warm calls of this series vs 2 earlier runs (needs 3)");
  // No baseline at all: the same, stored and shown.
  auto none = CheckRegression(NewRun(kRate, 40), {}, {}, Policy(), {});
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->kind(), v1::RegressionVerdict::KIND_BASELINE_TOO_SMALL);
  EXPECT_EQ(none->sample_runs_needed(), 0);
  EXPECT_EQ(RegressionReason(*none),
            "BASELINE_TOO_SMALL: output tokens/s, 1 warm call of this series vs 0 earlier runs (needs 3)");
}

TEST(RegressionTest, ASampleTooSmallToEverBeSignificantSaysSo) {
  // One run against five distinct values: the smallest two-sided p is 2 / C(6, 1) = 1/3, however
  // far the run is from the baseline; two runs: 2 / C(7, 2) = 0.095, still above 0.05.
  auto v = CheckRegression(NewRun(kRate, 20), {}, Runs("b", kRate, {50, 52, 48, 51, 49}), Policy(), {});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->kind(), v1::RegressionVerdict::KIND_SAMPLE_TOO_SMALL);
  EXPECT_FALSE(v->regression());
  EXPECT_NEAR(v->p_value(), 1.0 / 3, 1e-15);
  EXPECT_EQ(v->sample_runs_needed(), 3);
  EXPECT_EQ(RegressionReason(*v),
            "SAMPLE_TOO_SMALL: p = 0.333 >= 0.05 (Mann-Whitney U, two-sided, exact), 1 warm call of this series vs "
            "5 earlier runs, too few to ever get below it (needs 3): output tokens/s median 20 vs 50 tokens/s (60.0% "
            "worse)");
  auto two = CheckRegression(NewRun(kRate, 20), Runs("s", kRate, {21}), Runs("b", kRate, {50, 52, 48, 51, 49}),
                             Policy(), {});
  EXPECT_EQ(two->kind(), v1::RegressionVerdict::KIND_SAMPLE_TOO_SMALL);
  EXPECT_NEAR(two->p_value(), 2.0 / 21, 1e-15);
  // A cold run (one per task) says "cold run".
  v1::RunRecord cold = NewRun(kRate, 20);
  cold.set_phase(v1::PHASE_COLD);
  EXPECT_EQ(ComparedText(*CheckRegression(cold, {}, Runs("b", kRate, {50, 52, 48}), Policy(), {})),
            "1 cold run of this series vs 3 earlier runs");
}

TEST(RegressionTest, TiedBaselineValuesCanLetTwoRunsReachTheLevel) {
  // Two runs at 40 against 51, 50, 51, 50, 51: the ties leave the mirror image of the most extreme
  // split out of reach. Reference: enumeration, 1 of C(7, 2) = 21 splits as extreme,
  // p = 0.047619047619047616 < 0.05, below SmallestPValue(2, 5) = 0.095 for distinct values.
  auto v = CheckRegression(NewRun(kRate, 40), Runs("s", kRate, {40}), Runs("b", kRate, {51, 50, 51, 50, 51}),
                           Policy(), {});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->kind(), v1::RegressionVerdict::KIND_REGRESSION);
  EXPECT_NEAR(v->p_value(), 0.047619047619047616, 1e-15);
}

TEST(RegressionTest, AMainFigureWhereLowerIsBetterRegressesWhenItRises) {
  // Mean latency 0.5, 0.52, 0.55, run 0.53 (median 0.525) against 0.4, 0.41, 0.39, 0.42 (median
  // 0.405): 29.6% slower. Reference: 2 of C(8, 4) = 70 splits, p = 0.02857142857142857.
  auto v = CheckRegression(NewRun("latency_mean_seconds", 0.53, "fp1", v1::BETTER_LOWER, "mean latency", "s"),
                           Runs("s", "latency_mean_seconds", {0.55, 0.52, 0.5}),
                           Runs("b", "latency_mean_seconds", {0.4, 0.41, 0.39, 0.42}), Policy(), {});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->kind(), v1::RegressionVerdict::KIND_REGRESSION);
  EXPECT_NEAR(v->p_value(), 0.02857142857142857, 1e-15);
  EXPECT_NEAR(v->sample_change(), 0.2962962962962963, 1e-12);
  EXPECT_EQ(v->better(), v1::BETTER_LOWER);
  // The same figures as a rate (a declaration that says neither way): an improvement.
  auto unspecified = CheckRegression(NewRun("latency_mean_seconds", 0.53, "fp1", v1::BETTER_UNSPECIFIED),
                                     Runs("s", "latency_mean_seconds", {0.55, 0.52, 0.5}),
                                     Runs("b", "latency_mean_seconds", {0.4, 0.41, 0.39, 0.42}), Policy(), {});
  EXPECT_EQ(unspecified->kind(), v1::RegressionVerdict::KIND_IMPROVEMENT);
  EXPECT_EQ(unspecified->better(), v1::BETTER_HIGHER);
}

TEST(RegressionTest, TheMainFigureWhateverItsNameThenWallSecondsWhereLowerIsBetter) {
  // A figure the declaration does not make the main one (headline 0 or 2) is not the key.
  v1::RunRecord run = NewRun("images_per_second", 0.5, "fp1", v1::BETTER_HIGHER, "images/s", "images/s");
  auto* other = run.add_metrics();
  other->set_name(kRate);
  other->set_value(40);
  auto v = CheckRegression(run, {}, Runs("b", "images_per_second", {0.51, 0.5, 0.5}), Policy(), {});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->metric(), "images_per_second");

  // No main figure (a record older than the declarations): wall seconds. Sample 10, 10.5, 11,
  // 10.2, run 10 s (median 10.2) against 8, 8, 7.5: 27.5% slower. Reference: 2 of C(8, 3) = 56
  // splits, p = 0.03571428571428571.
  v1::RunRecord undeclared = NewRun("", 0);
  undeclared.add_metrics()->set_name(kRate);
  undeclared.mutable_metrics(0)->set_value(40);
  auto w = CheckRegression(undeclared, Runs("s", "x", {10.2, 11, 10.5, 10}), Runs("b", "x", {8, 8, 7.5}), Policy(), {});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->metric(), "wall_seconds");
  EXPECT_EQ(w->label(), "wall time");
  EXPECT_EQ(w->unit(), "s");
  EXPECT_EQ(w->better(), v1::BETTER_LOWER);
  EXPECT_EQ(w->kind(), v1::RegressionVerdict::KIND_REGRESSION);
  EXPECT_NEAR(w->p_value(), 0.03571428571428571, 1e-15);
  EXPECT_NEAR(w->sample_change(), 0.275, 1e-12);
}

TEST(RegressionTest, SampleAndBaselineRunsWithoutTheFigureAreLeftOutAndTheRunCountsOnce) {
  std::vector<BaselineRun> sample = Runs("s", kRate, {41, 42});
  sample.insert(sample.begin(), BaselineRun{.run_id = "run-new", .metrics = {{kRate, 40}}});  // the stored run
  sample.push_back(BaselineRun{.run_id = "s-other", .metrics = {{"images_per_second", 1}}});
  std::vector<BaselineRun> baseline = Runs("b", kRate, {50, 52, 48});
  baseline.push_back(BaselineRun{.run_id = "b-other", .metrics = {{"images_per_second", 1}}});
  auto v = CheckRegression(NewRun(kRate, 40), sample, baseline, Policy(), {});
  ASSERT_TRUE(v.has_value());
  EXPECT_THAT(v->sample_run_ids(), ElementsAre("s2", "s1", "run-new"));
  EXPECT_THAT(v->baseline_run_ids(), ElementsAre("b1", "b2", "b3"));
}

TEST(RegressionTest, NoKeyFigureNoVerdict) {
  v1::RunRecord run = NewRun("", 0);
  run.clear_wall_duration();
  EXPECT_FALSE(CheckRegression(run, {}, Runs("b", kRate, {50, 52, 48}), Policy(), {}).has_value());
}

TEST(RegressionTest, AVerdictStoredBeforeKindsReadsAsBefore) {
  v1::RegressionVerdict old;
  old.set_metric(kRate);
  old.set_value(40);
  old.set_baseline_median(50);
  old.set_baseline_min(48);
  old.set_baseline_max(52);
  old.set_change(-0.2);
  old.set_regression(true);
  for (const char* id : {"b1", "b2", "b3", "b4", "b5"}) old.add_baseline_run_ids(id);
  EXPECT_EQ(RegressionReason(old), "tokens_per_second 40 is 20.0% worse than the median 50 of 5 runs (min 48, max 52)");
  EXPECT_EQ(KindName(old.kind()), "UNSPECIFIED");
  EXPECT_EQ(KindName(v1::RegressionVerdict::KIND_NOT_SIGNIFICANT), "NOT_SIGNIFICANT");
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
  auto v = CheckRegression(NewRun(kRate, 40, "fp2"), Runs("s", kRate, {41, 42, 39}, "fp2"),
                           Runs("b", kRate, {50, 52, 48, 51, 49}, "fp1"), Policy(), {{"fp1", before}, {"fp2", after}});
  ASSERT_TRUE(v.has_value());
  EXPECT_TRUE(v->regression());
  EXPECT_EQ(v->conditions_change(), "driver 550.54 -> 560.28, llama-server b4000 -> b4123");
  EXPECT_THAT(RegressionReason(*v), ::testing::EndsWith("(19.0% worse, threshold 10%); conditions changed: driver "
                                                        "550.54 -> 560.28, llama-server b4000 -> b4123"));
}

}  // namespace
}  // namespace benchfleet::coordinator
