// Conditions of every series (SummarizeSeries, RenderConditionsSection), memory under the synthesis
// table, the wall-seconds figure of every run, and the duration and memory charts.
#include <algorithm>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "synthesis/analysis/guide_model.h"
#include "synthesis/analysis/sources.h"
#include "synthesis/analysis/table.h"
#include "synthesis/render/render.h"
#include "synthesis/render/run_bins.h"
#include "synthesis/render/sections.h"

namespace benchfleet::synthesis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

constexpr int64_t kMarch1 = 1772359200;  // 2026-03-01T10:00:00Z

v1::RunRecord MakeRun(const std::string& id, const std::string& agent, v1::Phase phase, uint32_t call, int64_t start) {
  v1::RunRecord r;
  r.set_run_id(id);
  r.set_series_id("series-1");
  r.set_agent_id(agent);
  r.set_task("chat-7b");
  r.set_backend("llama-server");
  r.set_mode("gpu");
  r.set_phase(phase);
  r.set_call_index(call);
  r.mutable_start_time()->set_seconds(start);
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
  (*r.mutable_matrix())["n_predict"] = "128";
  return r;
}

void AddTokens(v1::RunRecord& r, double value) {
  auto* m = r.add_metrics();
  m->set_name("tokens_per_second");
  m->set_value(value);
  m->set_unit("tokens/s");
  m->set_headline(1);  // as the runner stamps its backend\'s declaration
  m->set_better(v1::BETTER_HIGHER);
}

void SetWall(v1::RunRecord& r, int64_t seconds, int32_t nanos) {
  r.mutable_wall_duration()->set_seconds(seconds);
  r.mutable_wall_duration()->set_nanos(nanos);
}

void AddMemory(v1::RunRecord& r, v1::MemoryKind kind, const std::string& scope, uint64_t bytes,
               const std::string& source) {
  auto* m = r.add_memory();
  m->set_kind(kind);
  m->set_scope(scope);
  m->set_bytes(bytes);
  m->set_source(source);
}

// ---------------------------------------------------------------------------------------------
// SummarizeSeries
// ---------------------------------------------------------------------------------------------

// Three live runs under fingerprint "fp-a" on agent "gpu-box" (the third FAILED, its seed differs,
// a second matrix combination), two imported runs of "bench.csv" on machine "m2-pro".
std::vector<v1::RunRecord> SeriesRecords() {
  std::vector<v1::RunRecord> out;
  for (int i = 0; i < 3; ++i) {
    v1::RunRecord r = MakeRun("a" + std::to_string(i + 1), "gpu-box", v1::PHASE_WARM, i + 1, kMarch1 + 60 * i);
    r.set_conditions_fingerprint("fp-a");
    (*r.mutable_params())["model_path"] = "/models/7b.gguf";
    (*r.mutable_params())["seed"] = i == 2 ? "43" : "42";
    AddTokens(r, 50.0 + i);
    out.push_back(r);
  }
  out[1].mutable_start_time()->set_nanos(500000000);
  out[2].mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
  out[2].mutable_status()->set_message("HTTP 500");
  (*out[2].mutable_matrix())["n_predict"] = "256";
  (*out[2].mutable_matrix())["batch"] = "8";
  out[2].set_series_id("series-2");
  for (int i = 0; i < 2; ++i) {
    v1::RunRecord r = MakeRun("f" + std::to_string(i + 1), "", v1::PHASE_WARM, i + 1, 0);
    r.clear_start_time();
    r.clear_series_id();
    r.clear_matrix();
    r.set_backend("llama-bench");
    r.mutable_provenance()->set_kind(v1::Provenance::KIND_FILE);
    r.mutable_provenance()->set_file("bench.csv");
    r.mutable_provenance()->set_line(2 + i);
    (*r.mutable_params())["machine"] = "m2-pro";
    (*r.mutable_params())["n_gpu_layers"] = "99";
    r.set_simulated(true);
    AddTokens(r, 20.0 + i);
    out.push_back(r);
  }
  return out;
}

v1::MachineConditions ConditionsA() {
  v1::MachineConditions c;
  c.set_hostname("gpu-box");
  c.set_os_name("Debian GNU/Linux");
  c.set_os_version("12");
  c.set_kernel("6.1.0-18-amd64");
  c.set_architecture("x86_64");
  c.set_cpu_model("AMD EPYC 7763");
  c.set_logical_cores(32);
  c.set_memory_bytes(512ull << 30);
  auto* a = c.add_accelerators();
  a->set_name("NVIDIA A100-SXM4-80GB");
  a->set_vendor("nvidia");
  a->set_driver("535.104.05");
  a->set_memory_bytes(80ull << 30);
  (*c.mutable_backend_versions())["llama-server"] = "b4123 (abc123)";
  c.set_agent_version("0.3.0");
  c.set_fingerprint("fp-a");
  return c;
}

