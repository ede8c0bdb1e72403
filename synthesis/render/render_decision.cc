// The guide's answer (sections.h): the answer paragraph under the title, the decision table of every
// task, what to watch, and the Workflow v6 method's tables, from the GuideModel's decisions,
// watches and repetition tables. Figures with Ref(); verbatim text (machines, settings, run ids,
// call numbers, reasons) in Code() spans, so the guide's number test finds every number's source.
// Wording: messages_model.cc.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "synthesis/render/inline_markdown.h"
#include "synthesis/render/inline_text.h"
#include "synthesis/render/messages.h"
#include "synthesis/render/messages_model.h"
#include "synthesis/render/model_text.h"
#include "synthesis/render/sections.h"
#include "synthesis/render/spread_text.h"

namespace benchfleet::synthesis {
namespace {

using Values = std::vector<std::pair<std::string, std::string>>;

const ModelMessages& Msg(Lang lang) { return lang == Lang::kFr ? ModelMessagesFr() : ModelMessagesEn(); }
const Messages& TableMsg(Lang lang) { return lang == Lang::kFr ? MessagesFr() : MessagesEn(); }

std::string S(std::string_view v) { return std::string(v); }

// A reason quoted in running text: verbatim, cut at about 160 characters (the whole of it is under
// "Every flag").
std::string ShortReason(const std::string& reason) {
  constexpr size_t kMax = 160;
  if (reason.size() <= kMax) return Code(reason);
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(reason[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return Code(reason.substr(0, cut) + "…");
}

const TaskVerdicts* VerdictsOf(const GuideModel& model, const std::string& task) {
  for (const TaskVerdicts& tv : model.verdicts) {
    if (tv.task == task) return &tv;
  }
  return nullptr;
}

// The working setting in the reader's words: the mode and the matrix point without its mode
// ("gpu", "nvidia, batch_size=16"), "(cold runs only)" when judged on cold runs.
std::string WorkingSetting(const CellKey& key, const ModelMessages& m) {
  std::vector<std::string> parts;
  if (!key.mode.empty()) parts.push_back(key.mode);
  size_t start = 0;
  while (start < key.matrix.size()) {
    size_t end = key.matrix.find(';', start);
    if (end == std::string::npos) end = key.matrix.size();
    std::string part = key.matrix.substr(start, end - start);
    if (!part.starts_with("mode=")) parts.push_back(part);
    start = end + 1;
  }
  std::string text = CodeOrNone(Join(parts, ", "), m);
  if (key.phase == v1::PHASE_COLD) text += " (" + S(m.setting_cold_short) + ")";
  return text;
}

std::string_view ShortKind(v1::MemoryKind kind, const ModelMessages& m) {
  switch (kind) {
    case v1::MEMORY_KIND_DEVICE_USED: return m.short_device_used;
    case v1::MEMORY_KIND_DEVICE_BUFFER: return m.short_device_buffer;
    case v1::MEMORY_KIND_PROCESS_PEAK_RSS: return m.short_process_rss;
    case v1::MEMORY_KIND_PROCESS_FOOTPRINT: return m.short_process_footprint;
    case v1::MEMORY_KIND_CONTAINER_PEAK: return m.short_container;
    case v1::MEMORY_KIND_HOST_BUFFER: return m.short_host_buffer;
    case v1::MEMORY_KIND_BUFFER_UNKNOWN: return m.short_buffer_unknown;
    default: return m.short_unspecified;
  }
}

// "52.9 [S3]", "28.0 [S5] – 30.1 [S6]", "median 41.2 [S9]": a level of runs; a range whose two
// ends print alike shows one.
std::string LevelText(const std::optional<Figure>& median, const std::optional<Figure>& min,
                      const std::optional<Figure>& max, Lang lang, const ModelMessages& m,
                      const std::optional<Spread>& spread = std::nullopt) {
  if (median) return S(m.basis_median) + " " + Ref(*median, lang) + SpreadText(spread, lang);
  if (min && max && FormatNumber(min->value, lang) != FormatNumber(max->value, lang)) {
    return Ref(*min, lang) + " – " + Ref(*max, lang);
  }
  if (min) return Ref(*min, lang);
  if (max) return Ref(*max, lang);
  return S(m.no_mark);
}

std::string CallsText(uint32_t first, uint32_t last) {
  return Code(first == last ? std::to_string(first) : std::to_string(first) + "–" + std::to_string(last));
}

std::string LevelWithCalls(const Level& level, Lang lang, const ModelMessages& m) {
  return Fill(m.level_runs, {{"range", LevelText(level.median, level.min, level.max, lang, m, level.spread)},
                             {"calls", CallsText(level.first_call, level.last_call)}});
}

std::string CostText(const GuideModel& model, const CellKey& key, const std::string& item, Lang lang,
                     const ModelMessages& m) {
  for (const TaskCost& c : model.costs) {
    if (c.key != key) continue;
    if (c.cost_per_million) {
      return Fill(m.per_million, {{"cost", Ref(*c.cost_per_million, lang)},
                                  {"currency", Word(c.currency)},
                                  {"items", ItemWord(item, true, m)}});
    }
    return Fill(m.per_item, {{"cost", Ref(c.cost_per_item, lang)},
                             {"currency", Word(c.currency)},
                             {"item", ItemWord(item, false, m)}});
  }
  return "";
}

// The capacity of the memory a kind lives in, as the machine's conditions recorded it; "" when
// unknown.
std::string CapacityText(const GuideModel& model, const CellKey& key, v1::MemoryKind kind, Lang lang) {
  const uint64_t bytes = MemoryCapacityBytes(model.series, key.machine, kind);
  return bytes > 0 ? Code(ConditionsSizeText(bytes, lang)) : "";
}

std::string MemoryText(const GuideModel& model, const DecisionRow& row, Lang lang, const ModelMessages& m) {
  if (!row.memory) return S(m.not_measured);
  const MemoryEntry& e = *row.memory;
  std::string kind(ShortKind(e.kind, m));
  std::string capacity = CapacityText(model, row.verdict.key, e.kind, lang);
  Values values = {{"memory", FigureWithUnit(e.human, lang)}, {"kind", kind}, {"capacity", capacity}};
  return Fill(capacity.empty() ? m.memory_no_capacity : m.memory_of, values);
}

// Energy per output token, or per image: the further figure measured in joules per token (or per
// image: ComfyUI), where the device sampler measured it.
std::string EnergyText(const Cell* cell, Lang lang, const ModelMessages& m) {
  if (cell != nullptr) {
    for (const FurtherFigure& f : cell->further) {
      if (f.unit != "J/token" && f.unit != "J/image") continue;
      return LevelText(f.median, f.min, f.max, lang, m) + " " + Word(LocalWords(f.unit, lang));
    }
  }
  return S(m.not_measured);
}

std::string VerdictText(const DecisionRow& row, Lang lang, const ModelMessages& m) {
  std::vector<std::string> met, missed;
  for (const UseVerdict& u : row.verdict.uses) (u.ok ? met : missed).push_back(Word(u.use));
  std::string basis = S(row.verdict.basis == "median" ? m.basis_median : m.basis_worst_run);
  // Which figure is judged matters when the throughput drops: the sustained one, said so.
  std::string judged =
      row.sustained
          ? Fill(m.verdict_judged_sustained, {{"figure", FigureWithUnit(row.verdict.figure, lang)},
                                              {"basis", basis},
                                              {"call", Code(std::to_string(row.drop_call))}})
          : "";
  std::string text;
  if (!row.verdict.uses.empty()) {
    text = Fill(met.empty() ? m.answer_meets_none : missed.empty() ? m.answer_meets_all : m.answer_meets_some,
                {{"met", Join(met, S(m.and_word))}, {"missed", Join(missed, S(m.and_word))}});
  }
  if (judged.empty()) return text;
  return text.empty() ? judged : text + " " + judged;
}

std::string TargetsText(const TaskVerdicts& tv, Lang lang, const ModelMessages& m) {
  if (tv.targets == nullptr || tv.cells.empty()) return "";
  std::vector<std::string> parts;
  const CellVerdict& first = tv.cells.front();
  for (size_t i = 0; i < tv.targets->uses.size() && i < first.uses.size(); ++i) {
    const UseTarget& use = tv.targets->uses[i];
    parts.push_back(Fill(use.max_seconds_per_item ? m.use_max : m.use_min,
                         {{"target", Ref(first.uses[i].target, lang)},
                          {"item", ItemWord(tv.item, false, m)},
                          {"items", ItemWord(tv.item, true, m)},
                          {"use", Word(use.name)}}));
  }
  return Join(parts, lang == Lang::kFr ? " ; " : "; ");
}

}  // namespace

void RenderAnswer(const GuideModel& model, Lang lang, Document& doc) {
  const ModelMessages& m = Msg(lang);
  std::vector<std::string> sentences;
  for (const TaskDecision& d : model.decisions) {
    const TaskVerdicts* tv = VerdictsOf(model, d.task);
    if (tv == nullptr || d.rows.empty()) continue;
    if (tv->targets == nullptr) {
      sentences.push_back(Fill(m.answer_no_target, {{"task", Code(d.task)}}));
      continue;
    }
    // Machine by machine, the fastest first: what it meets, at which setting, figure and cost.
    std::vector<const DecisionRow*> rows;
    for (const DecisionRow& row : d.rows) rows.push_back(&row);
    std::stable_sort(rows.begin(), rows.end(), [](const DecisionRow* a, const DecisionRow* b) {
      return a->verdict.items_per_second.value > b->verdict.items_per_second.value;
    });
    std::vector<std::string> machines;
    for (const DecisionRow* row : rows) {
      std::vector<std::string> met, missed;
      for (const UseVerdict& u : row->verdict.uses) (u.ok ? met : missed).push_back(Word(u.use));
      std::string_view verdict = met.empty() ? m.answer_meets_none : missed.empty() ? m.answer_meets_all : m.answer_meets_some;
      std::string cost = CostText(model, row->verdict.key, d.item, lang, m);
      CellKey key = row->verdict.key;
      key.phase = v1::PHASE_WARM;  // the table says "cold runs only"; the answer keeps it short
      // In parentheses: the setting (when it has one), the figure judged, the cost (when priced).
      std::vector<std::string> details;
      if (!key.mode.empty() || !key.matrix.empty()) details.push_back(WorkingSetting(key, m));
      // A machine whose throughput drops: the figure judged is the sustained one, and the burst it
      // reached first stands beside it.
      if (row->burst && row->sustained) {
        const Level& burst = *row->burst;
        details.push_back(Fill(m.answer_sustained,
                               {{"figure", FigureWithUnit(row->verdict.figure, lang)},
                                {"call", Code(std::to_string(row->drop_call))},
                                {"burst", LevelText(burst.median, burst.min, burst.max, lang, m)}}));
      } else {
        details.push_back(FigureWithUnit(row->verdict.figure, lang));
      }
      if (!cost.empty()) details.push_back(cost);
      machines.push_back(Fill(m.answer_machine, {{"machine", Code(row->verdict.key.machine)},
                                                 {"verdict", Fill(verdict, {{"met", Join(met, S(m.and_word))},
                                                                            {"missed", Join(missed, S(m.and_word))}})},
                                                 {"details", Join(details, ", ")}}));
    }
    sentences.push_back(Fill(m.answer_task, {{"task", Code(d.task)}, {"uses", Join(machines, lang == Lang::kFr ? " ; " : "; ")}}));
  }
  std::vector<ListItem> items;
  for (const std::string& sentence : sentences) items.push_back(ParseItem(sentence));
  doc.List(std::move(items));
}

void RenderDecisionSection(const Analysis& analysis, const GuideModel& model, Lang lang, Document& doc) {
  const ModelMessages& m = Msg(lang);
  doc.Heading(2, ParseInline(m.decision_section));
  for (const TaskDecision& d : model.decisions) {
    const TaskVerdicts* tv = VerdictsOf(model, d.task);
    doc.Heading(3, ParseInline(Fill(m.task_heading, {{"task", Code(d.task)}})));
    if (d.rows.empty()) {
      doc.Paragraph(ParseInline(m.no_warm_cell));
      continue;
    }
    if (tv != nullptr) {
      std::string targets = TargetsText(*tv, lang, m);
      doc.Paragraph(ParseInline(targets.empty() ? S(m.no_targets) : Fill(m.decision_targets, {{"targets", targets}})));
    }
    // The figure's label for the burst and sustained headers: the first row's cell's.
    const Cell* first = FindCell(analysis, d.rows.front().verdict.key);
    const std::string label = first != nullptr ? MdCell(FigureName(first->label, first->unit, lang)) : "";
    // The cost and energy columns only where a row has one (a task measured nowhere with a price or
    // an energy meter says so once, below the table, instead of a column of "no price").
    bool any_cost = false, any_energy = false;
    for (const DecisionRow& row : d.rows) {
      any_cost = any_cost || !CostText(model, row.verdict.key, d.item, lang, m).empty();
      any_energy = any_energy || EnergyText(FindCell(analysis, row.verdict.key), lang, m) != S(m.not_measured);
    }
    std::vector<std::string> header = {S(m.col_machine),
                                       S(m.col_verdict),
                                       S(m.col_working_setting),
                                       Fill(m.col_burst, {{"label", label}}),
                                       Fill(m.col_sustained, {{"label", label}}),
                                       S(m.col_runs),
                                       S(m.col_memory)};
    if (any_cost) header.push_back(S(m.col_cost));
    if (any_energy) header.push_back(S(m.col_energy));
    std::vector<std::vector<Spans>> rows;
    for (const DecisionRow& row : d.rows) {
      const Cell* cell = FindCell(analysis, row.verdict.key);
      std::string burst = row.burst ? LevelWithCalls(*row.burst, lang, m)
                          : cell != nullptr ? LevelText(cell->median, cell->min, cell->max, lang, m, cell->spread)
                                            : S(m.no_mark);
      std::string sustained = row.sustained ? LevelWithCalls(*row.sustained, lang, m) : S(m.no_drop);
      std::string runs = RefCount(row.runs);
      if (row.excluded) runs = Fill(m.runs_excluded, {{"runs", runs}, {"excluded", RefCount(*row.excluded)}});
      std::string cost = CostText(model, row.verdict.key, d.item, lang, m);
      std::vector<std::string> cells = {Code(row.verdict.key.machine),
                                        VerdictText(row, lang, m),
                                        WorkingSetting(row.verdict.key, m),
                                        burst,
                                        sustained,
                                        runs,
                                        MemoryText(model, row, lang, m)};
      if (any_cost) cells.push_back(cost.empty() ? S(m.no_price) : cost);
      if (any_energy) cells.push_back(EnergyText(cell, lang, m));
      rows.push_back(ParseCells(cells));
    }
    doc.Table(ParseCells(header), std::move(rows));
    std::vector<std::string> missing;
    if (!any_cost) missing.push_back(S(m.no_cost_column));
    if (!any_energy) missing.push_back(S(m.no_energy_column));
    if (!missing.empty()) doc.Paragraph(ParseInline(Join(missing, " ")));
  }
  doc.Paragraph(ParseInline(m.decision_intro));
}

void RenderWatchSection(const GuideModel& model, Lang lang, Document& doc) {
  const ModelMessages& m = Msg(lang);
  doc.Heading(2, ParseInline(m.watch_section));
  doc.Paragraph(ParseInline(m.watch_intro));
  if (model.watches.empty()) {
    doc.Paragraph(ParseInline(m.watch_none));
    return;
  }
  // Per task, its name in bold and one item per watch.
  std::string task;
  std::vector<ListItem> items;
  for (const Watch& w : model.watches) {
    if (w.key.task != task) {
      doc.List(std::move(items));
      items.clear();
      task = w.key.task;
      doc.Paragraph({BoldSpan(ParseInline(Fill(m.task_heading, {{"task", Code(task)}})))});
    }
    std::vector<std::string> runs;
    constexpr size_t kShown = 6;
    for (size_t i = 0; i < w.run_ids.size() && i < kShown; ++i) {
      runs.push_back(Code(w.run_ids[i].substr(0, 8)) + " (" + S(TableMsg(lang).call) + " " +
                     Code(std::to_string(w.calls[i])) + ")");
    }
    if (w.run_ids.size() > kShown) runs.push_back("…");
    std::string_view tmpl = w.code == "CACHE_HIT"           ? m.watch_cache_hit
                            : w.code == "PROMPT_CACHE_USED" ? m.watch_prompt_cache
                            : w.code == "THROUGHPUT_DROP"   ? (w.cause == "THROTTLED"   ? m.watch_drop_throttled
                                                               : w.cause == "CONTENDED" ? m.watch_drop_contended
                                                                                        : m.watch_drop)
                            : w.code == "FAILED"            ? m.watch_failed
                            : w.code == "CONTENDED"         ? m.watch_contended
                            : w.code == "THROTTLED"         ? m.watch_throttled
                            : w.code == "NO_OFFLOAD"        ? m.watch_no_offload
                            : w.code == "PARTIAL_OFFLOAD"   ? m.watch_partial_offload
                            : w.code == "INVALIDATED"       ? m.watch_invalidated
                                                            : m.watch_other;
    std::string where = Code(w.key.machine);
    if (!w.key.mode.empty() || !w.key.matrix.empty()) where += " " + WorkingSetting(w.key, m);
    if (w.key.phase == v1::PHASE_WARM || w.key.phase == v1::PHASE_VALIDATION) {
      where += " (" + S(w.key.phase == v1::PHASE_WARM ? TableMsg(lang).phase_warm : TableMsg(lang).phase_validation) + ")";
    }
    items.push_back(ParseItem(where + (lang == Lang::kFr ? " : " : ": ") +
                              Fill(tmpl, {{"count", RefCount(w.count)},
                                          {"runs", Join(runs, ", ")},
                                          {"code", Code(w.code)},
                                          {"reason", w.reason.empty() ? S(m.no_mark) : ShortReason(w.reason)}})));
  }
  doc.List(std::move(items));
}

void RenderRepetitionSection(const GuideModel& model, Lang lang, Document& doc) {
  if (model.repetition_tables.empty()) return;
  const ModelMessages& m = Msg(lang);
  doc.Heading(2, ParseInline(m.repetition_section));
  doc.Paragraph(ParseInline(m.repetition_intro));
  auto values = [&](const std::vector<std::optional<Figure>>& figures, const std::optional<Figure>& median,
                    const std::optional<Spread>& spread) {
    std::vector<std::string> list;
    for (const auto& f : figures) list.push_back(f ? Ref(*f, lang) : S(m.no_mark));
    std::string joined = Join(list, ", ");
    return median ? Fill(m.median_of, {{"median", Ref(*median, lang) + SpreadText(spread, lang)}, {"values", joined}})
                  : joined;
  };
  for (const RepetitionTable& t : model.repetition_tables) {
    doc.Heading(3, ParseInline(Fill(m.task_heading, {{"task", Code(t.task)}})));
    std::vector<std::string> header = {S(m.col_platform), t.axis == "batch_size" ? S(m.col_axis) : MdCell(t.axis)};
    if (!t.latency_label.empty()) header.push_back(Fill(m.col_latency_ms, {{"label", MdCell(LocalWords(t.latency_label, lang))}}));
    header.push_back(Fill(m.col_rate, {{"label", MdCell(FigureName(t.rate_label, t.rate_unit, lang))}}));
    header.push_back(S(m.col_max_memory));
    std::vector<std::vector<Spans>> rows;
    for (const RepetitionRow& r : t.rows) {
      std::vector<std::optional<Figure>> rate(r.rate.begin(), r.rate.end());
      std::vector<std::string> cells = {Code(r.key.machine) + " " + CodeOrNone(r.key.mode, m), Code(r.axis_value)};
      if (!t.latency_label.empty()) cells.push_back(values(r.latency_ms, r.latency_median_ms, r.latency_spread_ms));
      cells.push_back(values(rate, r.rate_median, r.rate_spread));
      std::string memory = S(m.not_measured);
      if (r.memory_max_gib) {
        std::vector<std::string> each;
        for (const auto& f : r.memory_gib) each.push_back(f ? Ref(*f, lang) : S(m.no_mark));
        memory = Fill(m.max_of, {{"max", Ref(*r.memory_max_gib, lang)}, {"values", Join(each, ", ")}}) + " (" +
                 S(MemoryKindWording(TableMsg(lang), r.memory_kind)) + ")";
      }
      cells.push_back(memory);
      rows.push_back(ParseCells(cells));
    }
    doc.Table(ParseCells(header), std::move(rows));
  }
}

}  // namespace benchfleet::synthesis
