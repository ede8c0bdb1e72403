// The guide's charts: the drawing primitives (chart_svg.h), the class comparison, the sweeps, the
// call-index, duration and memory charts (render.h), and, over every chart of a guide built from
// the fixtures and a sweep, that each text lies inside its viewBox and clear of the others by the
// charts' own width estimate (tests/browser measures the boxes the browser draws).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "common/env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "synthesis/analysis/guide_model.h"
#include "synthesis/analysis/table.h"
#include "synthesis/guide.h"
#include "synthesis/readers/measurement_files.h"
#include "synthesis/render/chart_axes.h"
#include "synthesis/render/chart_svg.h"
#include "synthesis/render/chart_targets.h"
#include "synthesis/render/inline_text.h"
#include "synthesis/render/render.h"
#include "tests/support/guide_sweep_records.h"

namespace benchfleet::synthesis {
namespace {

TEST(ChartAxesTest, ATicksTextHasTheDecimalsItsStepNeedsAndNoneForAStepPastTheDoubles) {
  EXPECT_EQ(TickText(2.5, 0.5, Lang::kEn), "2.5");
  EXPECT_EQ(TickText(2.5, 0.5, Lang::kFr), "2,5");
  EXPECT_EQ(TickText(40, 20, Lang::kEn), "40");
  EXPECT_EQ(TickText(0.02, 0.01, Lang::kEn), "0.02");
  // An axis from -1e308 to 1e308 (figures near the largest double): its span and so its step
  // overflow to infinity, and its ticks are whole numbers (UBSan found the negated INT_MIN this
  // was before).
  const double span = 1e308 - -1e308;
  EXPECT_EQ(NiceStep(span, 4), std::numeric_limits<double>::infinity());
  EXPECT_EQ(TickText(0, NiceStep(span, 4), Lang::kEn), "0");
  EXPECT_EQ(TickText(1, 1e-300, Lang::kEn), "1.000000000000000");
}

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + needle.size())) ++n;
  return n;
}

// ---------------------------------------------------------------------------------------------
// Text boxes as the charts estimate them
// ---------------------------------------------------------------------------------------------

struct Box {
  double x0, y0, x1, y1;
  std::string text;
};

std::string Unescape(std::string s) {
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}}) {
    for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
  }
  return s;
}

std::string Attr(const std::string& attrs, const std::string& name) {
  std::smatch m;
  if (std::regex_search(attrs, m, std::regex("(?:^| )" + name + "=\"([^\"]*)\""))) return m[1];
  return "";
}

// The box of every <text> of `svg`, from its x, y, anchor, size, weight and rotate(-90) transform:
// DejaVu Sans' ascent 0.93 and descent 0.24 of the size, the width of TextWidth.
std::vector<Box> TextBoxes(const std::string& svg) {
  std::vector<Box> out;
  static const std::regex text("<text([^>]*)>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator(); ++it) {
    const std::string attrs = (*it)[1];
    const std::string content = Unescape((*it)[2]);
    if (content.find_first_not_of(' ') == std::string::npos) continue;
    const double x = std::stod(Attr(attrs, "x")), y = std::stod(Attr(attrs, "y"));
    const std::string size_text = Attr(attrs, "font-size");
    const double size = size_text.empty() ? 12 : std::stod(size_text);
    const double w = TextWidth(content, size, Attr(attrs, "font-weight") == "bold");
    const std::string anchor = Attr(attrs, "text-anchor");
    const double x0 = anchor == "middle" ? x - w / 2 : anchor == "end" ? x - w : x;
    Box b{x0, y - 0.93 * size, x0 + w, y + 0.24 * size, content};
    std::smatch rot;
    const std::string transform = Attr(attrs, "transform");
    if (std::regex_match(transform, rot, std::regex("rotate\\(-90 ([0-9.]+) ([0-9.]+)\\)"))) {
      // (px, py) -> (cx + (py - cy), cy - (px - cx)).
      const double cx = std::stod(rot[1]), cy = std::stod(rot[2]);
      b = Box{cx + (b.y0 - cy), cy - (b.x1 - cx), cx + (b.y1 - cy), cy - (b.x0 - cx), content};
    } else {
      EXPECT_EQ(transform, "") << content;
    }
    out.push_back(b);
  }
  return out;
}

