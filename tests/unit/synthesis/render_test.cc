#include "synthesis/render/render.h"
#include "synthesis/render/inline_text.h"
#include "synthesis/render/messages.h"
#include "synthesis/render/sections.h"

#include <algorithm>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/stats/spread.h"
#include "synthesis/analysis/sources.h"
#include "synthesis/analysis/table.h"

namespace benchfleet::synthesis {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::RunRecord MakeRun(const std::string& id, const std::string& agent, const std::string& mode, v1::Phase phase,
                      uint32_t call_index, double tokens_per_second, int64_t start_seconds) {
  v1::RunRecord r;
  r.set_run_id(id);
  r.set_task("chat-7b");
  r.set_agent_id(agent);
  r.set_backend("llama-server");
  r.set_mode(mode);
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
  m->set_headline(1);  // as the runner stamps its backend\'s declaration
  m->set_better(v1::BETTER_HIGHER);
  return r;
}

// A gpu cell collapsing 52.9 -> 30.0 -> 28.2 -> 27.9 (4 accepted runs, THROUGHPUT_DROP on the
// second) plus one CACHE_HIT run; a cpu cell of 5 cold runs plus one FAILED run.
std::vector<v1::RunRecord> Records(bool simulated) {
  std::vector<v1::RunRecord> out;
  const double gpu[] = {52.9, 30.0, 28.2, 27.9};
  for (int i = 0; i < 4; ++i) {
    out.push_back(MakeRun("g" + std::to_string(i + 1), "host-gpu", "gpu", v1::PHASE_WARM, i + 1, gpu[i], 100 + i));
  }
  auto* drop = out[1].add_flags();
  drop->set_code("THROUGHPUT_DROP");
  drop->set_reason("-43% from call 1 to call 2");
  v1::RunRecord cached = MakeRun("g5", "host-gpu", "gpu", v1::PHASE_WARM, 5, 999.0, 104);
  auto* hit = cached.add_flags();
  hit->set_code("CACHE_HIT");
  hit->set_reason("prompt served from the cache");
  out.push_back(cached);
  const double cpu[] = {8.41, 8.37, 8.52, 8.40, 8.44};
  for (int i = 0; i < 5; ++i) {
    out.push_back(MakeRun("c" + std::to_string(i + 1), "host-cpu", "cpu", v1::PHASE_COLD, i + 1, cpu[i], 200 + i));
  }
  v1::RunRecord failed = MakeRun("c6", "host-cpu", "cpu", v1::PHASE_COLD, 6, 0, 205);
  failed.clear_metrics();
  failed.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
  failed.mutable_status()->set_message("CUDA error: out of memory");
  out.push_back(failed);
  if (simulated) out[0].set_simulated(true);
  return out;
}

const Cell& CellOf(const Analysis& a, const std::string& mode) {
  for (const Cell& c : a.cells) {
    if (c.key.mode == mode) return c;
  }
  ADD_FAILURE() << "no cell " << mode;
  return a.cells.front();
}

std::string Refs(const Cell& c, const std::vector<std::string>& printed) {
  std::string out;
  for (size_t i = 0; i < printed.size(); ++i) {
    if (i > 0) out += ", ";
    out += printed[i] + " [" + c.runs[i].figure.source_id + "]";
  }
  return out;
}

TEST(FormatNumberTest, ThreeSignificantDigitsKeepingTheIntegerPart) {
  EXPECT_EQ(FormatNumber(52.9, Lang::kEn), "52.9");
  EXPECT_EQ(FormatNumber(52.9, Lang::kFr), "52,9");
  EXPECT_EQ(FormatNumber(30.0, Lang::kEn), "30.0");
  EXPECT_EQ(FormatNumber(28.24, Lang::kFr), "28,2");
  EXPECT_EQ(FormatNumber(8.414, Lang::kEn), "8.41");
  EXPECT_EQ(FormatNumber(0.01234, Lang::kEn), "0.0123");
  EXPECT_EQ(FormatNumber(0.13, Lang::kFr), "0,130");
  EXPECT_EQ(FormatNumber(88110.3, Lang::kEn), "88110");
  EXPECT_EQ(FormatNumber(99.96, Lang::kEn), "100");
  EXPECT_EQ(FormatNumber(9.996, Lang::kEn), "10.0");
  EXPECT_EQ(FormatNumber(0, Lang::kEn), "0.00");
  EXPECT_EQ(FormatNumber(-0.001, Lang::kEn), "-0.00100");
}

TEST(TaskSlugTest, KeepsLettersAndDigits) {
  EXPECT_EQ(TaskSlug("llama ?B F16 pp16"), "llama-b-f16-pp16");
  EXPECT_EQ(TaskSlug("chat-7b"), "chat-7b");
  EXPECT_EQ(TaskSlug("???"), "task");
  EXPECT_EQ(ChartFileName("chat-7b", Lang::kFr), "chart-chat-7b.fr.svg");
}

TEST(RenderMarkdownTest, EnglishRowsTitleAndTraps) {
  Analysis a = Analyze(Records(true));
  std::string md = WriteMarkdown(RenderDocument(a, Lang::kEn));
  EXPECT_EQ(md.rfind("# Sizing guide (SIMULATED)\n", 0), 0u) << md;
  EXPECT_THAT(md, HasSubstr("sources.csv"));
  EXPECT_THAT(md, HasSubstr("](chart-chat-7b.en.svg)"));
  const Cell& gpu = CellOf(a, "gpu");
  ASSERT_EQ(gpu.runs.size(), 4u);
  ASSERT_FALSE(gpu.median.has_value());
  std::string gpu_row = "| `host-gpu` | `llama-server` | `gpu` | `n_predict=128` | warm | "
                        "`tokens_per_second (tokens/s)` | " +
                        Refs(gpu, {"52.9", "30.0", "28.2", "27.9"}) + " | 27.9 [" + gpu.min->source_id + "] – 52.9 [" +
                        gpu.max->source_id + "] | — | 1 [" + gpu.excluded_count->source_id + "] |\n";
  EXPECT_THAT(md, HasSubstr(gpu_row));
  const Cell& cpu = CellOf(a, "cpu");
  ASSERT_TRUE(cpu.median.has_value());
  ASSERT_TRUE(cpu.spread && cpu.spread->ci_low && cpu.spread->ci_high && cpu.spread->cv_percent);
  std::string cpu_row = "| `host-cpu` | `llama-server` | `cpu` | `n_predict=128` | cold | "
                        "`tokens_per_second (tokens/s)` | " +
                        Refs(cpu, {"8.41", "8.37", "8.52", "8.40", "8.44"}) + " | 8.37 [" + cpu.min->source_id +
                        "] – 8.52 [" + cpu.max->source_id + "] | 8.41 [" + cpu.median->source_id +
                        // Python 3.11 (statistics.stdev / statistics.mean, and the splitmix64 bootstrap of
                        // common/stats/spread.h written again): CV 0.0067849921478385315, interval (8.37, 8.52).
                        "] (`95%` CI 8.37 [" + cpu.spread->ci_low->source_id + "] – 8.52 [" +
                        cpu.spread->ci_high->source_id + "], CV 0.678 [" + cpu.spread->cv_percent->source_id +
                        "] %) | 1 [" + cpu.excluded_count->source_id + "] |\n";
  EXPECT_THAT(md, HasSubstr(cpu_row));
  EXPECT_THAT(md, HasSubstr("### Cache hits (excluded)\n\n- `chat-7b` — `host-gpu / llama-server / gpu / n_predict=128 / "
                            "warm` — run `g5` (call `5`) — `CACHE_HIT`: `prompt served from the cache`\n"));
  EXPECT_THAT(md, HasSubstr("### Throughput drops while the device throttled\n\nNone.\n\n"
                            "### Unexplained throughput drops\n\n- `chat-7b` — `host-gpu / llama-server / gpu / "
                            "n_predict=128 / warm` — run `g2` (call `2`) — `THROUGHPUT_DROP`: `-43% from call 1 to call "
                            "2`\n"));
  // No drop on a busy host: no such heading.
  EXPECT_THAT(md, Not(HasSubstr("busy host")));
  EXPECT_THAT(md, HasSubstr("### Failed runs\n\n- `chat-7b` — `host-cpu / llama-server / cpu / n_predict=128 / "
                            "cold` — run `c6` (call `6`) — `FAILED`: `CUDA error: out of memory`\n"));
}

TEST(RenderMarkdownTest, FrenchUsesDecimalCommaAndCatalogue) {
  Analysis a = Analyze(Records(true));
  std::string md = WriteMarkdown(RenderDocument(a, Lang::kFr));
  EXPECT_EQ(md.rfind("# Guide de dimensionnement (SIMULÉ)\n", 0), 0u) << md;
  const Cell& gpu = CellOf(a, "gpu");
  EXPECT_THAT(md, HasSubstr("| `host-gpu` | `llama-server` | `gpu` | `n_predict=128` | à chaud | "
                            "`tokens_per_second (jetons/s)` | " +
                            Refs(gpu, {"52,9", "30,0", "28,2", "27,9"}) + " | 27,9 [" + gpu.min->source_id +
                            "] – 52,9 [" + gpu.max->source_id + "] | — | 1 [" + gpu.excluded_count->source_id +
                            "] |\n"));
  EXPECT_THAT(md, Not(HasSubstr("52.9")));
  EXPECT_THAT(md, HasSubstr("### Exécutions en échec\n"));
  EXPECT_THAT(md, HasSubstr("exécution `c6` (appel `6`) — `FAILED`: `CUDA error: out of memory`"));
  EXPECT_THAT(md, HasSubstr("### Chutes de débit inexpliquées\n"));
}

// The agent's attribution on the records themselves: a drop whose run is also THROTTLED is listed
// as throttling, one whose run is CONTENDED as a busy host, apart from the unexplained one (g2).
TEST(RenderMarkdownTest, DropsWhileTheDeviceThrottledOrTheHostWasBusyAreListedApart) {
  std::vector<v1::RunRecord> records = Records(false);
  auto flag = [](v1::RunRecord& r, const std::string& code, const std::string& reason) {
    v1::Flag* f = r.add_flags();
    f->set_code(code);
    f->set_reason(reason);
  };
  flag(records[2], "THROUGHPUT_DROP", "28.2 is 46.7% below the reference 52.9; the device throttled (SM clock 1410 -> 1005 MHz)");
  flag(records[2], "THROTTLED", "SM clock 1410 -> 1005 MHz");
  flag(records[3], "CONTENDED", "other processes on the nvidia device(s) during the run: pid 4242 python3");
  flag(records[3], "THROUGHPUT_DROP", "27.9 is 47.3% below the reference 52.9; the host was busy");
  Analysis a = Analyze(records);
  const std::string md = WriteMarkdown(RenderDocument(a, Lang::kEn));
  const std::string where = "- `chat-7b` — `host-gpu / llama-server / gpu / n_predict=128 / warm` — run ";
  EXPECT_THAT(md, HasSubstr("### Throughput drops while the device throttled\n\n" + where +
                            "`g3` (call `3`) — `THROUGHPUT_DROP`: `28.2 is 46.7% below the reference 52.9; the device "
                            "throttled (SM clock 1410 -> 1005 MHz)`\n\n"
                            "### Throughput drops on a busy host (CONTENDED)\n\n" + where +
                            "`g4` (call `4`) — `THROUGHPUT_DROP`: `27.9 is 47.3% below the reference 52.9; the host was "
                            "busy`\n\n"
                            "### Unexplained throughput drops\n\n" + where +
                            "`g2` (call `2`) — `THROUGHPUT_DROP`: `-43% from call 1 to call 2`\n\n"));
  const std::string fr = WriteMarkdown(RenderDocument(a, Lang::kFr));
  EXPECT_THAT(fr, HasSubstr("### Chutes de débit pendant un bridage de l'accélérateur\n\n- `chat-7b`"));
  EXPECT_THAT(fr, HasSubstr("### Chutes de débit sur un hôte occupé (CONTENDED)\n\n- `chat-7b`"));
  EXPECT_THAT(fr, HasSubstr("### Chutes de débit inexpliquées\n\n- `chat-7b`"));
}

TEST(RenderMarkdownTest, NotSimulatedHasPlainTitle) {
  Analysis a = Analyze(Records(false));
  EXPECT_EQ(WriteMarkdown(RenderDocument(a, Lang::kEn)).rfind("# Sizing guide\n", 0), 0u);
  EXPECT_THAT(WriteMarkdown(RenderDocument(a, Lang::kEn)), Not(HasSubstr("SIMULATED")));
  EXPECT_THAT(RenderCallIndexChart(a, "chat-7b", Lang::kEn), Not(HasSubstr("SIMULATED")));
}

TEST(RenderTest, ByteIdenticalWhenRecordsAreShuffled) {
  std::vector<v1::RunRecord> records = Records(true);
  Analysis a = Analyze(records);
  std::mt19937 rng(7);
  for (int i = 0; i < 5; ++i) {
    std::shuffle(records.begin(), records.end(), rng);
    Analysis b = Analyze(records);
    for (Lang lang : {Lang::kFr, Lang::kEn}) {
      EXPECT_EQ(WriteMarkdown(RenderDocument(a, lang)), WriteMarkdown(RenderDocument(b, lang)));
      EXPECT_EQ(RenderCallIndexChart(a, "chat-7b", lang), RenderCallIndexChart(b, "chat-7b", lang));
    }
    EXPECT_EQ(SourcesCsv(a.sources), SourcesCsv(b.sources));
  }
}

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + needle.size())) ++n;
  return n;
}

