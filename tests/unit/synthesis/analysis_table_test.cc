#include "synthesis/analysis/table.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "synthesis/analysis/sources.h"

namespace benchfleet::synthesis {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

v1::RunRecord MakeRun(const std::string& id, v1::Phase phase, uint32_t call_index, double tokens_per_second,
                  int64_t start_seconds) {
  v1::RunRecord r;
  r.set_run_id(id);
  r.set_task("chat-7b");
  r.set_agent_id("agent-a");
  r.set_backend("llama-server");
  r.set_mode("gpu");
  r.set_phase(phase);
  r.set_call_index(call_index);
  r.mutable_start_time()->set_seconds(start_seconds);
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
  (*r.mutable_matrix())["n_predict"] = "128";
  auto* m = r.add_metrics();
  m->set_name("tokens_per_second");
  m->set_value(tokens_per_second);
  m->set_unit("tokens/s");
  m->set_headline(1);  // as the runner stamps its backend's declaration
  m->set_better(v1::BETTER_HIGHER);
  m->set_label("tokens/s");
  return r;
}

std::vector<v1::RunRecord> WarmRuns(const std::vector<double>& values) {
  std::vector<v1::RunRecord> out;
  for (size_t i = 0; i < values.size(); ++i) {
    out.push_back(MakeRun("w" + std::to_string(i + 1), v1::PHASE_WARM, static_cast<uint32_t>(i + 1), values[i],
                      1000 + static_cast<int64_t>(i)));
  }
  return out;
}

std::vector<double> Values(const Cell& cell) {
  std::vector<double> out;
  for (const auto& rf : cell.runs) out.push_back(rf.figure.value);
  return out;
}

const Source& SourceOf(const Analysis& a, const Figure& f) {
  const Source* s = a.sources.Find(f.source_id);
  EXPECT_NE(s, nullptr) << f.source_id;
  static const Source kNone;
  return s ? *s : kNone;
}

// The run ids behind an aggregate: those of the "value" sources it cites, in order.
std::vector<std::string> RunsOf(const Analysis& a, const Source& aggregate) {
  std::vector<std::string> out;
  for (const std::string& ref : aggregate.input_refs) {
    const Source* s = a.sources.Find(ref);
    EXPECT_TRUE(s != nullptr && s->operation == "value" && s->run_ids.size() == 1) << ref;
    if (s != nullptr && !s->run_ids.empty()) out.push_back(s->run_ids[0]);
  }
  return out;
}

// The figures an aggregate is over: those of the sources it cites, in order.
std::vector<double> InputsOf(const Analysis& a, const Source& aggregate) {
  std::vector<double> out;
  for (const std::string& ref : aggregate.input_refs) {
    const Source* s = a.sources.Find(ref);
    if (s != nullptr && s->inputs.size() == 1) out.push_back(s->inputs[0]);
  }
  return out;
}

TEST(AnalysisTableTest, CollapseWithFourRunsListsEveryValueAndNoMedian) {
  Analysis a = Analyze(WarmRuns({52.9, 30.0, 28.2, 28.0}));
  ASSERT_EQ(a.cells.size(), 1u);
  const Cell& c = a.cells[0];
  EXPECT_EQ(c.metric, "tokens_per_second");
  EXPECT_EQ(c.unit, "tokens/s");
  EXPECT_EQ(c.key.matrix, "n_predict=128");
  EXPECT_THAT(Values(c), ElementsAre(52.9, 30.0, 28.2, 28.0));
  ASSERT_TRUE(c.min && c.max);
  EXPECT_EQ(c.min->value, 28.0);
  EXPECT_EQ(c.max->value, 52.9);
  EXPECT_FALSE(c.median.has_value());
  EXPECT_FALSE(c.q1.has_value());
  EXPECT_FALSE(c.distribution_only);
  EXPECT_EQ(SourceOf(a, c.runs[1].figure).operation, "value");
  EXPECT_THAT(SourceOf(a, c.runs[1].figure).run_ids, ElementsAre("w2"));
  EXPECT_EQ(SourceOf(a, *c.min).operation, "min");
  // An aggregate cites each run's value source rather than repeating its run id and figure.
  EXPECT_THAT(SourceOf(a, *c.min).input_refs,
              ElementsAre(c.runs[0].figure.source_id, c.runs[1].figure.source_id, c.runs[2].figure.source_id,
                          c.runs[3].figure.source_id));
  EXPECT_THAT(InputsOf(a, SourceOf(a, *c.min)), ElementsAre(52.9, 30.0, 28.2, 28.0));
  EXPECT_THAT(SourceOf(a, *c.min).inputs, ElementsAre());
  EXPECT_THAT(SourceOf(a, *c.min).run_ids, ElementsAre());
}

TEST(AnalysisTableTest, FiveAcceptedRunsGiveMedianWithItsInputs) {
  Analysis a = Analyze(WarmRuns({40, 10, 30, 20, 50}));
  ASSERT_EQ(a.cells.size(), 1u);
  const Cell& c = a.cells[0];
  ASSERT_TRUE(c.median.has_value());
  EXPECT_EQ(c.median->value, 30);
  EXPECT_EQ(c.median->unit, "tokens/s");
  const Source& s = SourceOf(a, *c.median);
  EXPECT_EQ(s.operation, "median");
  EXPECT_THAT(InputsOf(a, s), ElementsAre(40, 10, 30, 20, 50));
  EXPECT_THAT(RunsOf(a, s), ElementsAre("w1", "w2", "w3", "w4", "w5"));
  for (const std::string& ref : s.input_refs) EXPECT_THAT(a.sources.Find(ref)->provenance, ElementsAre("live"));
}

TEST(AnalysisTableTest, TwentyOneRunsGiveQuartilesAndDistributionOnly) {
  std::vector<double> values;
  for (int i = 21; i >= 1; --i) values.push_back(i);
  Analysis a = Analyze(WarmRuns(values));
  const Cell& c = a.cells.at(0);
  EXPECT_EQ(c.runs.size(), 21u);
  EXPECT_TRUE(c.distribution_only);
  ASSERT_TRUE(c.q1 && c.q3 && c.median);
  EXPECT_EQ(c.q1->value, 6);
  EXPECT_EQ(c.median->value, 11);
  EXPECT_EQ(c.q3->value, 16);
  EXPECT_EQ(SourceOf(a, *c.q1).operation, "q1");
  EXPECT_EQ(SourceOf(a, *c.q3).operation, "q3");
  // Every run keeps its own source row: 21 values + min, max, median, q1, q3, then the median's
  // interval (low, high), the CV and its percentage.
  EXPECT_EQ(a.sources.sources().size(), 30u);
}

TEST(AnalysisTableTest, TwentyRunsStayListed) {
  std::vector<double> values(20, 5.0);
  Analysis a = Analyze(WarmRuns(values));
  EXPECT_FALSE(a.cells.at(0).distribution_only);
  EXPECT_FALSE(a.cells.at(0).q1.has_value());
  EXPECT_TRUE(a.cells.at(0).median.has_value());
}

TEST(AnalysisTableTest, QuantileIsType7LinearInterpolation) {
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4}, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4}, 0.75), 3.25);
  EXPECT_DOUBLE_EQ(Quantile({7}, 0.25), 7);
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4, 5}, 1.0), 5);
}