// Every text inside the viewBox (0 0 800 H) and no two texts on each other (by more than 1 unit
// both ways), as the browser test asks of the drawn boxes.
void ExpectTextsPlaced(const std::string& name, const std::string& svg) {
  SCOPED_TRACE(name);
  std::smatch vb;
  ASSERT_TRUE(std::regex_search(svg, vb, std::regex("viewBox=\"0 0 ([0-9.]+) ([0-9.]+)\"")));
  const double w = std::stod(vb[1]), h = std::stod(vb[2]);
  const std::vector<Box> boxes = TextBoxes(svg);
  for (size_t i = 0; i < boxes.size(); ++i) {
    const Box& b = boxes[i];
    EXPECT_TRUE(b.x0 >= 0 && b.y0 >= 0 && b.x1 <= w && b.y1 <= h)
        << "\"" << b.text << "\" at " << b.x0 << "," << b.y0 << " " << b.x1 << "," << b.y1 << " outside " << w << "x"
        << h;
    for (size_t j = 0; j < i; ++j) {
      const Box& o = boxes[j];
      const double ix = std::min(b.x1, o.x1) - std::max(b.x0, o.x0), iy = std::min(b.y1, o.y1) - std::max(b.y0, o.y0);
      EXPECT_FALSE(ix > 1 && iy > 1) << "\"" << b.text << "\" on \"" << o.text << "\" by " << ix << " x " << iy;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Primitives
// ---------------------------------------------------------------------------------------------

TEST(ChartTextTest, WidthsOfDejaVuSansWithAMargin) {
  // "0" is 0.636 em, "i" 0.278 em; bold 10 % wider; 6 % margin.
  EXPECT_NEAR(TextWidth("0", 12), 0.636 * 12 * 1.06, 1e-9);
  EXPECT_NEAR(TextWidth("ii", 10), 2 * 0.278 * 10 * 1.06, 1e-9);
  EXPECT_NEAR(TextWidth("0", 12, true), 0.636 * 12 * 1.1 * 1.06, 1e-9);
  EXPECT_NEAR(TextWidth("é"), 0.7 * 12 * 1.06, 1e-9);  // one code point, not two bytes
  EXPECT_EQ(TextWidth(""), 0);
}

TEST(ChartTextTest, WrapsAtSeparatorsAndInsideLongWords) {
  const double w = TextWidth("vm (a100) / llama");
  EXPECT_THAT(WrapText("vm (a100) / llama-server / gpu", w, 5), ElementsAre("vm (a100) /", "llama-server /", "gpu"));
  const std::vector<std::string> long_word = WrapText(std::string(60, 'W'), 100, 10);
  ASSERT_GT(long_word.size(), 1u);
  for (const std::string& l : long_word) EXPECT_LE(TextWidth(l), 100);
  EXPECT_EQ(Count(Join(long_word, ""), "W"), 60);
  // At most max_lines: the last ends with "…".
  const std::vector<std::string> cut = WrapText(std::string(60, 'W'), 100, 2);
  ASSERT_EQ(cut.size(), 2u);
  EXPECT_EQ(cut[1].substr(cut[1].size() - 3), "…");
  EXPECT_EQ(FitText("short", 100), "short");
  const std::string fitted = FitText("a rather long label that does not fit", 80);
  EXPECT_LE(TextWidth(fitted), 80);
  EXPECT_EQ(fitted.substr(fitted.size() - 3), "…");
}

TEST(ChartLayoutTest, SpreadLabelsKeepsOrderGapAndBounds) {
  // Three labels wanted at the same height: spread around it, 15 apart.
  std::vector<double> at = SpreadLabels({100, 100, 100}, 15, 0, 300);
  EXPECT_THAT(at, ElementsAre(85, 100, 115));
  // Far apart: unmoved.
  EXPECT_THAT(SpreadLabels({10, 200, 50}, 15, 0, 300), ElementsAre(10, 200, 50));
  // Against the bottom: pushed up, still within bounds.
  at = SpreadLabels({300, 299}, 15, 0, 300);
  EXPECT_EQ(at[0], 300);
  EXPECT_EQ(at[1], 285);
  // No room: from lo on.
  at = SpreadLabels({5, 5, 5}, 15, 0, 20);
  EXPECT_THAT(at, ElementsAre(0, 15, 30));
}

TEST(ChartLayoutTest, ValueScaleFromZeroInWholeSteps) {
  Scale s = ValueScale(28.2, 52.9);
  EXPECT_EQ(s.lo, 0);
  EXPECT_EQ(s.hi, 60);
  EXPECT_EQ(s.step, 20);
  EXPECT_EQ(s.Ticks(), 3);
  s = ValueScale(900, 1000);  // far from zero: the axis starts near the values
  EXPECT_EQ(s.lo, 900);
  EXPECT_EQ(s.hi, 1000);
  EXPECT_EQ(s.step, 20);
  s = ValueScale(0, 0);
  EXPECT_EQ(s.lo, 0);
  EXPECT_GT(s.hi, 0);
}

TEST(ChartLayoutTest, CoveredLinesAreCounted) {
  const Polyline a = {{0, 10}, {50, 10}, {100, 20}};
  const Polyline b = {{0, 11}, {50, 11}, {100, 80}};  // along a's first segment
  const Polyline c = {{0, 90}, {100, 90}};
  EXPECT_THAT(CoveredBy({a, b, c}), ElementsAre(1, 0, 0));
  EXPECT_THAT(CoveredBy({a, a, a}), ElementsAre(2, 1, 0));
  EXPECT_THAT(CoveredBy({{{5, 5}}, {{5, 6}}}), ElementsAre(1, 0));  // one point each
}

TEST(ChartLabelTest, OnlyTheDifferingPartsAndNoModeTwice) {
  CellKey a{"t", "vm (a100)", "llama-server", "gpu", "mode=gpu;n_predict=128", v1::PHASE_WARM};
  CellKey b{"t", "vm (m1pro)", "llama-server", "cpu", "mode=cpu;n_predict=128", v1::PHASE_COLD};
  KeyParts parts = DifferingParts({&a, &b});
  EXPECT_TRUE(parts.machine);
  EXPECT_FALSE(parts.backend);
  EXPECT_TRUE(parts.mode);
  EXPECT_THAT(parts.matrix_keys, ElementsAre("mode"));
  EXPECT_EQ(SettingLabel(a, parts), "vm (a100) · gpu");  // "mode=gpu" repeats the mode
  EXPECT_EQ(SharedLabel(a, parts), "llama-server · n_predict=128");
  CellKey c{"t", "vm (a100)", "llama-server", "gpu", "batch_size=16;mode=gpu", v1::PHASE_WARM};
  CellKey d{"t", "vm (a100)", "llama-server", "gpu", "batch_size=4;mode=gpu", v1::PHASE_WARM};
  parts = DifferingParts({&c, &d});
  EXPECT_EQ(SettingLabel(d, parts), "batch_size=4");
  EXPECT_EQ(SharedLabel(d, parts), "vm (a100) · llama-server · gpu");
  EXPECT_EQ(MatrixValue("batch_size=4;max_batch_size=8", "batch_size"), "4");
  EXPECT_EQ(MatrixValue("max_batch_size=8", "batch_size"), "");
}

// ---------------------------------------------------------------------------------------------
// Records and model
// ---------------------------------------------------------------------------------------------

v1::RunRecord MakeRecord(const std::string& id, const std::string& machine, const std::string& mode, v1::Phase phase,
                  uint32_t call, double value, const std::string& task = "llama-chat") {
  v1::RunRecord r;
  r.set_run_id(id);
  r.set_task(task);
  r.set_agent_id(machine);
  r.set_backend("llama-server");
  r.set_mode(mode);
  r.set_phase(phase);
  r.set_call_index(call);
  r.mutable_start_time()->set_seconds(1772359200 + call);
  r.mutable_wall_duration()->set_seconds(2);
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
  auto* m = r.add_metrics();
  m->set_name("tokens_per_second");
  m->set_value(value);
  m->set_unit("tokens/s");
  m->set_headline(1);
  m->set_better(v1::BETTER_HIGHER);
  m->set_label("generation tokens/s");
  return r;
}

// gpu-box (a100): gpu warm 52.9, 30.0, 28.2 and 28.2 (two equal values); mac (m1pro): gpu warm
// 31.5 x 2 and cpu measured cold only, 9.5 and 9.7.
std::vector<v1::RunRecord> ClassRecords() {
  std::vector<v1::RunRecord> out;
  const double a100[] = {52.9, 30.0, 28.2, 28.2};
  for (int i = 0; i < 4; ++i) out.push_back(MakeRecord("a" + std::to_string(i), "gpu-box", "gpu", v1::PHASE_WARM, i + 1, a100[i]));
  out.push_back(MakeRecord("m1", "mac", "gpu", v1::PHASE_WARM, 1, 31.5));
  out.push_back(MakeRecord("m2", "mac", "gpu", v1::PHASE_WARM, 2, 31.5));
  out.push_back(MakeRecord("p1", "mac", "cpu", v1::PHASE_COLD, 1, 9.5));
  out.push_back(MakeRecord("p2", "mac", "cpu", v1::PHASE_COLD, 2, 9.7));
  return out;
}

struct Built {
  GuideContext context;
  Analysis analysis;
  GuideModel model;
};

std::unique_ptr<Built> Build(const std::vector<v1::RunRecord>& records, bool simulated = false) {
  auto b = std::make_unique<Built>();
  b->context.class_of_machine = {{"gpu-box", "a100"}, {"mac", "m1pro"}};
  b->context.targets = DefaultTargets();
  b->analysis = Analyze(records);
  b->analysis.simulated = simulated;
  DeriveVerdicts(b->context, &b->analysis, &b->model);
  return b;
}

// ---------------------------------------------------------------------------------------------
// Class comparison
// ---------------------------------------------------------------------------------------------

TEST(ClassChartTest, TargetsInTheFiguresUnit) {
  auto b = Build(ClassRecords());
  // llama*: interactive min 10 tokens/s, batch min 50 tokens/s (default-targets.yaml).
  std::vector<ChartTarget> t = ChartTargets(b->analysis, b->model, "llama-chat");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].use, "interactive");
  EXPECT_EQ(t[0].value, 10);
  EXPECT_TRUE(t[0].at_least);
  EXPECT_FALSE(t[0].inverted);
  EXPECT_THAT(t[0].source.source_id, ::testing::StartsWith("S"));
  // A wall-seconds figure of an image task: max_seconds_per_item as it is.
  std::vector<v1::RunRecord> images;
  for (int i = 0; i < 2; ++i) {
    v1::RunRecord r = MakeRecord("s" + std::to_string(i), "gpu-box", "gpu", v1::PHASE_WARM, i + 1, 0, "sd15-txt2img-512");
    r.clear_metrics();
    images.push_back(r);
  }
  auto s = Build(images);
  t = ChartTargets(s->analysis, s->model, "sd15-txt2img-512");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].use, "iteration");
  EXPECT_EQ(t[0].value, 10);
  EXPECT_FALSE(t[0].at_least);
  EXPECT_FALSE(t[0].inverted);
  EXPECT_TRUE(ChartTargets(s->analysis, s->model, "nothing").empty());
}