TEST(RenderCallIndexChartTest, OnePolylinePerCellWithOnePointPerRun) {
  Analysis a = Analyze(Records(true));
  for (Lang lang : {Lang::kFr, Lang::kEn}) {
    std::string svg = RenderCallIndexChart(a, "chat-7b", lang);
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ", 0), 0u);
    EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
    EXPECT_THAT(svg, HasSubstr("<title id=\"chart-title\">"));
    EXPECT_THAT(svg, HasSubstr("<desc id=\"chart-desc\">"));
    EXPECT_THAT(svg, HasSubstr(lang == Lang::kFr ? "(SIMULÉ)</title>" : "(SIMULATED)</title>"));
    EXPECT_THAT(svg, HasSubstr(lang == Lang::kFr ? "Rang d'appel" : "Call index"));
    EXPECT_EQ(Count(svg, "<polyline"), 2);
    EXPECT_EQ(Count(svg, "<circle class=\"run\""), 4);  // the gpu warm runs
    EXPECT_EQ(Count(svg, "<rect class=\"run\""), 5);    // the cpu cold runs
    std::regex polyline("<polyline[^>]*points=\"([^\"]*)\"");
    std::vector<int> points;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), polyline); it != std::sregex_iterator(); ++it) {
      std::string p = (*it)[1];
      points.push_back(static_cast<int>(std::count(p.begin(), p.end(), ',')));
    }
    EXPECT_EQ(points, (std::vector<int>{5, 4}));  // cells in key order: host-cpu, host-gpu
    EXPECT_EQ(Count(svg, "<g"), Count(svg, "</g>"));
    EXPECT_EQ(Count(svg, "<title"), Count(svg, "</title>"));
    EXPECT_THAT(svg, HasSubstr(lang == Lang::kFr ? "52,9 [" : "52.9 ["));
  }
}