TEST(AnalysisTableTest, CacheHitIsExcludedButListedAndTrapped) {
  auto runs = WarmRuns({30, 31, 32, 33, 34, 99});
  auto* flag = runs[5].add_flags();
  flag->set_code("CACHE_HIT");
  flag->set_reason("prompt cache reused 128 tokens");
  Analysis a = Analyze(runs);
  const Cell& c = a.cells.at(0);
  EXPECT_THAT(Values(c), ElementsAre(30, 31, 32, 33, 34));
  EXPECT_EQ(c.max->value, 34);
  EXPECT_EQ(c.median->value, 32);
  EXPECT_THAT(RunsOf(a, SourceOf(a, *c.median)), ElementsAre("w1", "w2", "w3", "w4", "w5"));
  ASSERT_EQ(c.excluded.size(), 1u);
  EXPECT_EQ(c.excluded[0].run_id, "w6");
  EXPECT_EQ(c.excluded[0].code, "CACHE_HIT");
  EXPECT_EQ(c.excluded[0].reason, "prompt cache reused 128 tokens");
  ASSERT_TRUE(c.excluded[0].figure.has_value());
  EXPECT_EQ(c.excluded[0].figure->value, 99);
  ASSERT_EQ(a.traps.size(), 1u);
  EXPECT_EQ(a.traps[0].code, "CACHE_HIT");
  EXPECT_EQ(a.traps[0].run_id, "w6");
  EXPECT_EQ(a.traps[0].call_index, 6u);
  EXPECT_EQ(a.traps[0].reason, "prompt cache reused 128 tokens");
}