GuideContext Context() {
  GuideContext context;
  context.conditions["fp-a"] = ConditionsA();
  context.class_of_machine["gpu-box"] = "a100";
  return context;
}

const Source& SourceOf(const Analysis& a, const Figure& f) {
  const Source* s = a.sources.Find(f.source_id);
  EXPECT_NE(s, nullptr) << f.source_id;
  static const Source kNone;
  return s != nullptr ? *s : kNone;
}

TEST(SummarizeSeriesTest, LiveByFingerprintImportedByFile) {
  Analysis a;
  std::vector<SeriesConditions> series = SummarizeSeries(SeriesRecords(), Context(), DefaultMachineOf, &a);
  ASSERT_EQ(series.size(), 2u);

  const SeriesConditions& live = series[0];
  EXPECT_EQ(live.key, "fp-a");
  EXPECT_EQ(live.fingerprint, "fp-a");
  EXPECT_EQ(live.machine, "gpu-box");
  EXPECT_EQ(live.machine_class, "a100");
  ASSERT_TRUE(live.conditions.has_value());
  EXPECT_EQ(live.conditions->cpu_model(), "AMD EPYC 7763");
  EXPECT_THAT(live.series_ids, ElementsAre("series-1", "series-2"));
  EXPECT_THAT(live.tasks, ElementsAre("chat-7b"));
  EXPECT_THAT(live.backends, ElementsAre("llama-server"));
  EXPECT_THAT(live.settings, ElementsAre(Pair("model_path", "/models/7b.gguf")));  // seed differs
  EXPECT_THAT(live.matrix_values, ElementsAre("batch=8;n_predict=256", "n_predict=128"));
  EXPECT_EQ(live.first_start, "2026-03-01T10:00:00Z");
  EXPECT_EQ(live.last_start, "2026-03-01T10:02:00Z");
  EXPECT_FALSE(live.simulated);
  EXPECT_EQ(live.runs.value, 3);
  EXPECT_EQ(live.runs.source_id, "S1");
  EXPECT_EQ(SourceOf(a, live.runs).operation, "count");
  EXPECT_THAT(SourceOf(a, live.runs).run_ids, ElementsAre("a1", "a2", "a3"));
  EXPECT_THAT(SourceOf(a, live.runs).provenance, ElementsAre("live", "live", "live"));
  EXPECT_EQ(live.ok_runs.value, 2);
  EXPECT_EQ(live.ok_runs.source_id, "S2");
  EXPECT_THAT(SourceOf(a, live.ok_runs).run_ids, ElementsAre("a1", "a2"));

  const SeriesConditions& file = series[1];
  EXPECT_EQ(file.key, "bench.csv");
  EXPECT_EQ(file.fingerprint, "");
  EXPECT_EQ(file.machine, "m2-pro");
  EXPECT_EQ(file.machine_class, "m2-pro");
  EXPECT_FALSE(file.conditions.has_value());
  EXPECT_TRUE(file.series_ids.empty());
  EXPECT_THAT(file.backends, ElementsAre("llama-bench"));
  EXPECT_THAT(file.settings, ElementsAre(Pair("machine", "m2-pro"), Pair("n_gpu_layers", "99")));
  EXPECT_TRUE(file.matrix_values.empty());
  EXPECT_EQ(file.first_start, "");
  EXPECT_EQ(file.last_start, "");
  EXPECT_TRUE(file.simulated);
  EXPECT_EQ(file.runs.value, 2);
  EXPECT_EQ(file.runs.source_id, "S3");
  EXPECT_THAT(SourceOf(a, file.runs).provenance, ElementsAre("bench.csv:2", "bench.csv:3"));
  EXPECT_EQ(file.ok_runs.value, 2);
  EXPECT_EQ(file.ok_runs.source_id, "S4");
  EXPECT_EQ(a.sources.sources().size(), 4u);
}

TEST(SummarizeSeriesTest, FractionalStartAndOrderIndependence) {
  std::vector<v1::RunRecord> records = SeriesRecords();
  records[2].mutable_start_time()->set_seconds(kMarch1 + 30);  // a3 now between a1 and a2
  records[2].mutable_start_time()->set_nanos(250000000);
  records[1].mutable_start_time()->set_seconds(kMarch1 + 90);
  Analysis a;
  std::vector<SeriesConditions> first = SummarizeSeries(records, Context(), DefaultMachineOf, &a);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].first_start, "2026-03-01T10:00:00Z");
  EXPECT_EQ(first[0].last_start, "2026-03-01T10:01:30.5Z");
  EXPECT_THAT(SourceOf(a, first[0].runs).run_ids, ElementsAre("a1", "a3", "a2"));
  std::mt19937 rng(3);
  for (int i = 0; i < 4; ++i) {
    std::shuffle(records.begin(), records.end(), rng);
    Analysis b;
    std::vector<SeriesConditions> again = SummarizeSeries(records, Context(), DefaultMachineOf, &b);
    EXPECT_EQ(SourcesCsv(a.sources), SourcesCsv(b.sources));
    ASSERT_EQ(again.size(), 2u);
    EXPECT_EQ(again[0].settings, first[0].settings);
    EXPECT_EQ(again[1].key, "bench.csv");
  }
}

