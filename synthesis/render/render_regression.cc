// "Regression checks": the coordinator's newest verdict of each machine, task and setting, one
// line each, the answer first (the kind), then the figure, the test and the runs compared. The
// verdict's own numbers (medians, change, p-value, level, threshold) are the coordinator's, quoted
// in code spans as record text; the run counts are "count" sources naming the runs. Built as spans
// (spans.h): the coordinator's text (test name, label, unit, run ids) is never parsed.
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "synthesis/render/inline_text.h"
#include "synthesis/render/messages.h"
#include "synthesis/render/sections.h"
#include "synthesis/render/spans.h"

namespace benchfleet::synthesis {
namespace {

using Kind = v1::RegressionVerdict::Kind;

std::string_view KindWording(Kind kind, const Messages& m) {
  switch (kind) {
    case v1::RegressionVerdict::KIND_REGRESSION: return m.reg_regression;
    case v1::RegressionVerdict::KIND_IMPROVEMENT: return m.reg_improvement;
    case v1::RegressionVerdict::KIND_NOT_SIGNIFICANT: return m.reg_not_significant;
    case v1::RegressionVerdict::KIND_SAMPLE_TOO_SMALL: return m.reg_sample_too_small;
    case v1::RegressionVerdict::KIND_BASELINE_TOO_SMALL: return m.reg_baseline_too_small;
    default: return m.reg_no_change;
  }
}

// A parameter of the test as the coordinator prints it (%.3g: "0.0357", "0.05", "10"), with the
// language's decimal separator.
std::string Short(double v, Lang lang) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  std::string s = buf;
  if (lang == Lang::kFr) {
    for (char& c : s) c = c == '.' ? ',' : c;
  }
  return s;
}

std::string Percent(std::string number, Lang lang) { return number + (lang == Lang::kFr ? " %" : "%"); }

// The coordinator names its test in English (coordinator/scheduler/regression.cc): its known
// words in French, anything else as is.
Spans TestName(const std::string& test, Lang lang) {
  if (lang != Lang::kFr) return CellSpans(test);
  std::string out = test;
  for (const auto& [en, fr] : {std::pair<std::string_view, std::string_view>{"two-sided", "bilatéral"},
                               std::pair<std::string_view, std::string_view>{"normal approximation",
                                                                             "approximation normale"}}) {
    if (size_t at = out.find(en); at != std::string::npos) out.replace(at, en.size(), fr);
  }
  return CellSpans(out);
}

// The key figure with its unit: a verdict stored before labels names its metric; the wall time
// the check falls back on (regression.cc) is the charts' "Durée mesurée" in French.
std::string FigureText(const v1::RegressionVerdict& v, Lang lang) {
  std::string label = v.label().empty() ? v.metric() : v.label();
  if (lang == Lang::kFr && label == "wall time") label = "durée mesurée";
  return FigureName(label, v.unit(), lang);
}

ListItem CheckLine(const RegressionCheck& c, Lang lang, const Messages& m) {
  const v1::RegressionVerdict& v = c.verdict;
  Spans where = CodeSpans(c.machine) + " · " + CodeSpans(c.task);
  if (!v.mode().empty()) where += " · " + CodeSpans(v.mode());
  where += " · " + Wording(PhaseWording(m, v.phase()));
  if (!c.matrix.empty()) where += " · " + CodeSpans(c.matrix);
  std::vector<Spans> parts = {{BoldSpan(Wording(KindWording(v.kind(), m)))}, where};
  const std::string figure = FigureText(v, lang);
  const bool tested = v.kind() != v1::RegressionVerdict::KIND_BASELINE_TOO_SMALL && !v.test().empty();
  if (v.baseline_run_ids_size() > 0) {
    std::string change = FormatNumber(v.sample_change() * 100, lang);
    if (v.sample_change() > 0) change = "+" + change;
    parts.push_back(FillSpans(m.reg_medians,
                              {{"figure", CellSpans(figure)},
                               {"sample", CodeSpans(FormatNumber(v.sample_median(), lang))},
                               {"baseline", CodeSpans(FormatNumber(v.baseline_median(), lang))},
                               {"change", CodeSpans(Percent(change, lang))},
                               {"threshold", CodeSpans(Percent(Short(v.threshold() * 100, lang), lang))}}));
  } else {
    parts.push_back(CellSpans(figure));
  }
  if (tested) {
    Spans test = FillSpans(m.reg_test, {{"test", TestName(v.test(), lang)},
                                        {"p", CodeSpans("p = " + Short(v.p_value(), lang) +
                                                        (v.p_value() < v.level() ? " < " : " ≥ ") +
                                                        Short(v.level(), lang))}});
    if (v.kind() == v1::RegressionVerdict::KIND_SAMPLE_TOO_SMALL) {
      test += " " + (v.sample_runs_needed() > 0
                         ? FillSpans(m.reg_needs, {{"needed", CodeSpans(std::to_string(v.sample_runs_needed()))}})
                         : Wording(m.reg_never));
    }
    parts.push_back(test);
  } else if (v.kind() == v1::RegressionVerdict::KIND_BASELINE_TOO_SMALL) {
    parts.push_back(FillSpans(m.reg_no_test, {{"needed", CodeSpans(std::to_string(v.baseline_runs_needed()))}}));
  }
  // The baseline's runs by the first 8 characters of their ids, as "What to watch" names runs;
  // every id is in the count's source.
  constexpr int kShown = 6;
  std::vector<Spans> runs;
  for (int i = 0; i < v.baseline_run_ids_size() && i < kShown; ++i) {
    runs.push_back(CodeSpans(v.baseline_run_ids(i).substr(0, 8)));
  }
  if (v.baseline_run_ids_size() > kShown) runs.push_back(TextSpans("…"));
  parts.push_back(FillSpans(m.reg_runs, {{"sample", RefCountSpans(c.sample_runs)},
                                         {"baseline", RefCountSpans(c.baseline_runs)},
                                         {"runs", runs.empty() ? Wording(m.none_value) : JoinSpans(runs, ", ")}}));
  return ListItem{JoinSpans(parts, " — "), {}};
}

bool Found(Kind kind) {
  return kind == v1::RegressionVerdict::KIND_REGRESSION || kind == v1::RegressionVerdict::KIND_IMPROVEMENT;
}

}  // namespace