TEST(AnalysisTableTest, ThroughputDropTrapKeepsReasonVerbatimAndRunStaysAccepted) {
  auto runs = WarmRuns({52.9, 30.0, 28.2});
  auto* flag = runs[1].add_flags();
  flag->set_code("THROUGHPUT_DROP");
  flag->set_reason("-43.3% from warm call 1 to 2");
  Analysis a = Analyze(runs);
  EXPECT_THAT(Values(a.cells.at(0)), ElementsAre(52.9, 30.0, 28.2));
  ASSERT_EQ(a.traps.size(), 1u);
  EXPECT_EQ(a.traps[0].code, "THROUGHPUT_DROP");
  EXPECT_EQ(a.traps[0].reason, "-43.3% from warm call 1 to 2");
  EXPECT_EQ(a.traps[0].call_index, 2u);
  EXPECT_EQ(a.traps[0].key.phase, v1::PHASE_WARM);
  EXPECT_EQ(a.traps[0].key.mode, "gpu");
}

TEST(AnalysisTableTest, ColdAndWarmAreNeverMixed) {
  auto runs = WarmRuns({30, 31, 32, 33, 34});
  runs.push_back(MakeRun("c1", v1::PHASE_COLD, 1, 5, 999));
  Analysis a = Analyze(runs);
  ASSERT_EQ(a.cells.size(), 2u);
  EXPECT_EQ(a.cells[0].key.phase, v1::PHASE_COLD);
  EXPECT_THAT(Values(a.cells[0]), ElementsAre(5));
  EXPECT_FALSE(a.cells[0].median.has_value());
  EXPECT_EQ(a.cells[1].key.phase, v1::PHASE_WARM);
  EXPECT_EQ(a.cells[1].min->value, 30);
  EXPECT_THAT(RunsOf(a, SourceOf(a, *a.cells[1].median)), ElementsAre("w1", "w2", "w3", "w4", "w5"));
}

TEST(AnalysisTableTest, FailedRunIsExcludedWithItsMessage) {
  auto runs = WarmRuns({30, 31});
  v1::RunRecord failed = MakeRun("f1", v1::PHASE_WARM, 3, 0, 2000);
  failed.clear_metrics();
  failed.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
  failed.mutable_status()->set_message("HTTP 500: out of memory");
  runs.push_back(failed);
  Analysis a = Analyze(runs);
  const Cell& c = a.cells.at(0);
  EXPECT_THAT(Values(c), ElementsAre(30, 31));
  ASSERT_EQ(c.excluded.size(), 1u);
  EXPECT_EQ(c.excluded[0].code, "FAILED");
  EXPECT_EQ(c.excluded[0].reason, "HTTP 500: out of memory");
  EXPECT_FALSE(c.excluded[0].figure.has_value());
  ASSERT_EQ(a.traps.size(), 1u);
  EXPECT_EQ(a.traps[0].code, "FAILED");
  EXPECT_EQ(a.traps[0].reason, "HTTP 500: out of memory");
}

TEST(AnalysisTableTest, WallSecondsWhenNoThroughputMetric) {
  v1::RunRecord r = MakeRun("r1", v1::PHASE_WARM, 1, 0, 1);
  r.clear_metrics();
  r.mutable_wall_duration()->set_seconds(2);
  r.mutable_wall_duration()->set_nanos(500000000);
  Analysis a = Analyze({r});
  EXPECT_EQ(a.cells.at(0).metric, "wall_seconds");
  EXPECT_EQ(a.cells.at(0).unit, "s");
  EXPECT_THAT(Values(a.cells.at(0)), ElementsAre(2.5));
}