// A source's figure from its row: a cell's aggregates are over the figures of the value sources
// they cite (input_refs); the spread's (cv, median_ci_low, median_ci_high) by common/stats over
// them in run order, the CV's percentage a formula over the cv source.
double Expected(const SourceTable& table, const Source& s) {
  if (s.operation == "formula") {
    EXPECT_EQ(s.formula, "x1 * 100") << s.id;
    const Source* cv = table.Find(s.input_refs.at(0));
    EXPECT_TRUE(cv != nullptr && cv->operation == "cv") << s.id;
    return cv != nullptr ? Expected(table, *cv) * 100 : 0;
  }
  std::vector<double> v = s.inputs;
  for (const std::string& ref : s.input_refs) {
    const Source* cited = table.Find(ref);
    EXPECT_TRUE(cited != nullptr && cited->operation == "value") << s.id << " cites " << ref;
    if (cited != nullptr) v.push_back(Expected(table, *cited));
  }
  if (v.empty() && s.operation != "count") {
    ADD_FAILURE() << s.id << ": no inputs";
    return 0;
  }
  if (s.operation == "cv") return *stats::CoefficientOfVariation(v);
  if (s.operation == "median_ci_low") return stats::BootstrapMedianInterval(v)->low;
  if (s.operation == "median_ci_high") return stats::BootstrapMedianInterval(v)->high;
  std::sort(v.begin(), v.end());
  if (s.operation == "value") return s.inputs.at(0);
  if (s.operation == "min") return v.front();
  if (s.operation == "max") return v.back();
  if (s.operation == "median") return Quantile(v, 0.5);
  if (s.operation == "q1") return Quantile(v, 0.25);
  if (s.operation == "q3") return Quantile(v, 0.75);
  if (s.operation == "count") return static_cast<double>(s.run_ids.size());
  ADD_FAILURE() << "operation " << s.operation;
  return 0;
}