TEST(ClassChartTest, OneRowPerJudgedSettingEveryRunADotTargetsAsLines) {
  auto b = Build(ClassRecords(), true);
  EXPECT_EQ(ClassChartFileName("llama-chat", Lang::kFr), "chart-llama-chat-classes.fr.svg");
  EXPECT_EQ(RenderClassChart(b->analysis, b->model, "nothing", Lang::kEn), "");
  for (Lang lang : {Lang::kEn, Lang::kFr}) {
    const std::string svg = RenderClassChart(b->analysis, b->model, "llama-chat", lang);
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 800.0 ", 0), 0u) << svg;
    EXPECT_THAT(svg, HasSubstr(lang == Lang::kEn
                                   ? "<title id=\"classes-title\">Main figure by machine class — llama-chat (SIMULATED)"
                                   : "<title id=\"classes-title\">Chiffre principal par classe de machine — llama-chat "
                                     "(SIMULÉ)"));
    // a100: one setting, one row named by its class and setting; m1pro: a heading and two rows.
    EXPECT_THAT(svg, HasSubstr(">a100 · gpu</text>"));
    EXPECT_THAT(svg, HasSubstr("font-weight=\"bold\">m1pro</text>"));
    EXPECT_THAT(svg, HasSubstr(lang == Lang::kEn ? ">cpu (cold only)</text>" : ">cpu (à froid seulement)</text>"));
    EXPECT_EQ(Count(svg, "<g class=\"setting\""), 3);
    // Every run a mark, the equal ones apart; cold-only runs hollow squares.
    EXPECT_EQ(Count(svg, "<circle class=\"run\""), 6);
    EXPECT_EQ(Count(svg, "<rect class=\"run\""), 2);
    std::regex dot("<circle class=\"run\" stroke-width=\"1.5\" cx=\"([0-9.]+)\" cy=\"([0-9.]+)\"");
    std::vector<std::pair<std::string, std::string>> xy;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), dot); it != std::sregex_iterator(); ++it) {
      xy.emplace_back((*it)[1], (*it)[2]);
    }
    ASSERT_EQ(xy.size(), 6u);
    EXPECT_EQ(xy[2].first, xy[3].first);    // 28.2 twice: same x ...
    EXPECT_NE(xy[2].second, xy[3].second);  // ... not the same y
    // Each dot its value and source; the verdict's figure; the targets named by their use.
    const Cell& a100 = b->analysis.cells.at(0);
    ASSERT_EQ(a100.key.machine, "gpu-box");
    EXPECT_THAT(svg, HasSubstr((lang == Lang::kEn ? "<title>run a0: 52.9 [" : "<title>exécution a0: 52,9 [") +
                               a100.runs[0].figure.source_id + "]</title>"));
    EXPECT_THAT(svg, HasSubstr(lang == Lang::kEn ? "<title>worst run: 28.2 [" : "<title>moins bonne exécution: 28,2 ["));
    EXPECT_EQ(Count(svg, "<g class=\"target\">"), 2);
    EXPECT_THAT(svg, HasSubstr(lang == Lang::kEn ? ">interactive ≥ 10.0</text>" : ">interactive ≥ 10,0</text>"));
    EXPECT_THAT(svg, HasSubstr(">batch ≥ 50"));
    EXPECT_EQ(Count(svg, "<g"), Count(svg, "</g>"));
    EXPECT_EQ(Count(svg, "<title"), Count(svg, "</title>"));
    ExpectTextsPlaced("classes", svg);
  }
}