TEST(AnalysisTableTest, MemoryKindsAreKeptApart) {
  auto runs = WarmRuns({30, 31});
  auto add = [](v1::RunRecord& r, v1::MemoryKind kind, const std::string& scope, uint64_t bytes,
                const std::string& source) {
    auto* m = r.add_memory();
    m->set_kind(kind);
    m->set_scope(scope);
    m->set_bytes(bytes);
    m->set_source(source);
  };
  add(runs[0], v1::MEMORY_KIND_PROCESS_PEAK_RSS, "llama-server", 900, "getrusage");
  add(runs[1], v1::MEMORY_KIND_PROCESS_PEAK_RSS, "llama-server", 1000, "getrusage");
  add(runs[0], v1::MEMORY_KIND_DEVICE_BUFFER, "CUDA0", 5000, "llama-server log line 42");
  Analysis a = Analyze(runs);
  const Cell& c = a.cells.at(0);
  ASSERT_EQ(c.memory.size(), 2u);
  EXPECT_EQ(c.memory[0].label, "MEMORY_KIND_PROCESS_PEAK_RSS");
  EXPECT_EQ(c.memory[0].scope, "llama-server");
  EXPECT_EQ(c.memory[0].bytes.value, 1000);
  EXPECT_EQ(c.memory[0].bytes.unit, "bytes");
  EXPECT_EQ(c.memory[0].source, "getrusage");
  EXPECT_EQ(SourceOf(a, c.memory[0].bytes).operation, "max");
  EXPECT_THAT(SourceOf(a, c.memory[0].bytes).run_ids, ElementsAre("w1", "w2"));
  EXPECT_EQ(c.memory[1].label, "MEMORY_KIND_DEVICE_BUFFER");
  EXPECT_EQ(c.memory[1].scope, "CUDA0");
  EXPECT_EQ(c.memory[1].bytes.value, 5000);
  EXPECT_EQ(c.memory[1].source, "llama-server log line 42");
  EXPECT_EQ(SourceOf(a, c.memory[1].bytes).operation, "value");
}

TEST(AnalysisTableTest, ImportedRecordCarriesFileLineAndMachine) {
  v1::RunRecord r = MakeRun("imp-1", v1::PHASE_WARM, 1, 12.5, 5);
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_FILE);
  r.mutable_provenance()->set_file("bench.csv");
  r.mutable_provenance()->set_line(3);
  (*r.mutable_params())["machine"] = "m2-pro";
  r.set_simulated(true);
  Analysis a = Analyze({r});
  EXPECT_EQ(a.cells.at(0).key.machine, "m2-pro");
  EXPECT_TRUE(a.simulated);
  EXPECT_TRUE(a.cells.at(0).simulated);
  EXPECT_THAT(SourceOf(a, a.cells[0].runs.at(0).figure).provenance, ElementsAre("bench.csv:3"));
  EXPECT_NE(SourcesCsv(a.sources).find("S1,value,imp-1,bench.csv:3,12.5,,\r\n"), std::string::npos);
}

TEST(AnalysisTableTest, SourcesCsvExactBytes) {
  SourceTable t;
  t.Add("value", {"r1"}, {"live"}, {52.9});
  t.Add("min", {"r1", "r2"}, {"live", "a,b.csv:7"}, {52.9, 0.1});
  t.Add("median", {"r\"3"}, {"unknown"}, {1e21});
  EXPECT_EQ(t.AddTarget(10, "targets.yaml:4"), "S4");
  Figure f = t.AddFormula("x1 * 3600 / x2", {52.9, 10}, {"S1", "S4"}, 52.9 * 3600 / 10, "tokens/h");
  EXPECT_EQ(f.source_id, "S5");
  EXPECT_EQ(t.AddCount({"r1", "r2"}, {"live", "live"}), "S6");
  EXPECT_EQ(t.AddAggregate("max", {"S1", "S3"}), "S7");
  EXPECT_EQ(SourcesCsv(t),
            "source_id,operation,run_ids,provenance,inputs,formula,input_refs\r\n"
            "S1,value,r1,live,52.9,,\r\n"
            "S2,min,r1;r2,\"live;a,b.csv:7\",52.9;0.1,,\r\n"
            "S3,median,\"r\"\"3\",unknown,1e+21,,\r\n"
            "S4,target,,,10,,targets.yaml:4\r\n"
            "S5,formula,,,52.9;10,x1 * 3600 / x2,S1;S4\r\n"
            "S6,count,r1;r2,live;live,,,\r\n"
            "S7,max,,,,,S1;S3\r\n");
}