// Every number of the table's figure columns carries a [S..] ref whose source gives that number.
TEST(RenderMarkdownTest, EveryPrintedFigureMatchesItsSource) {
  std::vector<v1::RunRecord> records = Records(true);
  for (int i = 0; i < 22; ++i) {  // a distribution_only cell too
    records.push_back(MakeRun("d" + std::to_string(i), "host-big", "gpu", v1::PHASE_WARM, i + 1, 10.0 + i * 0.37, 300 + i));
  }
  Analysis a = Analyze(records);
  for (Lang lang : {Lang::kFr, Lang::kEn}) {
    std::string md = WriteMarkdown(RenderDocument(a, lang));
    std::regex ref("(-?[0-9]+(?:[.,][0-9]+)?) \\[(S[0-9]+)\\]");
    int rows = 0, refs = 0;
    size_t start = 0;
    while (start < md.size()) {
      size_t end = md.find('\n', start);
      std::string line = md.substr(start, end - start);
      start = end + 1;
      if (line.rfind("| ", 0) != 0 || line.find(" [S") == std::string::npos) continue;
      ++rows;
      // Columns 7..9 (values, min–max, median): only refs'd numbers may hold digits (and code spans:
      // the interval's level, a constant of the method).
      std::vector<std::string> cols;
      for (size_t p = 2, q; (q = line.find(" | ", p)) != std::string::npos; p = q + 3) cols.push_back(line.substr(p, q - p));
      ASSERT_GE(cols.size(), 9u) << line;
      for (size_t c = 6; c <= 8; ++c) {
        std::string rest = std::regex_replace(std::regex_replace(cols[c], ref, ""), std::regex("\\bq[13]\\b"), "");
        rest = std::regex_replace(rest, std::regex("`[^`]*`"), "");
        EXPECT_EQ(rest.find_first_of("0123456789"), std::string::npos) << "unsourced number in: " << cols[c];
      }
      for (auto it = std::sregex_iterator(line.begin(), line.end(), ref); it != std::sregex_iterator(); ++it) {
        ++refs;
        const Source* s = a.sources.Find((*it)[2]);
        ASSERT_NE(s, nullptr) << (*it)[2];
        std::string expected = s->operation == "count" ? std::to_string(static_cast<long>(Expected(a.sources, *s)))
                                                       : FormatNumber(Expected(a.sources, *s), lang);
        EXPECT_EQ((*it)[1].str(), expected) << s->id << " in " << line;
      }
    }
    EXPECT_EQ(rows, 3);
    // cpu: 5 values + min + max + median and its interval and CV + excluded count; gpu: 4 + min + max
    // + excluded count; big: 5-number summary + min, max, median and its interval and CV.
    EXPECT_EQ(refs, 12 + 7 + 11);
  }
}


