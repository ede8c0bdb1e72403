#include "synthesis/render/render.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "synthesis/render/document.h"
#include "synthesis/render/html.h"
#include "synthesis/render/messages.h"
#include "synthesis/render/messages_charts.h"
#include "synthesis/render/messages_model.h"
#include "synthesis/render/run_bins.h"
#include "synthesis/render/chart_axes.h"
#include "synthesis/render/inline_text.h"
#include "synthesis/render/sections.h"
#include "synthesis/render/spans.h"
#include "synthesis/render/spread_text.h"

namespace benchfleet::synthesis {
namespace {

std::string KeyLabel(const CellKey& key, const Messages& m) {
  std::vector<std::string> parts;
  for (const std::string* part : {&key.machine, &key.backend, &key.mode, &key.matrix}) {
    if (!part->empty()) parts.push_back(*part);
  }
  parts.emplace_back(PhaseWording(m, key.phase));
  return Join(parts, " / ");
}

bool HasMemory(const Analysis& a, const std::string& task) {
  return std::any_of(a.cells.begin(), a.cells.end(),
                     [&task](const Cell& c) { return c.key.task == task && !c.memory.empty(); });
}

Spans Title(const Analysis& a, const Messages& m) {
  Spans t = Wording(m.title);
  if (a.simulated) t += " (" + Wording(m.simulated) + ")";
  return t;
}

// `model`: when given (the whole guide), the class comparison and sweep charts lead the task's
// charts where the task has them.
void RenderTable(const Analysis& a, const std::string& task, Lang lang, const Messages& m, Document& doc,
                 const GuideModel* model = nullptr) {
  doc.Heading(3, {TextSpan(std::string(m.task) + " "), CodeSpan(task)});
  if (model != nullptr) {
    const ChartMessages& cm = ChartMessagesOf(lang);
    const bool judged = std::any_of(model->verdicts.begin(), model->verdicts.end(),
                                    [&](const TaskVerdicts& tv) { return tv.task == task && !tv.cells.empty(); });
    if (judged) {
      doc.Figure(ClassChartFileName(task, lang), std::string(cm.class_title) + " — " + task);
    }
    if (std::vector<std::string> axes = SweepAxes(a, task); !axes.empty()) {
      doc.Figure(SweepChartFileName(task, lang), Fill(cm.sweep_title, {{"axis", Join(axes, ", ")}}) + " — " + task);
    }
  }
  if (model == nullptr || HasCallIndexSpread(a, task)) {
    doc.Figure(ChartFileName(task, lang), std::string(m.chart_alt) + " — " + task);
  }
  doc.Figure(DurationChartFileName(task, lang), std::string(m.duration_title) + " — " + task);
  if (HasMemory(a, task)) {
    doc.Figure(MemoryChartFileName(task, lang), std::string(m.memory_title) + " — " + task);
  }
  std::vector<std::vector<Spans>> rows;
  for (const Cell& c : a.cells) {
    if (c.key.task != task) continue;
    Spans values;
    if (c.distribution_only && c.min && c.q1 && c.median && c.q3 && c.max) {
      values = Wording(m.distribution) + ": " + Wording(m.dist_min) + " " + RefSpans(*c.min, lang) + ", " +
               Wording(m.dist_q1) + " " + RefSpans(*c.q1, lang) + ", " + Wording(m.dist_median) + " " +
               RefSpans(*c.median, lang) + ", " + Wording(m.dist_q3) + " " + RefSpans(*c.q3, lang) + ", " +
               Wording(m.dist_max) + " " + RefSpans(*c.max, lang);
    } else {
      std::vector<Spans> list;
      for (const RunFigure& rf : c.runs) list.push_back(RefSpans(rf.figure, lang));
      values = list.empty() ? Wording(m.none_value) : JoinSpans(list, ", ");
    }
    // One run has a value, not a range (its value is already listed).
    Spans range = c.min && c.max && c.runs.size() > 1 ? RefSpans(*c.min, lang) + " – " + RefSpans(*c.max, lang)
                                                       : Wording(m.none_value);
    Spans median = c.median ? RefSpans(*c.median, lang) + SpreadText(c.spread, lang) : Wording(m.none_value);
    std::string metric = FigureName(c.label, c.unit, lang);
    auto ident = [&m](const std::string& text) { return text.empty() ? Wording(m.none_value) : CodeSpans(text); };
    rows.push_back({ident(c.key.machine), ident(c.key.backend), ident(c.key.mode), ident(c.key.matrix),
                    Wording(PhaseWording(m, c.key.phase)), CodeSpans(metric), values, range, median,
                    c.excluded_count ? RefCountSpans(*c.excluded_count) : Wording(m.none_value)});
  }
  doc.Table({Wording(m.col_machine), Wording(m.col_backend), Wording(m.col_mode), Wording(m.col_matrix),
             Wording(m.col_phase), Wording(m.col_metric), Wording(m.col_runs), Wording(m.col_range),
             Wording(m.col_median), Wording(m.col_excluded)},
            std::move(rows));
  // Further headline figures per cell, under the table, by the backend's rank.
  std::vector<ListItem> further;
  for (const Cell& c : a.cells) {
    if (c.key.task != task || c.further.empty()) continue;
    ListItem& cell = further.emplace_back(ListItem{CodeSpans(KeyLabel(c.key, m)), {}});
    for (const FurtherFigure& f : c.further) {
      // In ms when the analysis gives it (seconds under one).
      const bool ms = f.median_ms || f.min_ms;
      const std::optional<Figure>& median = ms ? f.median_ms : f.median;
      const std::optional<Figure>& min = ms ? f.min_ms : f.min;
      const std::optional<Figure>& max = ms ? f.max_ms : f.max;
      Spans value = median       ? Wording(m.dist_median) + " " + RefSpans(*median, lang) +
                                     SpreadText(ms ? f.spread_ms : f.spread, lang)
                    : min && max ? RefSpans(*min, lang) + " – " + RefSpans(*max, lang)
                    : min        ? RefSpans(*min, lang)
                                 : Wording(m.none_value);
      cell.items.push_back(ListItem{
          CodeSpans(FigureName(f.label, ms ? "ms" : f.unit, lang)) + (lang == Lang::kFr ? " : " : ": ") + value, {}});
    }
  }
  if (!further.empty()) {
    doc.Paragraph(Spans{BoldSpan(Wording(m.further_heading))} + " (" + Wording(m.further_note) + ")");
    doc.List(std::move(further));
  }
  // Memory per cell and kind, under the table: the kind's own wording, its scope and the record's
  // measuring method verbatim; the figure in MiB or GiB (MemoryEntry::human, a formula source the
  // number test recomputes).
  std::vector<ListItem> memory;
  for (const Cell& c : a.cells) {
    if (c.key.task != task || c.memory.empty()) continue;
    ListItem& cell = memory.emplace_back(ListItem{CodeSpans(KeyLabel(c.key, m)), {}});
    for (const MemoryEntry& e : c.memory) {
      cell.items.push_back(ListItem{Wording(MemoryKindWording(m, e.kind)) +
                                        (e.scope.empty() ? Spans() : ", " + CodeSpans(e.scope)) +
                                        (lang == Lang::kFr ? " : " : ": ") + RefSpans(e.human, lang) + " " +
                                        LocalWords(e.human.unit, lang) +
                                        (e.source.empty() ? Spans() : " — " + CodeSpans(e.source)),
                                    {}});
    }
  }
  if (!memory.empty()) {
    doc.Paragraph(Spans{BoldSpan(Wording(m.mem_heading))} + " (" + Wording(m.mem_note) + ")");
    doc.List(std::move(memory));
  }
}

// Throughput drops are listed apart by what their records point to: the device throttling, a busy
// host, or nothing (unexplained).
enum class TrapKind { kCache, kDropThrottled, kDropContended, kDrop, kFailed, kOther };

TrapKind KindOf(const Trap& t) {
  if (t.code == "CACHE_HIT" || t.code == "PROMPT_CACHE_USED") return TrapKind::kCache;
  if (t.code == "THROUGHPUT_DROP") {
    return t.cause == "THROTTLED"   ? TrapKind::kDropThrottled
           : t.cause == "CONTENDED" ? TrapKind::kDropContended
                                    : TrapKind::kDrop;
  }
  if (t.code == "FAILED") return TrapKind::kFailed;
  return TrapKind::kOther;
}

void RenderTraps(const Analysis& a, const Messages& m, Document& doc) {
  doc.Heading(2, Wording(m.traps_section));
  const std::pair<TrapKind, std::string_view> sections[] = {{TrapKind::kCache, m.cache_hits},
                                                            {TrapKind::kDropThrottled, m.drops_throttled},
                                                            {TrapKind::kDropContended, m.drops_contended},
                                                            {TrapKind::kDrop, m.throughput_drops},
                                                            {TrapKind::kFailed, m.failed_runs},
                                                            {TrapKind::kOther, m.other_flags}};
  for (const auto& [kind, heading] : sections) {
    std::vector<ListItem> lines;
    for (const Trap& t : a.traps) {
      if (KindOf(t) != kind) continue;
      lines.push_back(ListItem{CodeSpans(t.key.task) + " — " + CodeSpans(KeyLabel(t.key, m)) + " — " +
                                   Wording(m.run) + " " + CodeSpans(t.run_id) + " (" + Wording(m.call) + " " +
                                   CodeSpans(std::to_string(t.call_index)) + ") — " + CodeSpans(t.code) +
                                   (t.reason.empty() ? Spans() : ": " + CodeSpans(t.reason)),
                               {}});
    }
    if ((kind == TrapKind::kOther || kind == TrapKind::kDropContended) && lines.empty()) continue;
    doc.Heading(3, Wording(heading));
    if (lines.empty()) {
      doc.Paragraph(Wording(m.no_trap));
    } else {
      doc.List(std::move(lines));
    }
  }
}




}  // namespace

std::string_view LangCode(Lang lang) { return lang == Lang::kFr ? "fr" : "en"; }

std::optional<Lang> ParseLang(std::string_view code) {
  if (code == "fr") return Lang::kFr;
  if (code == "en") return Lang::kEn;
  return std::nullopt;
}

std::string FormatNumber(double v, Lang lang) {
  if (!std::isfinite(v)) return std::isnan(v) ? "NaN" : (v > 0 ? "∞" : "-∞");
  constexpr int kSignificant = 3;
  int decimals = 0;
  if (v != 0) {
    int exponent = static_cast<int>(std::floor(std::log10(std::fabs(v))));
    decimals = std::max(0, kSignificant - 1 - exponent);
    std::string s = Fixed(v, decimals);
    // Rounding may carry into a new digit (99.96 -> 100.0): drop one decimal then.
    double rounded = std::fabs(std::stod(s));
    if (decimals > 0 && rounded != 0 && static_cast<int>(std::floor(std::log10(rounded))) > exponent) --decimals;
  } else {
    decimals = kSignificant - 1;
  }
  std::string s = Fixed(v, decimals);
  if (lang == Lang::kFr) std::replace(s.begin(), s.end(), '.', ',');
  return s;
}

std::string TaskSlug(const std::string& task) {
  std::string out;
  for (unsigned char c : task) {
    if (c < 0x80 && std::isalnum(c)) {
      out += static_cast<char>(std::tolower(c));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "task" : out;
}

std::string ChartFileName(const std::string& task, Lang lang) {
  return "chart-" + TaskSlug(task) + "." + std::string(LangCode(lang)) + ".svg";
}

bool HasCallIndexSpread(const Analysis& analysis, const std::string& task) {
  std::optional<uint32_t> first;
  for (const Cell& c : analysis.cells) {
    if (c.key.task != task) continue;
    for (const RunFigure& rf : c.runs) {
      if (!first) first = rf.call_index;
      if (rf.call_index != *first) return true;
    }
  }
  return false;
}

std::vector<std::string> TasksOf(const Analysis& analysis) {
  std::vector<std::string> tasks;
  for (const Cell& c : analysis.cells) {
    if (tasks.empty() || tasks.back() != c.key.task) {
      if (std::find(tasks.begin(), tasks.end(), c.key.task) == tasks.end()) tasks.push_back(c.key.task);
    }
  }
  return tasks;
}

Document RenderDocument(const Analysis& analysis, Lang lang) {
  const Messages& m = MessagesOf(lang);
  Document doc;
  doc.Heading(1, Title(analysis, m));
  if (analysis.simulated) doc.Paragraph(Wording(m.simulated_note));
  for (const Spans& note : {Wording(m.sources_note), Wording(m.numbers_note), SpreadNote(lang)}) doc.Paragraph(note);
  doc.Heading(2, Wording(m.table_section));
  for (const std::string& task : TasksOf(analysis)) RenderTable(analysis, task, lang, m, doc);
  RenderTraps(analysis, m, doc);
  return doc;
}

Document RenderGuideDocument(const Analysis& analysis, const GuideModel& model,
                             const std::vector<std::string>& skipped, Lang lang) {
  const Messages& m = MessagesOf(lang);
  const ModelMessages& mm = lang == Lang::kFr ? ModelMessagesFr() : ModelMessagesEn();
  // The answer first, then what it rests on, then the details; the conditions last, collapsed in
  // HTML. The contents line lists every "## " section in this order.
  std::vector<std::string_view> sections = {mm.decision_section, mm.watch_section};
  if (!model.regression_checks.empty()) sections.push_back(m.reg_section);
  for (std::string_view s : {mm.thresholds_section, mm.rules_section}) sections.push_back(s);
  if (!model.repetition_tables.empty()) sections.push_back(mm.repetition_section);
  for (std::string_view s : {m.table_section, mm.verdicts_section, mm.cost_section, m.traps_section}) {
    sections.push_back(s);
  }
  if (!model.outputs.empty()) sections.push_back(m.outputs_section);
  for (std::string_view s : {mm.reading_section, m.cond_section, m.skipped_section}) sections.push_back(s);
  Document doc;
  doc.Heading(1, Title(analysis, m));
  if (analysis.simulated) doc.Paragraph(Wording(m.simulated_note));
  RenderAnswer(model, lang, doc);
  Spans contents = {BoldSpan({TextSpan(std::string(mm.contents))}), TextSpan(lang == Lang::kFr ? " : " : ": ")};
  for (size_t i = 0; i < sections.size(); ++i) {
    if (i > 0) contents.push_back(TextSpan(" · "));
    contents.push_back(LinkSpan({TextSpan(std::string(sections[i]))}, "#" + HeadingId(sections[i])));
  }
  doc.Paragraph(std::move(contents));
  RenderDecisionSection(analysis, model, lang, doc);
  RenderWatchSection(model, lang, doc);
  RenderRegressionSection(model, lang, doc);
  RenderThresholdsSection(model, lang, doc);
  RenderRulesSection(model, lang, doc);
  RenderRepetitionSection(model, lang, doc);
  doc.Heading(2, Wording(m.table_section));
  for (const std::string& task : TasksOf(analysis)) RenderTable(analysis, task, lang, m, doc, &model);
  RenderVerdictsSection(model, lang, doc);
  RenderCostSection(model, lang, doc);
  RenderTraps(analysis, m, doc);
  RenderOutputsSection(model, lang, doc);
  doc.Heading(2, Wording(mm.reading_section));
  std::string newest;
  for (const auto& s : model.series) newest = std::max(newest, s.last_start);
  if (!newest.empty()) doc.Paragraph(Wording(m.newest_record) + " " + CodeSpans(newest) + ".");
  for (const Spans& note : {Wording(m.sources_note), Wording(m.numbers_note), SpreadNote(lang)}) doc.Paragraph(note);
  RenderConditionsSection(model, lang, doc);
  doc.Heading(2, Wording(m.skipped_section));
  if (skipped.empty()) {
    doc.Paragraph(Wording(m.skipped_none));
  } else {
    doc.Paragraph(std::to_string(skipped.size()) + " " + Wording(m.skipped_count));
    std::vector<ListItem> lines;
    for (const auto& line : skipped) lines.push_back(ListItem{CodeSpans(line), {}});
    doc.List(std::move(lines));
  }
  return doc;
}

}  // namespace benchfleet::synthesis