// ---------------------------------------------------------------------------------------------
// Conditions section
// ---------------------------------------------------------------------------------------------

GuideModel ModelOf(const std::vector<v1::RunRecord>& records, Analysis* a) {
  GuideModel model;
  model.series = SummarizeSeries(records, Context(), DefaultMachineOf, a);
  return model;
}

// The Markdown with every code span and every "figure [Sn]" removed: what the guide's number test
// would still have to explain.
std::string OutsideCodeAndRefs(const std::string& md) {
  std::string no_code = std::regex_replace(md, std::regex("`[^`]*`"), "");
  return std::regex_replace(no_code, std::regex("-?[0-9]+([.,][0-9]+)? \\[S[0-9]+\\]"), "");
}

TEST(RenderConditionsSectionTest, English) {
  Analysis a;
  GuideModel model = ModelOf(SeriesRecords(), &a);
  Document md_doc;
  RenderConditionsSection(model, Lang::kEn, md_doc);
  std::string md = WriteMarkdown(md_doc);
  EXPECT_EQ(md.rfind("<!-- collapsed -->\n## Appendix: machine conditions\n\nOne entry per series: ", 0), 0u) << md;
  EXPECT_THAT(md, HasSubstr("### `gpu-box` — `chat-7b (llama-server)`\n\n"
                            "- Machine: `gpu-box`, class `a100`\n"
                            "- Operating system: `Debian GNU/Linux 12`, kernel `6.1.0-18-amd64`, architecture `x86_64`\n"
                            "- CPU: `AMD EPYC 7763`, logical cores `32`\n"
                            "- Host memory: `512 GiB`\n"
                            "- Accelerator: `NVIDIA A100-SXM4-80GB` (vendor `nvidia`, driver `535.104.05`, device "
                            "memory `80 GiB`)\n"
                            "- Backend versions: `llama-server` `b4123 (abc123)`\n"
                            "- Agent version: `0.3.0`\n"
                            "- Series ids: `series-1`, `series-2`\n"
                            "- Tasks: `chat-7b`\n"
                            "- Backends: `llama-server`\n"
                            "- Settings shared by every run: `model_path=/models/7b.gguf`\n"
                            "- Matrix combinations: `batch=8;n_predict=256`, `n_predict=128`\n"
                            "- First and last start (UTC): `2026-03-01T10:00:00Z` – `2026-03-01T10:02:00Z`\n"
                            "- Runs: 3 [S1]; OK runs: 2 [S2]\n"
                            "- Conditions fingerprint: `fp-a`\n\n"))
      << md;
  EXPECT_THAT(md, HasSubstr("### `m2-pro` — `chat-7b (llama-bench)`\n\n"
                            "**SIMULATED**\n\n"
                            "- Machine: `m2-pro`, class `m2-pro`\n"
                            "- Machine conditions unknown (no conditions.json for this series).\n"
                            "- Imported file: `bench.csv`\n"
                            "- Series ids: —\n"
                            "- Tasks: `chat-7b`\n"
                            "- Backends: `llama-bench`\n"
                            "- Settings shared by every run: `machine=m2-pro`, `n_gpu_layers=99`\n"
                            "- Matrix combinations: —\n"
                            "- First and last start (UTC): —\n"
                            "- Runs: 2 [S3]; OK runs: 2 [S4]\n"))
      << md;
  EXPECT_THAT(md, Not(HasSubstr("fingerprint: ``")));
  EXPECT_THAT(OutsideCodeAndRefs(md), Not(::testing::ContainsRegex("[0-9]"))) << OutsideCodeAndRefs(md);
}