TEST(LocalWordsTest, FrenchFigureWordsAndIdentifiersKept) {
  EXPECT_EQ(LocalWords("generation tokens/s", Lang::kFr), "jetons générés/s");
  EXPECT_EQ(LocalWords("tokens/s", Lang::kFr), "jetons/s");
  EXPECT_EQ(LocalWords("J/token", Lang::kFr), "J/jeton");
  EXPECT_EQ(LocalWords("GiB", Lang::kFr), "Gio");
  EXPECT_EQ(LocalWords("tokens_per_second", Lang::kFr), "tokens_per_second");  // a metric's name stays
  EXPECT_EQ(LocalWords("generation tokens/s", Lang::kEn), "generation tokens/s");
  EXPECT_EQ(FigureName("mean latency", "s", Lang::kFr), "latence moyenne (s)");
}

// Three checks as the guide builds them (guide.cc): a REGRESSION with a baseline of 7 runs, a
// NO_CHANGE, and a BASELINE_TOO_SMALL without a test.
GuideModel RegressionChecksModel() {
  GuideModel model;
  RegressionCheck regression;
  v1::RegressionVerdict& r = regression.verdict;
  r.set_kind(v1::RegressionVerdict::KIND_REGRESSION);
  r.set_run_id("c0000003-0000-4000-8000-000000000000");
  r.set_metric("tokens_per_second");
  r.set_label("output tokens/s");
  r.set_unit("tokens/s");
  r.set_mode("gpu");
  r.set_phase(v1::PHASE_WARM);
  r.set_test("Mann-Whitney U, two-sided, exact");
  r.set_p_value(1.0 / 28);
  r.set_level(0.05);
  r.set_threshold(0.10);
  r.set_sample_median(40);
  r.set_baseline_median(51);
  r.set_sample_change((40.0 - 51.0) / 51.0);
  for (int i = 1; i <= 3; ++i) r.add_sample_run_ids("c000000" + std::to_string(i) + "-0000-4000-8000-000000000000");
  for (int i = 1; i <= 7; ++i) r.add_baseline_run_ids("b000000" + std::to_string(i) + "-0000-4000-8000-000000000000");
  regression.machine = "gpu-a.local (a100)";
  regression.task = "chat-7b";
  regression.matrix = "concurrency=4";
  regression.sample_runs = Figure{3, "runs", "S41"};
  regression.baseline_runs = Figure{7, "runs", "S42"};
  RegressionCheck no_change = regression;
  v1::RegressionVerdict& n = no_change.verdict;
  n.set_kind(v1::RegressionVerdict::KIND_NO_CHANGE);
  n.set_p_value(0.4);
  n.set_sample_median(50.5);
  n.set_sample_change((50.5 - 51.0) / 51.0);
  n.mutable_baseline_run_ids()->DeleteSubrange(3, 4);
  no_change.machine = "gpu-b.local (l4)";
  no_change.matrix = "";
  no_change.baseline_runs = Figure{3, "runs", "S44"};
  no_change.sample_runs = Figure{3, "runs", "S43"};
  RegressionCheck small;
  v1::RegressionVerdict& b = small.verdict;
  b.set_kind(v1::RegressionVerdict::KIND_BASELINE_TOO_SMALL);
  b.set_metric("wall_seconds");
  b.set_label("wall time");
  b.set_unit("s");
  b.set_mode("cpu");
  b.set_phase(v1::PHASE_COLD);
  b.set_threshold(0.10);
  b.set_sample_median(12.5);
  b.set_baseline_median(11);
  b.set_sample_change(1.5 / 11);
  b.set_baseline_runs_needed(3);
  b.add_sample_run_ids("d0000001-0000-4000-8000-000000000000");
  b.add_baseline_run_ids("e0000001-0000-4000-8000-000000000000");
  b.add_baseline_run_ids("e0000002-0000-4000-8000-000000000000");
  small.machine = "cpu-c.local";
  small.task = "sd-xl";
  small.sample_runs = Figure{1, "runs", "S45"};
  small.baseline_runs = Figure{2, "runs", "S46"};
  model.regression_checks = {regression, small, no_change};
  model.regression_counts = {{v1::RegressionVerdict::KIND_REGRESSION, Figure{1, "runs", "S47"}},
                             {v1::RegressionVerdict::KIND_BASELINE_TOO_SMALL, Figure{1, "runs", "S48"}},
                             {v1::RegressionVerdict::KIND_NO_CHANGE, Figure{1, "runs", "S49"}}};
  return model;
}

