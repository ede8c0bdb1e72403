// The spread beside a median in the guide's analysis (synthesis/analysis/spread_figures.h): which
// cells get one, its figures and the sources that explain them. Reference values from Python 3.11,
// computed independently of this code, written in each test's comment: statistics.median, statistics.stdev(v) / statistics.mean(v), and a separate Python
// implementation of the splitmix64 percentile bootstrap that common/stats/spread.h describes
// (seed 20261202, 2,000 resamples, index = draw % n, low = medians[50], high = medians[1949]).
#include "synthesis/analysis/spread_figures.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "synthesis/analysis/guide_model.h"
#include "synthesis/analysis/table.h"

namespace benchfleet::synthesis {
namespace {

// The ten figures of tests/unit/common/spread_test.cc, in run order.
const std::vector<double> kTen = {41.0, 42.5, 40.2, 43.1, 41.7, 39.8, 44.0, 42.2, 40.9, 41.3};

v1::RunRecord Record(int i, double tokens_per_second, double ttft_seconds = 0) {
  v1::RunRecord r;
  r.set_run_id("w" + std::to_string(i + 1));
  r.set_task("chat-7b");
  r.set_agent_id("agent-a");
  r.set_backend("llama-server");
  r.set_mode("gpu");
  r.set_phase(v1::PHASE_WARM);
  r.set_call_index(static_cast<uint32_t>(i + 1));
  r.mutable_start_time()->set_seconds(1000 + i);
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
  auto add = [&r](const char* name, double value, const char* unit, uint32_t headline, v1::Better better) {
    v1::Metric* m = r.add_metrics();
    m->set_name(name);
    m->set_value(value);
    m->set_unit(unit);
    m->set_headline(headline);
    m->set_better(better);
    m->set_label(name);
  };
  add("tokens/s", tokens_per_second, "tokens/s", 1, v1::BETTER_HIGHER);
  if (ttft_seconds > 0) add("TTFT", ttft_seconds, "s", 2, v1::BETTER_LOWER);
  return r;
}

std::vector<v1::RunRecord> Records(const std::vector<double>& values) {
  std::vector<v1::RunRecord> out;
  for (size_t i = 0; i < values.size(); ++i) out.push_back(Record(static_cast<int>(i), values[i]));
  return out;
}

const Source& SourceOf(const Analysis& a, const Figure& f) {
  const Source* s = a.sources.Find(f.source_id);
  EXPECT_NE(s, nullptr) << f.source_id;
  static const Source kNone;
  return s != nullptr ? *s : kNone;
}

TEST(SpreadFiguresTest, TenRunsGiveTheMedianItsIntervalAndCoefficientOfVariation) {
  Analysis a = Analyze(Records(kTen));
  ASSERT_EQ(a.cells.size(), 1u);
  const Cell& c = a.cells[0];
  ASSERT_TRUE(c.median && c.spread);
  EXPECT_EQ(c.median->value, 41.5);  // statistics.median
  ASSERT_TRUE(c.spread->ci_low && c.spread->ci_high && c.spread->cv && c.spread->cv_percent);
  // Python bootstrap: (40.6, 42.650000000000006).
  EXPECT_DOUBLE_EQ(c.spread->ci_low->value, 40.6);
  EXPECT_DOUBLE_EQ(c.spread->ci_high->value, 42.65);
  EXPECT_EQ(c.spread->ci_low->unit, "tokens/s");
  EXPECT_EQ(c.spread->level, 0.95);
  // statistics.stdev / statistics.mean = 0.03127023411065691; times 100 = 3.1270234110656907.
  EXPECT_NEAR(c.spread->cv->value, 0.03127023411065691, 1e-12);
  EXPECT_NEAR(c.spread->cv_percent->value, 3.1270234110656907, 1e-10);
  EXPECT_EQ(c.spread->cv_percent->unit, "%");

  // Each cites the same runs as the median, in run order; the percentage is a formula over the CV.
  const std::vector<std::string>& refs = SourceOf(a, *c.median).input_refs;
  ASSERT_EQ(refs.size(), 10u);
  EXPECT_EQ(SourceOf(a, *c.spread->ci_low).operation, "median_ci_low");
  EXPECT_EQ(SourceOf(a, *c.spread->ci_high).operation, "median_ci_high");
  EXPECT_EQ(SourceOf(a, *c.spread->cv).operation, "cv");
  for (const Figure* f : {&*c.spread->ci_low, &*c.spread->ci_high, &*c.spread->cv}) {
    EXPECT_EQ(SourceOf(a, *f).input_refs, refs) << f->source_id;
    EXPECT_TRUE(SourceOf(a, *f).run_ids.empty()) << f->source_id;
  }
  const Source& percent = SourceOf(a, *c.spread->cv_percent);
  EXPECT_EQ(percent.operation, "formula");
  EXPECT_EQ(percent.formula, "x1 * 100");
  EXPECT_EQ(percent.input_refs, std::vector<std::string>{c.spread->cv->source_id});
  // After the cell's aggregates, in a fixed order: interval low, high, CV, percentage.
  const int median_id = std::stoi(c.median->source_id.substr(1));
  EXPECT_EQ(c.spread->ci_low->source_id, "S" + std::to_string(median_id + 1));
  EXPECT_EQ(c.spread->ci_high->source_id, "S" + std::to_string(median_id + 2));
  EXPECT_EQ(c.spread->cv->source_id, "S" + std::to_string(median_id + 3));
  EXPECT_EQ(c.spread->cv_percent->source_id, "S" + std::to_string(median_id + 4));
}

TEST(SpreadFiguresTest, FewerThanFiveRunsHaveNoSpread) {
  Analysis a = Analyze(Records({41.0, 42.5, 40.2, 43.1}));
  ASSERT_EQ(a.cells.size(), 1u);
  EXPECT_FALSE(a.cells[0].median.has_value());
  EXPECT_FALSE(a.cells[0].spread.has_value());
  for (const Source& s : a.sources.sources()) {
    EXPECT_NE(s.operation, "cv");
    EXPECT_NE(s.operation, "median_ci_low");
  }
}

TEST(SpreadFiguresTest, FiveRunsAreEnough) {
  // Python: median 41.7, CV 0.027707961650578747, bootstrap (40.2, 43.1).
  Analysis a = Analyze(Records({41.0, 42.5, 40.2, 43.1, 41.7}));
  ASSERT_TRUE(a.cells.at(0).spread && a.cells[0].spread->ci_low && a.cells[0].spread->cv);
  EXPECT_EQ(a.cells[0].spread->ci_low->value, 40.2);
  EXPECT_EQ(a.cells[0].spread->ci_high->value, 43.1);
  EXPECT_NEAR(a.cells[0].spread->cv->value, 0.027707961650578747, 1e-12);
}

TEST(SpreadFiguresTest, IdenticalFiguresGiveNoVariationAndAPointInterval) {
  // Python: stdev 0 over mean 9.6 = 0.0; every resample's median is 9.6.
  Analysis a = Analyze(Records({9.6, 9.6, 9.6, 9.6, 9.6}));
  const Cell& c = a.cells.at(0);
  ASSERT_TRUE(c.spread && c.spread->ci_low && c.spread->cv_percent);
  EXPECT_EQ(c.spread->ci_low->value, 9.6);
  EXPECT_EQ(c.spread->ci_high->value, 9.6);
  EXPECT_EQ(c.spread->cv_percent->value, 0);
}

TEST(SpreadFiguresTest, AFurtherFigureInSecondsHasItsIntervalInMilliseconds) {
  // TTFT 0.030, 0.031, 0.029, 0.035, 0.032 s. Python: median 0.031, CV 0.07331760785491302,
  // bootstrap (0.029, 0.035).
  const std::vector<double> ttft = {0.030, 0.031, 0.029, 0.035, 0.032};
  std::vector<v1::RunRecord> records;
  for (size_t i = 0; i < ttft.size(); ++i) records.push_back(Record(static_cast<int>(i), 50, ttft[i]));
  Analysis a = Analyze(records);
  ASSERT_EQ(a.cells.at(0).further.size(), 1u);
  const FurtherFigure& f = a.cells[0].further[0];
  ASSERT_TRUE(f.median && f.spread && f.spread_ms && f.spread->ci_low && f.spread_ms->ci_low && f.spread->cv);
  EXPECT_EQ(f.median->value, 0.031);
  EXPECT_EQ(f.spread->ci_low->value, 0.029);
  EXPECT_EQ(f.spread->ci_high->value, 0.035);
  EXPECT_NEAR(f.spread->cv->value, 0.07331760785491302, 1e-12);
  // A further figure's sources list its inputs with their runs, as its median does.
  const Source& low = SourceOf(a, *f.spread->ci_low);
  EXPECT_EQ(low.operation, "median_ci_low");
  EXPECT_EQ(low.inputs, ttft);
  EXPECT_EQ(low.run_ids, (std::vector<std::string>{"w1", "w2", "w3", "w4", "w5"}));
  // In ms: x1 * 1000 over each bound; the CV, which has no unit, is the same figure.
  EXPECT_DOUBLE_EQ(f.spread_ms->ci_low->value, 29);
  EXPECT_DOUBLE_EQ(f.spread_ms->ci_high->value, 35);
  EXPECT_EQ(f.spread_ms->ci_low->unit, "ms");
  EXPECT_EQ(SourceOf(a, *f.spread_ms->ci_high).formula, "x1 * 1000");
  EXPECT_EQ(SourceOf(a, *f.spread_ms->ci_high).input_refs, std::vector<std::string>{f.spread->ci_high->source_id});
  EXPECT_EQ(f.spread_ms->cv_percent->source_id, f.spread->cv_percent->source_id);
}

TEST(SpreadFiguresTest, PastTheIntervalCapOnlyTheCoefficientOfVariationIsGiven) {
  // 1,001 runs of 100 + (i % 7). Python: statistics.stdev / statistics.mean = 0.019427182040047786.
  std::vector<double> values;
  for (int i = 0; i < 1001; ++i) values.push_back(100 + i % 7);
  Analysis a = Analyze(Records(values));
  const Cell& c = a.cells.at(0);
  ASSERT_TRUE(c.spread && c.spread->cv);
  EXPECT_FALSE(c.spread->ci_low.has_value());
  EXPECT_FALSE(c.spread->ci_high.has_value());
  EXPECT_NEAR(c.spread->cv->value, 0.019427182040047786, 1e-12);
}

TEST(SpreadFiguresTest, TheVerdictOfAMedianCellCarriesItsSpread) {
  Analysis a = Analyze(Records(kTen));
  GuideContext context;
  context.targets = DefaultTargets();
  GuideModel model = BuildGuideModel(Records(kTen), context, DefaultMachineOf, &a);
  ASSERT_EQ(model.verdicts.size(), 1u);
  ASSERT_EQ(model.verdicts[0].cells.size(), 1u);
  const CellVerdict& v = model.verdicts[0].cells[0];
  EXPECT_EQ(v.basis, "median");
  ASSERT_TRUE(v.spread && v.spread->ci_low);
  EXPECT_EQ(v.spread->ci_low->source_id, a.cells[0].spread->ci_low->source_id);
}

TEST(SpreadFiguresTest, BurstAndSustainedLevelsOfFiveRunsEachCarryTheirSpread) {
  // Calls 1-5 at 41.0, 42.5, 40.2, 43.1, 41.7; calls 6-10 flagged THROUGHPUT_DROP at 30.1, 28.0,
  // 29.5, 30.4, 28.8. Python: burst median 41.7, CV 0.027707961650578747, bootstrap (40.2, 43.1);
  // sustained median 29.5, CV 0.033249904255765066, bootstrap (28.0, 30.4).
  std::vector<v1::RunRecord> records = Records({41.0, 42.5, 40.2, 43.1, 41.7, 30.1, 28.0, 29.5, 30.4, 28.8});
  for (size_t i = 5; i < records.size(); ++i) records[i].add_flags()->set_code("THROUGHPUT_DROP");
  Analysis a = Analyze(records);
  GuideContext context;
  context.targets = DefaultTargets();
  GuideModel model = BuildGuideModel(records, context, DefaultMachineOf, &a);
  ASSERT_EQ(model.decisions.size(), 1u);
  ASSERT_EQ(model.decisions[0].rows.size(), 1u);
  const DecisionRow& row = model.decisions[0].rows[0];
  ASSERT_TRUE(row.burst && row.sustained);
  EXPECT_EQ(row.drop_call, 6u);
  ASSERT_TRUE(row.burst->median && row.burst->spread && row.burst->spread->ci_low && row.burst->spread->cv);
  EXPECT_EQ(row.burst->median->value, 41.7);
  EXPECT_EQ(row.burst->spread->ci_low->value, 40.2);
  EXPECT_EQ(row.burst->spread->ci_high->value, 43.1);
  EXPECT_NEAR(row.burst->spread->cv->value, 0.027707961650578747, 1e-12);
  ASSERT_TRUE(row.sustained->median && row.sustained->spread && row.sustained->spread->ci_low);
  EXPECT_EQ(row.sustained->median->value, 29.5);
  EXPECT_EQ(row.sustained->spread->ci_low->value, 28.0);
  EXPECT_EQ(row.sustained->spread->ci_high->value, 30.4);
  EXPECT_NEAR(row.sustained->spread->cv->value, 0.033249904255765066, 1e-12);
  // The sustained level's interval cites the runs from the drop on, as its median does.
  EXPECT_EQ(SourceOf(a, *row.sustained->spread->ci_low).input_refs, SourceOf(a, *row.sustained->median).input_refs);
}

}  // namespace
}  // namespace benchfleet::synthesis