// ---------------------------------------------------------------------------------------------
// Sweeps
// ---------------------------------------------------------------------------------------------

TEST(SweepChartTest, NoSweepNoChart) {
  auto b = Build(ClassRecords());
  EXPECT_TRUE(SweepAxes(b->analysis, "llama-chat").empty());
  EXPECT_EQ(RenderSweepChart(b->analysis, "llama-chat", Lang::kEn), "");
  // A matrix axis that is not a number is no sweep either.
  std::vector<v1::RunRecord> records = ClassRecords();
  for (size_t i = 0; i < records.size(); ++i) (*records[i].mutable_matrix())["model"] = i % 2 == 0 ? "a" : "b";
  EXPECT_TRUE(SweepAxes(Analyze(records), "llama-chat").empty());
}

TEST(SweepChartTest, FigureByAxisValueAndLatencyAgainstFigure) {
  const std::vector<v1::RunRecord> records = testing::GuideSweepRecords();
  Analysis a = Analyze(records, [](const v1::RunRecord& r) { return r.agent_id(); });
  EXPECT_THAT(SweepAxes(a, "llama-sweep-openai"), ElementsAre("concurrency"));
  EXPECT_EQ(SweepChartFileName("llama-sweep-openai", Lang::kEn), "chart-llama-sweep-openai-sweep.en.svg");
  for (Lang lang : {Lang::kEn, Lang::kFr}) {
    const std::string svg = RenderSweepChart(a, "llama-sweep-openai", lang);
    ASSERT_FALSE(svg.empty());
    EXPECT_THAT(svg, HasSubstr(lang == Lang::kEn ? "<title id=\"sweep-title\">Sweep of concurrency — llama-sweep-openai"
                                                 : "<title id=\"sweep-title\">Balayage de concurrency — "));
    // Two panels of two curves: the figure by concurrency, the TTFT against the figure.
    EXPECT_EQ(Count(svg, "<g class=\"curve\""), 4);
    EXPECT_THAT(svg, HasSubstr(lang == Lang::kEn ? ">output tokens/s by concurrency</text>"
                                                 : ">output tokens/s selon concurrency</text>"));
    EXPECT_THAT(svg, HasSubstr(lang == Lang::kEn ? ">TTFT p99 (s) against output tokens/s</text>"
                                                 : ">TTFT p99 (s) selon output tokens/s</text>"));
    // Every run a dot (5 x 4 + 3 x 4), each value swept a tick, the curves named at their ends.
    EXPECT_EQ(Count(svg, "class=\"run\""), 32);
    for (const char* tick : {">1</text>", ">4</text>", ">8</text>", ">16</text>"}) EXPECT_THAT(svg, HasSubstr(tick));
    EXPECT_THAT(svg, HasSubstr(">sweep-a100</text>"));
    EXPECT_THAT(svg, HasSubstr(">sweep-l4</text>"));
    // The a100's medians cite their sources; the l4's three runs are medians of runs and ranges.
    EXPECT_THAT(svg, HasSubstr(lang == Lang::kEn ? "concurrency=4: median " : "concurrency=4: médiane "));
    EXPECT_THAT(svg, HasSubstr(lang == Lang::kEn ? ": median of 3 runs: " : ": médiane de 3 exécutions: "));
    EXPECT_THAT(svg, HasSubstr(lang == Lang::kEn ? "TTFT p99 range " : "TTFT p99 étendue "));
    EXPECT_EQ(Count(svg, "<g"), Count(svg, "</g>"));
    EXPECT_EQ(Count(svg, "<title"), Count(svg, "</title>"));
    ExpectTextsPlaced("sweep", svg);
  }
}