TEST(RegressionSectionTest, OneLinePerCheckTheAnswerFirstInEnglish) {
  Document out_doc;
  RenderRegressionSection(RegressionChecksModel(), Lang::kEn, out_doc);
  std::string out = WriteMarkdown(out_doc);
  // The intro is the catalogue's (messages_en.cc); every line below is exact.
  const std::string intro(MessagesEn().reg_intro);
  EXPECT_EQ(out,
            "## Regression checks\n\n" + intro + "\n\n"
            "- **Regression** — `gpu-a.local (a100)` · `chat-7b` · `gpu` · warm · `concurrency=4` — output tokens/s "
            "median `40.0` vs `51.0` (`-21.6%`, threshold `10%`) — Mann-Whitney U, two-sided, exact: "
            "`p = 0.0357 < 0.05` — runs: 3 [S41] vs 7 [S42] in the baseline (`b0000001`, `b0000002`, `b0000003`, "
            "`b0000004`, `b0000005`, `b0000006`, …)\n"
            "\n"
            "**Other checks**: Baseline too small 1 [S48] · No change 1 [S49]\n");
  EXPECT_EQ(intro, "The coordinator's newest check of each machine, task and setting: the runs of a series (the sample) against the same machine's earlier runs of that setting (the baseline). A regression or an improvement needs both a significant difference and a change of the median beyond the threshold. sources.csv lists the runs behind each count.");
}