TEST(RenderConditionsSectionTest, French) {
  Analysis a;
  GuideModel model = ModelOf(SeriesRecords(), &a);
  model.series[0].conditions->set_memory_bytes((31ull << 30) + (1ull << 29));  // 31.5 GiB
  Document md_doc;
  RenderConditionsSection(model, Lang::kFr, md_doc);
  std::string md = WriteMarkdown(md_doc);
  EXPECT_EQ(md.rfind("<!-- collapsed -->\n## Annexe : conditions des machines\n\nUne entrée par série : ", 0), 0u) << md;
  EXPECT_THAT(md, HasSubstr("- Machine : `gpu-box`, classe `a100`\n"
                            "- Système d'exploitation : `Debian GNU/Linux 12`, noyau `6.1.0-18-amd64`, architecture "
                            "`x86_64`\n"
                            "- Processeur : `AMD EPYC 7763`, cœurs logiques `32`\n"
                            "- Mémoire de l'hôte : `31,5 Gio`\n"
                            "- Accélérateur : `NVIDIA A100-SXM4-80GB` (fabricant `nvidia`, pilote `535.104.05`, "
                            "mémoire de l'accélérateur `80 Gio`)\n"
                            "- Versions des moteurs : `llama-server` `b4123 (abc123)`\n"
                            "- Version de l'agent : `0.3.0`\n"))
      << md;
  EXPECT_THAT(md, HasSubstr("- Premier et dernier démarrage (UTC) : `2026-03-01T10:00:00Z` – `2026-03-01T10:02:00Z`\n"
                            "- Exécutions : 3 [S1] ; Exécutions réussies : 2 [S2]\n"
                            "- Empreinte des conditions : `fp-a`\n"));
  EXPECT_THAT(md, HasSubstr("**SIMULÉ**\n\n- Machine : `m2-pro`, classe `m2-pro`\n"
                            "- Conditions de la machine inconnues (pas de conditions.json pour cette série).\n"
                            "- Fichier importé : `bench.csv`\n"));
  EXPECT_THAT(OutsideCodeAndRefs(md), Not(::testing::ContainsRegex("[0-9]"))) << OutsideCodeAndRefs(md);
}

TEST(RenderConditionsSectionTest, NoSeries) {
  Document md_doc;
  RenderConditionsSection(GuideModel{}, Lang::kEn, md_doc);
  std::string md = WriteMarkdown(md_doc);
  EXPECT_THAT(md, HasSubstr("\n\nNo series.\n"));
}

// ---------------------------------------------------------------------------------------------
// Wall seconds of every run
// ---------------------------------------------------------------------------------------------

TEST(WallSecondsTest, OwnValueSourceRightAfterTheRunsFigure) {
  v1::RunRecord r1 = MakeRun("w1", "gpu-box", v1::PHASE_WARM, 1, kMarch1);
  AddTokens(r1, 52.9);
  SetWall(r1, 2, 500000000);
  v1::RunRecord r2 = MakeRun("w2", "gpu-box", v1::PHASE_WARM, 2, kMarch1 + 10);
  AddTokens(r2, 30.0);  // no wall_duration
  Analysis a = Analyze({r2, r1});
  const Cell& c = a.cells.at(0);
  ASSERT_EQ(c.runs.size(), 2u);
  EXPECT_EQ(c.runs[0].figure.source_id, "S1");
  ASSERT_TRUE(c.runs[0].wall_seconds.has_value());
  EXPECT_EQ(c.runs[0].wall_seconds->value, 2.5);
  EXPECT_EQ(c.runs[0].wall_seconds->unit, "s");
  EXPECT_EQ(c.runs[0].wall_seconds->source_id, "S2");
  EXPECT_EQ(SourceOf(a, *c.runs[0].wall_seconds).operation, "value");
  EXPECT_THAT(SourceOf(a, *c.runs[0].wall_seconds).run_ids, ElementsAre("w1"));
  EXPECT_THAT(SourceOf(a, *c.runs[0].wall_seconds).inputs, ElementsAre(2.5));
  EXPECT_EQ(c.runs[1].figure.source_id, "S3");
  EXPECT_FALSE(c.runs[1].wall_seconds.has_value());
  EXPECT_EQ(c.min->source_id, "S4");  // min and max still over the cell's own figure
  EXPECT_THAT(SourceOf(a, *c.min).input_refs, ElementsAre("S1", "S3"));
}

TEST(WallSecondsTest, SameFigureWhenTheMetricIsWallSeconds) {
  v1::RunRecord r = MakeRun("w1", "gpu-box", v1::PHASE_COLD, 1, kMarch1);
  SetWall(r, 7, 250000000);
  Analysis a = Analyze({r});
  const RunFigure& rf = a.cells.at(0).runs.at(0);
  ASSERT_TRUE(rf.wall_seconds.has_value());
  EXPECT_EQ(rf.wall_seconds->source_id, rf.figure.source_id);
  EXPECT_EQ(rf.wall_seconds->value, 7.25);
  EXPECT_EQ(a.sources.sources().size(), 3u);  // value, min, max: no second value source
}

// ---------------------------------------------------------------------------------------------
// Duration chart
// ---------------------------------------------------------------------------------------------

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + needle.size())) ++n;
  return n;
}