// ---------------------------------------------------------------------------------------------
// Figure by call index, duration, memory
// ---------------------------------------------------------------------------------------------

TEST(CallIndexChartTest, OneNamedLinePerSettingPhaseByMarker) {
  std::vector<v1::RunRecord> records = ClassRecords();
  records.push_back(MakeRecord("a-cold", "gpu-box", "gpu", v1::PHASE_COLD, 1, 20));
  auto b = Build(records);
  const std::string svg = RenderCallIndexChart(b->analysis, "llama-chat", Lang::kEn);
  // gpu-box gpu (cold and warm runs on one line), mac gpu, mac cpu.
  EXPECT_EQ(Count(svg, "<g class=\"cell\""), 3);
  EXPECT_EQ(Count(svg, "<polyline"), 3);
  EXPECT_EQ(Count(svg, "<rect class=\"run\""), 3);  // the cold runs
  EXPECT_THAT(svg, HasSubstr(">gpu-box · gpu</text>"));
  EXPECT_THAT(svg, HasSubstr(">mac · cpu</text>"));
  EXPECT_THAT(svg, HasSubstr(">All: llama-server</text>"));
  EXPECT_THAT(svg, Not(HasSubstr("cold (cold)")));
  EXPECT_THAT(svg, Not(HasSubstr("(warm)")));
  // Distinct dashes: the second line dashed.
  EXPECT_THAT(svg, HasSubstr("stroke-dasharray=\"7 3\""));
  ExpectTextsPlaced("call index", svg);
}