TEST(RegressionSectionTest, OneLinePerCheckTheAnswerFirstInFrench) {
  Document out_doc;
  RenderRegressionSection(RegressionChecksModel(), Lang::kFr, out_doc);
  std::string out = WriteMarkdown(out_doc);
  const std::string intro(MessagesFr().reg_intro);
  EXPECT_EQ(out,
            "## Contrôles de régression\n\n" + intro + "\n\n"
            "- **Régression** — `gpu-a.local (a100)` · `chat-7b` · `gpu` · à chaud · `concurrency=4` — jetons de "
            "sortie/s : médiane `40,0` contre `51,0` (`-21,6 %`, seuil `10 %`) — Mann-Whitney U, bilatéral, exact : "
            "`p = 0,0357 < 0,05` — exécutions : 3 [S41] contre 7 [S42] dans la référence (`b0000001`, `b0000002`, "
            "`b0000003`, `b0000004`, `b0000005`, `b0000006`, …)\n"
            "\n"
            "**Autres contrôles** : Référence trop petite 1 [S48] · Pas de changement 1 [S49]\n");
  EXPECT_EQ(intro, "Le dernier contrôle du coordinateur pour chaque machine, tâche et réglage : les exécutions d'une série (l'échantillon) comparées aux exécutions antérieures de la même machine pour ce réglage (la référence). Une régression ou une amélioration exige à la fois une différence significative et un écart de la médiane au-delà du seuil. sources.csv liste les exécutions de chaque compte.");
}

TEST(RegressionSectionTest, NoCheckNoSection) {
  Document doc;
  doc.Paragraph({TextSpan("before")});
  RenderRegressionSection(GuideModel{}, Lang::kEn, doc);
  EXPECT_EQ(WriteMarkdown(doc), "before\n");
  GuideModel model = RegressionChecksModel();
  model.regression_checks.erase(model.regression_checks.begin());
  model.regression_counts.erase(model.regression_counts.begin());
  RenderRegressionSection(model, Lang::kEn, doc);
  const std::string out = WriteMarkdown(doc);
  EXPECT_THAT(out, HasSubstr("\n\nNo regression and no improvement.\n\n**Other checks**: Baseline too small 1 [S48] · No change 1 [S49]\n"));
  EXPECT_THAT(out, Not(HasSubstr("- **Baseline too small**")));
}

// A change beyond the threshold that was not significant keeps its line (the test and p-value
// that decided it) under the counts; no change and no test are counts only.
TEST(RegressionSectionTest, AChangeThatWasNotSignificantKeepsItsLine) {
  GuideModel model = RegressionChecksModel();
  for (RegressionCheck& c : model.regression_checks) {
    if (c.verdict.kind() == v1::RegressionVerdict::KIND_NO_CHANGE) {
      c.verdict.set_kind(v1::RegressionVerdict::KIND_NOT_SIGNIFICANT);
    }
  }
  for (RegressionCount& rc : model.regression_counts) {
    if (rc.kind == v1::RegressionVerdict::KIND_NO_CHANGE) rc.kind = v1::RegressionVerdict::KIND_NOT_SIGNIFICANT;
  }
  Document out_doc;
  RenderRegressionSection(model, Lang::kEn, out_doc);
  std::string out = WriteMarkdown(out_doc);
  EXPECT_THAT(out, HasSubstr("**Other checks**: Baseline too small 1 [S48] · Not significant 1 [S49]\n\n"
                             "- **Not significant** — `gpu-b.local (l4)` · `chat-7b` · `gpu` · warm — output tokens/s "
                             "median `50.5` vs `51.0` (`-0.980%`, threshold `10%`) — Mann-Whitney U, two-sided, exact: "
                             "`p = 0.4 ≥ 0.05` — runs: 3 [S43] vs 3 [S44] in the baseline (`b0000001`, `b0000002`, "
                             "`b0000003`)\n"));
  EXPECT_THAT(out, Not(HasSubstr("- **Baseline too small**")));
}

}  // namespace
}  // namespace benchfleet::synthesis