// Warm: 3 accepted runs and a cache hit; cold: 2 runs; validation: 1 run; all with wall time.
std::vector<v1::RunRecord> DurationRecords() {
  std::vector<v1::RunRecord> out;
  const double warm[] = {2.5, 2.25, 2.75};
  for (int i = 0; i < 3; ++i) {
    v1::RunRecord r = MakeRun("w" + std::to_string(i + 1), "gpu-box", v1::PHASE_WARM, i + 1, kMarch1 + i);
    AddTokens(r, 50);
    SetWall(r, 2, static_cast<int32_t>((warm[i] - 2) * 1e9));
    out.push_back(r);
  }
  v1::RunRecord hit = MakeRun("w4-cached", "gpu-box", v1::PHASE_WARM, 4, kMarch1 + 3);
  AddTokens(hit, 900);
  SetWall(hit, 0, 10000000);
  auto* flag = hit.add_flags();
  flag->set_code("CACHE_HIT");
  flag->set_reason("served from the cache");
  out.push_back(hit);
  for (int i = 0; i < 2; ++i) {
    v1::RunRecord r = MakeRun("c" + std::to_string(i + 1), "gpu-box", v1::PHASE_COLD, i + 1, kMarch1 - 100 + i);
    AddTokens(r, 40);
    SetWall(r, 9, 0);
    out.push_back(r);
  }
  v1::RunRecord v = MakeRun("v1", "gpu-box", v1::PHASE_VALIDATION, 1, kMarch1 - 200);
  AddTokens(v, 45);
  SetWall(v, 11, 500000000);
  out.push_back(v);
  out[0].set_simulated(true);
  return out;
}

TEST(DurationChartTest, OnePointPerAcceptedRunWithItsMarker) {
  Analysis a = Analyze(DurationRecords());
  EXPECT_EQ(DurationChartFileName("chat-7b", Lang::kFr), "chart-chat-7b-duration.fr.svg");
  for (Lang lang : {Lang::kFr, Lang::kEn}) {
    std::string svg = RenderDurationChart(a, "chat-7b", lang);
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 800.0 360.0\"", 0), 0u) << svg;
    EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
    EXPECT_THAT(svg, HasSubstr(lang == Lang::kFr ? "<title id=\"duration-title\">Durée de chaque exécution — chat-7b "
                                                   "(SIMULÉ)</title>"
                                                 : "<title id=\"duration-title\">Duration of each run — chat-7b "
                                                   "(SIMULATED)</title>"));
    EXPECT_THAT(svg, HasSubstr("<desc id=\"duration-desc\">"));
    EXPECT_EQ(Count(svg, "<circle class=\"run\""), 3);   // warm
    EXPECT_EQ(Count(svg, "<rect class=\"run\""), 2);     // cold
    EXPECT_EQ(Count(svg, "<polygon class=\"run\""), 1);  // validation
    EXPECT_THAT(svg, Not(HasSubstr("w4-cached")));
    const Cell* warm = nullptr;
    for (const Cell& c : a.cells) {
      if (c.key.phase == v1::PHASE_WARM) warm = &c;
    }
    ASSERT_NE(warm, nullptr);
    EXPECT_THAT(svg, HasSubstr((lang == Lang::kFr ? "<title>exécution w1: 2,50 s [" : "<title>run w1: 2.50 s [") +
                               warm->runs[0].wall_seconds->source_id + "]</title>"));
    // Each column named under the axis (here only the phase differs); the shared parts once.
    EXPECT_THAT(svg, HasSubstr(lang == Lang::kFr ? "text-anchor=\"middle\">à froid</text>"
                                                 : "text-anchor=\"middle\">cold</text>"));
    EXPECT_THAT(svg, HasSubstr(lang == Lang::kFr ? ">Commun à tous : gpu-box · llama-server · gpu · n_predict=128<"
                                                 : ">All: gpu-box · llama-server · gpu · n_predict=128<"));
    EXPECT_EQ(Count(svg, "<g"), Count(svg, "</g>"));
    EXPECT_EQ(Count(svg, "<title"), Count(svg, "</title>"));
    EXPECT_THAT(svg, Not(::testing::ContainsRegex("font-size=\"([0-9]|1[01])\"")));
  }
}

TEST(DurationChartTest, PointsStayInTheirColumnAndAreDeterministic) {
  std::vector<v1::RunRecord> records = DurationRecords();
  Analysis a = Analyze(records);
  std::string svg = RenderDurationChart(a, "chat-7b", Lang::kEn);
  // The warm column is the third; its name is centred on it, its points within 30 of its centre.
  std::smatch name;
  ASSERT_TRUE(std::regex_search(svg, name, std::regex("<text x=\"([0-9.]+)\" y=\"[0-9.]+\" text-anchor=\"middle\">warm</text>")));
  const double centre = std::stod(name[1]);
  EXPECT_GT(centre, 500);
  std::regex circle("<circle class=\"run\" cx=\"([0-9.]+)\" cy=\"([0-9.]+)\"");
  std::vector<double> xs;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), circle); it != std::sregex_iterator(); ++it) {
    xs.push_back(std::stod((*it)[1]));
  }
  ASSERT_EQ(xs.size(), 3u);
  for (double x : xs) {
    EXPECT_GE(x, centre - 30);
    EXPECT_LE(x, centre + 30);
  }
  EXPECT_NE(xs[0], xs[1]);
  std::mt19937 rng(5);
  std::shuffle(records.begin(), records.end(), rng);
  EXPECT_EQ(RenderDurationChart(Analyze(records), "chat-7b", Lang::kEn), svg);
}