TEST(AnalysisTableTest, ResultsDoNotDependOnInputOrder) {
  auto runs = WarmRuns({52.9, 30.0, 28.2, 27.0, 26.0, 25.0});
  runs.push_back(MakeRun("c1", v1::PHASE_COLD, 1, 5, 999));
  v1::RunRecord other = MakeRun("b1", v1::PHASE_WARM, 1, 7, 1000);  // same start as w1: call_index/run_id decide
  other.set_agent_id("agent-b");
  runs.push_back(other);
  auto* flag = runs[2].add_flags();
  flag->set_code("CONTENDED");
  flag->set_reason("load 3.2");
  Analysis base = Analyze(runs);
  std::mt19937 rng(42);
  for (int i = 0; i < 5; ++i) {
    std::shuffle(runs.begin(), runs.end(), rng);
    Analysis a = Analyze(runs);
    EXPECT_EQ(SourcesCsv(a.sources), SourcesCsv(base.sources));
    ASSERT_EQ(a.cells.size(), base.cells.size());
    for (size_t k = 0; k < a.cells.size(); ++k) {
      EXPECT_TRUE(a.cells[k].key == base.cells[k].key);
      EXPECT_THAT(Values(a.cells[k]), ElementsAreArray(Values(base.cells[k])));
    }
    ASSERT_EQ(a.traps.size(), 1u);
    EXPECT_EQ(a.traps[0].run_id, "w3");
  }
}

// Enough runs for the cells to be built on several threads (when the machine has more than one
// core): every figure still cites the source of its own value, the ids run S1, S2, ... with no
// gap, and each aggregate cites its own cell's runs, in run order, as when built one by one.
TEST(AnalysisTableTest, CellsBuiltOnThreadsCiteTheirOwnSources) {
  std::vector<v1::RunRecord> records;
  for (int i = 0; i < 60000; ++i) {
    v1::RunRecord r = MakeRun("r" + std::to_string(i), i % 7 == 0 ? v1::PHASE_COLD : v1::PHASE_WARM,
                              static_cast<uint32_t>(i % 7 + 1), 10 + (i * 37 % 101) / 10.0, 1000 + i);
    r.set_agent_id("agent-" + std::to_string(i % 5));
    if (i % 11 == 0) {
      auto* flag = r.add_flags();
      flag->set_code("CACHE_HIT");
    }
    records.push_back(std::move(r));
  }
  Analysis a = Analyze(records);
  ASSERT_EQ(a.cells.size(), 10u);
  const auto& sources = a.sources.sources();
  for (size_t i = 0; i < sources.size(); ++i) ASSERT_EQ(sources[i].id, "S" + std::to_string(i + 1));
  for (const Cell& c : a.cells) {
    std::vector<std::string> refs;
    for (const RunFigure& rf : c.runs) {
      const Source& s = SourceOf(a, rf.figure);
      ASSERT_EQ(s.operation, "value");
      ASSERT_EQ(s.run_ids, std::vector<std::string>{rf.run_id});
      ASSERT_EQ(s.inputs, std::vector<double>{rf.figure.value});
      refs.push_back(rf.figure.source_id);
    }
    ASSERT_TRUE(c.min && c.max && c.median && c.q1 && c.q3);
    for (const Figure* f : {&*c.min, &*c.max, &*c.median, &*c.q1, &*c.q3}) EXPECT_EQ(SourceOf(a, *f).input_refs, refs);
    EXPECT_EQ(SourceOf(a, *c.min).operation, "min");
    EXPECT_EQ(SourceOf(a, *c.q3).operation, "q3");
    // The spread's sources are shifted with the cell's: its CV cites the cell's runs, its percentage
    // that CV; about 5,000 runs a cell is past stats::kMaxFiguresForInterval, so no interval.
    ASSERT_TRUE(c.spread && c.spread->cv && c.spread->cv_percent);
    EXPECT_FALSE(c.spread->ci_low.has_value());
    EXPECT_EQ(SourceOf(a, *c.spread->cv).operation, "cv");
    EXPECT_EQ(SourceOf(a, *c.spread->cv).input_refs, refs);
    EXPECT_EQ(SourceOf(a, *c.spread->cv_percent).input_refs, std::vector<std::string>{c.spread->cv->source_id});
    ASSERT_TRUE(c.excluded_count.has_value());
    EXPECT_EQ(SourceOf(a, *c.excluded_count).run_ids.size(), c.excluded.size());
    for (const ExcludedRun& e : c.excluded) EXPECT_EQ(SourceOf(a, *e.figure).run_ids, std::vector<std::string>{e.run_id});
  }
}

}  // namespace
}  // namespace benchfleet::synthesis