TEST(CallIndexChartTest, ASettingWithoutAcceptedRunsIsNotNamedAndAllFailedStillDraws) {
  std::vector<v1::RunRecord> records = ClassRecords();
  v1::RunRecord failed = MakeRecord("f1", "gpu-box", "gpu-short-memory", v1::PHASE_WARM, 1, 0);
  failed.mutable_status()->set_code(v1::RunStatus::CODE_FAILED);
  records.push_back(failed);
  auto b = Build(records);
  const std::string svg = RenderCallIndexChart(b->analysis, "llama-chat", Lang::kEn);
  EXPECT_THAT(svg, Not(HasSubstr("gpu-short-memory")));
  EXPECT_EQ(Count(svg, "<polyline"), 3);
  // A task whose every run failed: the chart's frame, no line, no crash.
  auto only = Build({failed});
  const std::string empty = RenderCallIndexChart(only->analysis, "llama-chat", Lang::kEn);
  EXPECT_THAT(empty, HasSubstr("<svg"));
  EXPECT_EQ(Count(empty, "<polyline"), 0);
}

TEST(CallIndexChartTest, ACoveredLineIsDrawnWider) {
  std::vector<v1::RunRecord> records;
  for (uint32_t c = 1; c <= 3; ++c) {
    records.push_back(MakeRecord("x" + std::to_string(c), "gpu-box", "cpu", v1::PHASE_WARM, c, 9.5));
    records.push_back(MakeRecord("y" + std::to_string(c), "mac", "cpu", v1::PHASE_WARM, c, 9.5));
  }
  auto b = Build(records);
  const std::string svg = RenderCallIndexChart(b->analysis, "llama-chat", Lang::kEn);
  EXPECT_THAT(svg, HasSubstr("<polyline fill=\"none\" stroke-width=\"5.0\" points="));
  EXPECT_THAT(svg, HasSubstr("<polyline fill=\"none\" stroke-width=\"2.0\" stroke-dasharray=\"7 3\" points="));
  EXPECT_THAT(svg, HasSubstr("r=\"6.0\""));  // the covered line's markers show as rings
  // Both names at the end, one above the other.
  const std::vector<Box> boxes = TextBoxes(svg);
  std::vector<Box> names;
  for (const Box& box : boxes) {
    if (box.text == "gpu-box" || box.text == "mac") names.push_back(box);
  }
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0].x0, names[1].x0);
  EXPECT_GE(std::abs(names[0].y0 - names[1].y0), 14.9);
  ExpectTextsPlaced("call index", svg);
}