// ---------------------------------------------------------------------------------------------
// Binned cells: above kBinRunsAbove runs the charts draw min–max lines and medians
// ---------------------------------------------------------------------------------------------

// One warm cell of `n` runs over call indices 1..10; call c runs at 100 - 5 c tokens/s, except
// the first of each call at 100 - 5 c + 1; wall time 2 s.
std::vector<v1::RunRecord> ManyWarmRuns(int n) {
  std::vector<v1::RunRecord> out;
  for (int i = 0; i < n; ++i) {
    const uint32_t call = static_cast<uint32_t>(i % 10 + 1);
    v1::RunRecord r = MakeRun("r" + std::to_string(i), "gpu-box", v1::PHASE_WARM, call, kMarch1 + i);
    AddTokens(r, 100 - 5.0 * call + (i < 10 ? 1 : 0));
    SetWall(r, 2, 0);
    out.push_back(r);
  }
  return out;
}

TEST(BinnedChartsTest, EveryRunAPointAtTheThreshold) {
  Analysis a = Analyze(ManyWarmRuns(static_cast<int>(kBinRunsAbove)));
  const std::string calls = RenderCallIndexChart(a, "chat-7b", Lang::kEn);
  EXPECT_EQ(Count(calls, "<circle class=\"run\""), static_cast<int>(kBinRunsAbove));
  EXPECT_THAT(calls, Not(HasSubstr("binned")));
  const std::string durations = RenderDurationChart(a, "chat-7b", Lang::kEn);
  EXPECT_EQ(Count(durations, "<circle class=\"run\""), static_cast<int>(kBinRunsAbove));
  EXPECT_THAT(durations, Not(HasSubstr("binned")));
}

TEST(BinnedChartsTest, AboveTheThresholdOneMarkPerCallIndexAndPerGroup) {
  Analysis a = Analyze(ManyWarmRuns(3000));
  for (Lang lang : {Lang::kEn, Lang::kFr}) {
    const std::string calls = RenderCallIndexChart(a, "chat-7b", lang);
    // One median per call index, its min–max line, the line through the medians.
    EXPECT_EQ(Count(calls, "<circle class=\"run\""), 10);
    EXPECT_EQ(Count(calls, "<polyline "), 1);
    EXPECT_THAT(calls, HasSubstr(lang == Lang::kEn ? ">gpu-box (binned: about 300 runs per mark)<"
                                                   : ">gpu-box (regroupées : environ 300 exécutions par marque)<"));
    EXPECT_THAT(calls, HasSubstr(lang == Lang::kEn
                                     ? "<title>call 1: median 95.0, min 95.0, max 96.0 (300 runs, sources.csv)"
                                     : "<title>appel 1: médiane 95,0, min 95,0, max 96,0 (300 exécutions, "
                                       "sources.csv)"));
    EXPECT_EQ(Count(calls, "<g"), Count(calls, "</g>"));
    EXPECT_EQ(Count(calls, "<title"), Count(calls, "</title>"));
    const std::string durations = RenderDurationChart(a, "chat-7b", lang);
    EXPECT_EQ(Count(durations, "<circle class=\"run\""), static_cast<int>(kMaxBinsPerCell));
    EXPECT_THAT(durations, HasSubstr(lang == Lang::kEn ? ">(binned: about 15 runs per mark)<"
                                                       : ">(regroupées : environ 15 exécutions par marque)<"));
  }
}

TEST(RunBinsTest, ByKeyMergesConsecutiveKeysBeyondTheMaximum) {
  std::vector<std::pair<uint32_t, double>> points;
  for (uint32_t k = 1; k <= 2 * kMaxBinsPerCell + 1; ++k) points.emplace_back(k, k);
  const std::vector<RunBin> bins = BinByKey(points);
  // 401 keys, at most 200 bins: 3 keys a bin, so 133 bins of 3 and a last one of 2.
  ASSERT_EQ(bins.size(), 134u);
  EXPECT_EQ(bins[0].first_key, 1u);
  EXPECT_EQ(bins[0].last_key, 3u);
  EXPECT_EQ(bins[0].runs, 3u);
  EXPECT_EQ(bins[0].min, 1);
  EXPECT_EQ(bins[0].median, 2);
  EXPECT_EQ(bins[0].max, 3);
  EXPECT_EQ(bins.back().first_key, 400u);
  EXPECT_EQ(bins.back().last_key, 401u);
  EXPECT_EQ(bins.back().median, 400.5);
  EXPECT_EQ(RunsPerMark(401, bins.size()), 3u);
}