namespace benchfleet::synthesis {
namespace {

v1::Metric* AddFigure(v1::RunRecord* r, const std::string& name, double value, const std::string& unit,
                      uint32_t headline, v1::Better better, const std::string& label) {
  v1::Metric* m = r->add_metrics();
  m->set_name(name);
  m->set_value(value);
  m->set_unit(unit);
  m->set_headline(headline);
  m->set_better(better);
  m->set_label(label);
  return m;
}

TEST(AnalysisTableTest, TheMainFigureIsTheDeclaredOneWhateverItsName) {
  v1::RunRecord r = MakeRun("r1", v1::PHASE_WARM, 1, 0, 1);
  r.clear_metrics();
  AddFigure(&r, "some_count", 7, "requests", 0, v1::BETTER_UNSPECIFIED, "");
  AddFigure(&r, "output_tokens_per_second", 412.5, "tokens/s", 1, v1::BETTER_HIGHER, "output tokens/s");
  Analysis a = Analyze({r});
  const Cell& c = a.cells.at(0);
  EXPECT_EQ(c.metric, "output_tokens_per_second");
  EXPECT_EQ(c.label, "output tokens/s");
  EXPECT_EQ(c.unit, "tokens/s");
  EXPECT_EQ(c.better, v1::BETTER_HIGHER);
  EXPECT_THAT(Values(c), ElementsAre(412.5));
}

TEST(AnalysisTableTest, FurtherHeadlineFiguresGiveAMedianFromFiveRunsElseTheirRange) {
  std::vector<v1::RunRecord> runs;
  for (int i = 1; i <= 5; ++i) {
    v1::RunRecord r = MakeRun("w" + std::to_string(i), v1::PHASE_WARM, static_cast<uint32_t>(i), 50, 1000 + i);
    AddFigure(&r, "latency_mean_seconds", 0.1 * i, "s", 2, v1::BETTER_LOWER, "mean latency");
    runs.push_back(r);
  }
  for (int i = 1; i <= 2; ++i) {
    v1::RunRecord r = MakeRun("c" + std::to_string(i), v1::PHASE_COLD, static_cast<uint32_t>(i), 40, 900 + i);
    AddFigure(&r, "latency_mean_seconds", 0.5 * i, "s", 2, v1::BETTER_LOWER, "mean latency");
    runs.push_back(r);
  }
  Analysis a = Analyze(runs);
  ASSERT_EQ(a.cells.size(), 2u);
  const Cell& cold = a.cells[0];
  const Cell& warm = a.cells[1];
  ASSERT_EQ(cold.key.phase, v1::PHASE_COLD);
  ASSERT_EQ(warm.further.size(), 1u);
  const FurtherFigure& w = warm.further[0];
  EXPECT_EQ(w.label, "mean latency");
  EXPECT_EQ(w.unit, "s");
  ASSERT_TRUE(w.median.has_value());
  EXPECT_DOUBLE_EQ(w.median->value, 0.30000000000000004);
  const Source& median = SourceOf(a, *w.median);
  EXPECT_EQ(median.operation, "median");
  EXPECT_THAT(median.run_ids, ElementsAre("w1", "w2", "w3", "w4", "w5"));
  EXPECT_FALSE(w.min.has_value());
  ASSERT_EQ(cold.further.size(), 1u);
  const FurtherFigure& c = cold.further[0];
  EXPECT_FALSE(c.median.has_value());
  ASSERT_TRUE(c.min && c.max);
  EXPECT_DOUBLE_EQ(c.min->value, 0.5);
  EXPECT_DOUBLE_EQ(c.max->value, 1.0);
  EXPECT_THAT(SourceOf(a, *c.max).inputs, ElementsAre(0.5, 1.0));
}

TEST(AnalysisTableTest, MatrixValuesThatAreNumbersSortAsNumbers) {
  std::vector<v1::RunRecord> runs;
  int start = 0;
  for (const char* batch : {"16", "8", "4"}) {
    v1::RunRecord r = MakeRun(std::string("b") + batch, v1::PHASE_WARM, 1, 10, ++start);
    r.mutable_matrix()->clear();
    (*r.mutable_matrix())["batch_size"] = batch;
    runs.push_back(r);
  }
  Analysis a = Analyze(runs);
  ASSERT_EQ(a.cells.size(), 3u);
  EXPECT_EQ(a.cells[0].key.matrix, "batch_size=4");
  EXPECT_EQ(a.cells[1].key.matrix, "batch_size=8");
  EXPECT_EQ(a.cells[2].key.matrix, "batch_size=16");
}

}  // namespace
}  // namespace benchfleet::synthesis