// What was found, one line each; then the other kinds counted (each count a source naming its
// runs), with a line each only for the changes beyond the threshold that were not significant:
// the checks without a test or without a change (a first series has only "baseline too small",
// one per setting: 35 lines in the demo) are counts, not lines.
void RenderRegressionSection(const GuideModel& model, Lang lang, Document& doc) {
  if (model.regression_checks.empty()) return;
  const Messages& m = MessagesOf(lang);
  doc.Heading(2, Wording(m.reg_section));
  doc.Paragraph(Wording(m.reg_intro));
  std::vector<ListItem> found, near;
  for (const RegressionCheck& c : model.regression_checks) {
    if (Found(c.verdict.kind())) found.push_back(CheckLine(c, lang, m));
    if (c.verdict.kind() == v1::RegressionVerdict::KIND_NOT_SIGNIFICANT) near.push_back(CheckLine(c, lang, m));
  }
  if (found.empty()) {
    doc.Paragraph(Wording(m.reg_none_found));
  } else {
    doc.List(std::move(found));
  }
  std::vector<Spans> counts;
  for (const RegressionCount& rc : model.regression_counts) {
    if (!Found(rc.kind)) counts.push_back(Wording(KindWording(rc.kind, m)) + " " + RefCountSpans(rc.count));
  }
  if (counts.empty()) return;
  doc.Paragraph(Spans{BoldSpan(Wording(m.reg_others))} + (lang == Lang::kFr ? " : " : ": ") +
                JoinSpans(counts, " · "));
  doc.List(std::move(near));
}

}  // namespace benchfleet::synthesis