TEST(RunBinsTest, InOrderGroupsOfNearlyEqualSize) {
  std::vector<double> values;
  for (int i = 0; i < 401; ++i) values.push_back(i % 2 == 0 ? i : -i);
  const std::vector<RunBin> bins = BinInOrder(values);
  ASSERT_EQ(bins.size(), kMaxBinsPerCell);
  size_t total = 0;
  for (const RunBin& b : bins) {
    EXPECT_GE(b.runs, 2u);
    EXPECT_LE(b.runs, 3u);
    total += b.runs;
  }
  EXPECT_EQ(total, 401u);
  EXPECT_EQ(bins[0].runs, 2u);  // values 0 and -1
  EXPECT_EQ(bins[0].min, -1);
  EXPECT_EQ(bins[0].median, -0.5);
  EXPECT_EQ(bins[0].max, 0);
  EXPECT_TRUE(BinInOrder({}).empty());
}

// ---------------------------------------------------------------------------------------------
// Memory: chart and table
// ---------------------------------------------------------------------------------------------

// A gpu warm cell with a device buffer, device memory in use and the process' peak RSS; a cpu warm
// cell with the process' peak RSS and a container peak.
std::vector<v1::RunRecord> MemoryRecords() {
  std::vector<v1::RunRecord> out;
  for (int i = 0; i < 2; ++i) {
    v1::RunRecord r = MakeRun("g" + std::to_string(i + 1), "gpu-box", v1::PHASE_WARM, i + 1, kMarch1 + i);
    AddTokens(r, 50);
    AddMemory(r, v1::MEMORY_KIND_PROCESS_PEAK_RSS, "llama-server", (2ull << 30) + i, "getrusage");
    out.push_back(r);
  }
  AddMemory(out[0], v1::MEMORY_KIND_DEVICE_BUFFER, "CUDA0", 4ull << 30, "llama-server log line 42");
  AddMemory(out[1], v1::MEMORY_KIND_DEVICE_USED, "GPU0", 6ull << 30, "nvidia-smi");
  v1::RunRecord cpu = MakeRun("p1", "cpu-box", v1::PHASE_WARM, 1, kMarch1);
  cpu.set_mode("cpu");
  AddTokens(cpu, 8);
  AddMemory(cpu, v1::MEMORY_KIND_PROCESS_PEAK_RSS, "llama-server", 5ull << 30, "getrusage");
  AddMemory(cpu, v1::MEMORY_KIND_CONTAINER_PEAK, "bench.slice", 7ull << 30, "memory.peak");
  out.push_back(cpu);
  v1::RunRecord other = MakeRun("o1", "gpu-box", v1::PHASE_WARM, 1, kMarch1);
  other.set_task("sd15");
  AddTokens(other, 1);
  out.push_back(other);
  return out;
}