TEST(DurationChartNamesTest, ColumnsNamedOnTheAxis) {
  auto b = Build(ClassRecords());
  const std::string svg = RenderDurationChart(b->analysis, "llama-chat", Lang::kEn);
  EXPECT_EQ(Count(svg, "<g class=\"column-name\""), 3);
  EXPECT_THAT(svg, HasSubstr("text-anchor=\"middle\">gpu-box</text>"));
  EXPECT_THAT(svg, HasSubstr("text-anchor=\"middle\">cold</text>"));
  EXPECT_THAT(svg, Not(HasSubstr(">1 — ")));
  ExpectTextsPlaced("duration", svg);
  // Many columns: names turned upright, still inside.
  std::vector<v1::RunRecord> many;
  for (int i = 0; i < 16; ++i) {
    v1::RunRecord r = MakeRecord("r" + std::to_string(i), "machine-with-a-long-name-" + std::to_string(i), "gpu",
                          v1::PHASE_WARM, 1, 10 + i);
    many.push_back(r);
  }
  const std::string upright = RenderDurationChart(Analyze(many), "llama-chat", Lang::kFr);
  EXPECT_EQ(Count(upright, "transform=\"rotate(-90 "), 17);  // 16 names and the axis title
  ExpectTextsPlaced("duration upright", upright);
}

TEST(MemoryChartByClassTest, ClassesAndNotMeasured) {
  std::vector<v1::RunRecord> records = ClassRecords();
  for (v1::RunRecord& r : records) {
    auto* m = r.add_memory();
    m->set_kind(v1::MEMORY_KIND_PROCESS_PEAK_RSS);
    m->set_scope("llama-server");
    m->set_bytes(r.mode() == "gpu" ? 2ull << 30 : 3ull << 30);
  }
  auto b = Build(records);
  for (Lang lang : {Lang::kEn, Lang::kFr}) {
    const std::string svg = RenderMemoryChart(b->analysis, b->model, "llama-chat", lang);
    EXPECT_THAT(svg, HasSubstr(lang == Lang::kEn ? ">Not measured.</text>" : ">Non mesuré.</text>"));
    EXPECT_THAT(svg, HasSubstr("font-weight=\"bold\">a100</text>"));
    EXPECT_THAT(svg, HasSubstr("font-weight=\"bold\">m1pro</text>"));
    // One bar per setting and kind: the phases of a setting give their largest figure.
    EXPECT_EQ(Count(svg, "<g class=\"bar\""), 3);
    ExpectTextsPlaced("memory", svg);
  }
}

// ---------------------------------------------------------------------------------------------
// Every chart of a guide: texts inside and apart
// ---------------------------------------------------------------------------------------------

TEST(GuideChartsTest, EveryTextInsideItsChartAndClearOfTheOthers) {
  absl::StatusOr<ReadResult> read =
      ReadMeasurementFiles(Env::Default(), testing::GoldenGuideInputsUnder(BENCHFLEET_SOURCE_DIR));
  ASSERT_TRUE(read.ok()) << read.status();
  GuideInput input;
  input.records = read->records;
  for (v1::RunRecord& r : testing::GuideSweepRecords()) input.records.push_back(std::move(r));
  input.conditions = read->conditions;
  const std::map<std::string, std::string> files = BuildGuideFiles(input, {Lang::kFr, Lang::kEn});
  int charts = 0;
  std::map<std::string, int> kinds;
  for (const auto& [name, content] : files) {
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".svg") != 0) continue;
    ++charts;
    for (const char* kind : {"-classes.", "-sweep.", "-memory.", "-duration."}) kinds[kind] += Count(name, kind);
    ExpectTextsPlaced(name, content);
  }
  EXPECT_GT(charts, 30);
  EXPECT_EQ(kinds["-sweep."], 2);  // the sweep's task, fr and en
  EXPECT_GE(kinds["-classes."], 14);
}

}  // namespace
}  // namespace benchfleet::synthesis