TEST(MemoryChartTest, TwoPanelsNeverMixingDeviceAndHostMemory) {
  Analysis a = Analyze(MemoryRecords());
  EXPECT_EQ(MemoryChartFileName("chat-7b", Lang::kEn), "chart-chat-7b-memory.en.svg");
  EXPECT_EQ(RenderMemoryChart(a, "sd15", Lang::kEn), "");
  for (Lang lang : {Lang::kFr, Lang::kEn}) {
    std::string svg = RenderMemoryChart(a, "chat-7b", lang);
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 800.0 ", 0), 0u) << svg;
    EXPECT_THAT(svg, HasSubstr("<desc id=\"memory-desc\">"));
    EXPECT_THAT(svg, Not(HasSubstr("SIMUL")));
    std::vector<std::string> panels;
    for (size_t pos = svg.find("<g class=\"panel\">"); pos != std::string::npos;
         pos = svg.find("<g class=\"panel\">", pos + 1)) {
      size_t end = svg.find("<g class=\"panel\">", pos + 1);
      panels.push_back(svg.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    }
    ASSERT_EQ(panels.size(), 2u);
    EXPECT_THAT(panels[0], HasSubstr(lang == Lang::kFr ? "Mémoire de l'accélérateur, Gio" : "Accelerator memory, GiB"));
    EXPECT_EQ(Count(panels[0], "<g class=\"bar\""), 2);
    EXPECT_EQ(Count(panels[0], "data-kind=\"MEMORY_KIND_DEVICE_"), 2);
    EXPECT_EQ(Count(panels[1], "<g class=\"bar\""), 3);
    EXPECT_EQ(Count(panels[1], "data-kind=\"MEMORY_KIND_PROCESS_PEAK_RSS\""), 2);  // gpu-box and cpu-box
    EXPECT_EQ(Count(panels[1], "data-kind=\"MEMORY_KIND_CONTAINER_PEAK\""), 1);
    EXPECT_THAT(panels[1], Not(HasSubstr("MEMORY_KIND_DEVICE")));
    // Each bar: cell, kind wording, scope and source id; the value in GiB.
    const Cell& gpu = a.cells.at(1);
    ASSERT_EQ(gpu.key.machine, "gpu-box");
    ASSERT_EQ(gpu.memory.at(1).kind, v1::MEMORY_KIND_DEVICE_USED);
    const std::string device_used = gpu.memory[1].bytes.source_id;
    // Under each machine (its class here), the setting's differing parts, kind, scope, source.
    EXPECT_THAT(panels[0], HasSubstr("font-weight=\"bold\">gpu-box</text>"));
    if (lang == Lang::kEn) {
      EXPECT_THAT(panels[0], HasSubstr(">gpu — accelerator memory in use (whole device) — GPU0 [" + device_used +
                                       "]</text>"));
      EXPECT_THAT(panels[0], HasSubstr(">6.00 GiB</text>"));
      EXPECT_THAT(panels[0], HasSubstr("peak in gpu-box / llama-server / gpu / n_predict=128 / warm</title>"));
    } else {
      EXPECT_THAT(panels[0], HasSubstr(">gpu — mémoire de l'accélérateur occupée (appareil entier) — GPU0 [" +
                                       device_used + "]</text>"));
      EXPECT_THAT(panels[0], HasSubstr(">6,00 Gio</text>"));
    }
    EXPECT_EQ(Count(svg, "<g"), Count(svg, "</g>"));
    EXPECT_EQ(Count(svg, "<title"), Count(svg, "</title>"));
    EXPECT_THAT(svg, Not(::testing::ContainsRegex("font-size=\"([0-9]|1[01])\"")));
  }
}

TEST(MemoryChartTest, DevicePanelStaysWhenOnlyHostMemory) {
  std::vector<v1::RunRecord> records = MemoryRecords();
  records.erase(records.begin(), records.begin() + 2);  // only the cpu run and the sd15 run
  Analysis a = Analyze(records);
  std::string svg = RenderMemoryChart(a, "chat-7b", Lang::kEn);
  EXPECT_EQ(Count(svg, "<g class=\"panel\">"), 2);
  EXPECT_EQ(Count(svg, "<g class=\"bar\""), 2);
  // The panel says in words that nothing was measured: no empty frame.
  EXPECT_THAT(svg, HasSubstr("Accelerator memory, GiB</text>\n<text x=\"20.0\" y=\"80.0\" fill=\"#444444\">Not "
                             "measured.</text>\n</g>"));
}

TEST(MemoryTableTest, OneLinePerKindWithItsOwnWording) {
  Analysis a = Analyze(MemoryRecords());
  const Cell& cpu = a.cells.at(0);
  const Cell& gpu = a.cells.at(1);
  ASSERT_EQ(cpu.key.machine, "cpu-box");
  ASSERT_EQ(gpu.memory.size(), 3u);
  ASSERT_EQ(cpu.memory.size(), 2u);
  std::string en = WriteMarkdown(RenderDocument(a, Lang::kEn));
  EXPECT_THAT(en, HasSubstr("**Memory** (peak per kind and scope over the accepted runs; each kind is its own "
                            "measure)\n\n"
                            "- `cpu-box / llama-server / cpu / n_predict=128 / warm`\n"
                            "  - process peak RSS (host memory), `llama-server`: 5.00 [" +
                            cpu.memory[0].human.source_id +
                            "] GiB — `getrusage`\n"
                            "  - container peak memory (host), `bench.slice`: 7.00 [" +
                            cpu.memory[1].human.source_id +
                            "] GiB — `memory.peak`\n"
                            "- `gpu-box / llama-server / gpu / n_predict=128 / warm`\n"
                            "  - process peak RSS (host memory), `llama-server`: 2.00 [" +
                            gpu.memory[0].human.source_id +
                            "] GiB — `getrusage`\n"
                            "  - accelerator memory in use (whole device), `GPU0`: 6.00 [" +
                            gpu.memory[1].human.source_id +
                            "] GiB — `nvidia-smi`\n"
                            "  - accelerator buffer reported by the backend, `CUDA0`: 4.00 [" +
                            gpu.memory[2].human.source_id + "] GiB — `llama-server log line 42`\n\n"))
      << en;
  EXPECT_EQ(SourceOf(a, gpu.memory[0].bytes).operation, "max");
  std::string fr = WriteMarkdown(RenderDocument(a, Lang::kFr));
  EXPECT_THAT(fr, HasSubstr("**Mémoire** (pic par nature"));
  EXPECT_THAT(fr, HasSubstr("  - pic de RSS du processus (mémoire hôte), `llama-server` : 5,00 [" +
                            cpu.memory[0].human.source_id + "] Gio — `getrusage`\n"));
  EXPECT_THAT(fr, HasSubstr("  - tampon sur l'accélérateur déclaré par le moteur, `CUDA0` : 4,00 [" +
                            gpu.memory[2].human.source_id + "] Gio — `llama-server log line 42`\n"));
  // The sd15 task has no memory: no heading under its table.
  EXPECT_EQ(Count(en, "**Memory**"), 1);
}

}  // namespace
}  // namespace benchfleet::synthesis
