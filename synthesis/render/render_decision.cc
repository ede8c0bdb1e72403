// The guide's answer (sections.h): the answer paragraph under the title, the decision table of every
// task, what to watch, and the Workflow v6 method's tables, from the GuideModel's decisions,
// watches and repetition tables, built as spans (spans.h): the catalogue's templates filled with
// values that are never parsed. Figures with RefSpans(); verbatim text (machines, settings, run ids,
// call numbers, reasons) in code spans, so the guide's number test finds every number's source.
// Wording: messages_model.cc.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "synthesis/render/inline_text.h"
#include "synthesis/render/messages.h"
#include "synthesis/render/messages_model.h"
#include "synthesis/render/model_text.h"
#include "synthesis/render/sections.h"
#include "synthesis/render/spans.h"
#include "synthesis/render/spread_text.h"

namespace benchfleet::synthesis {
namespace {

using Values = SpanValues;

const ModelMessages& Msg(Lang lang) { return lang == Lang::kFr ? ModelMessagesFr() : ModelMessagesEn(); }
const Messages& TableMsg(Lang lang) { return lang == Lang::kFr ? MessagesFr() : MessagesEn(); }

// A reason quoted in running text: verbatim, cut at about 160 characters (the whole of it is under
// "Every flag").
Spans ShortReason(const std::string& reason) {
  constexpr size_t kMax = 160;
  if (reason.size() <= kMax) return CodeSpans(reason);
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(reason[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return CodeSpans(reason.substr(0, cut) + "…");
}

const TaskVerdicts* VerdictsOf(const GuideModel& model, const std::string& task) {
  for (const TaskVerdicts& tv : model.verdicts) {
    if (tv.task == task) return &tv;
  }
  return nullptr;
}

// The working setting in the reader's words: the mode and the matrix point without its mode
// ("gpu", "nvidia, batch_size=16"), "(cold runs only)" when judged on cold runs.
Spans WorkingSetting(const CellKey& key, const ModelMessages& m) {
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
  Spans text = CodeOrNone(Join(parts, ", "), m);
  if (key.phase == v1::PHASE_COLD) text += " (" + Wording(m.setting_cold_short) + ")";
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
Spans LevelText(const std::optional<Figure>& median, const std::optional<Figure>& min,
                const std::optional<Figure>& max, Lang lang, const ModelMessages& m,
                const std::optional<Spread>& spread = std::nullopt) {
  if (median) return Wording(m.basis_median) + " " + RefSpans(*median, lang) + SpreadText(spread, lang);
  if (min && max && FormatNumber(min->value, lang) != FormatNumber(max->value, lang)) {
    return RefSpans(*min, lang) + " – " + RefSpans(*max, lang);
  }
  if (min) return RefSpans(*min, lang);
  if (max) return RefSpans(*max, lang);
  return Wording(m.no_mark);
}

Spans CallsText(uint32_t first, uint32_t last) {
  return CodeSpans(first == last ? std::to_string(first) : std::to_string(first) + "–" + std::to_string(last));
}

Spans LevelWithCalls(const Level& level, Lang lang, const ModelMessages& m) {
  return FillSpans(m.level_runs, {{"range", LevelText(level.median, level.min, level.max, lang, m, level.spread)},
                                  {"calls", CallsText(level.first_call, level.last_call)}});
}

Spans CostText(const GuideModel& model, const CellKey& key, const std::string& item, Lang lang,
                     const ModelMessages& m) {
  for (const TaskCost& c : model.costs) {
    if (c.key != key) continue;
    if (c.cost_per_million) {
      return FillSpans(m.per_million, {{"cost", RefSpans(*c.cost_per_million, lang)},
                                       {"currency", Word(c.currency)},
                                       {"items", ItemWord(item, true, m)}});
    }
    return FillSpans(m.per_item, {{"cost", RefSpans(c.cost_per_item, lang)},
                                  {"currency", Word(c.currency)},
                                  {"item", ItemWord(item, false, m)}});
  }
  return {};
}

// The capacity of the memory a kind lives in, as the machine's conditions recorded it; "" when
// unknown.
Spans CapacityText(const GuideModel& model, const CellKey& key, v1::MemoryKind kind, Lang lang) {
  const uint64_t bytes = MemoryCapacityBytes(model.series, key.machine, kind);
  return bytes > 0 ? CodeSpans(ConditionsSizeText(bytes, lang)) : Spans();
}

Spans MemoryText(const GuideModel& model, const DecisionRow& row, Lang lang, const ModelMessages& m) {
  if (!row.memory) return Wording(m.not_measured);
  const MemoryEntry& e = *row.memory;
  Spans capacity = CapacityText(model, row.verdict.key, e.kind, lang);
  const bool known = !capacity.empty();
  Values values = {
      {"memory", FigureWithUnit(e.human, lang)}, {"kind", Wording(ShortKind(e.kind, m))}, {"capacity", capacity}};
  return FillSpans(known ? m.memory_of : m.memory_no_capacity, values);
}

// Energy per output token, or per image: the further figure measured in joules per token (or per
// image: ComfyUI), where the device sampler measured it.
// Energy per output token or per image, or nothing when the cell has no such figure.
std::optional<Spans> MeasuredEnergy(const Cell* cell, Lang lang, const ModelMessages& m) {
  if (cell != nullptr) {
    for (const FurtherFigure& f : cell->further) {
      if (f.unit != "J/token" && f.unit != "J/image") continue;
      return LevelText(f.median, f.min, f.max, lang, m) + " " + Word(LocalWords(f.unit, lang));
    }
  }
  return std::nullopt;
}

Spans EnergyText(const Cell* cell, Lang lang, const ModelMessages& m) {
  std::optional<Spans> energy = MeasuredEnergy(cell, lang, m);
  return energy ? *energy : Wording(m.not_measured);
}

// What the row meets: `template` with {met} and {missed}, each the uses' names joined by "and".
Spans MeetsText(std::string_view tmpl, const std::vector<Spans>& met, const std::vector<Spans>& missed,
                const ModelMessages& m) {
  return FillSpans(tmpl, {{"met", JoinSpans(met, m.and_word)}, {"missed", JoinSpans(missed, m.and_word)}});
}

Spans VerdictText(const DecisionRow& row, Lang lang, const ModelMessages& m) {
  std::vector<Spans> met, missed;
  for (const UseVerdict& u : row.verdict.uses) (u.ok ? met : missed).push_back(Word(u.use));
  Spans basis = Wording(row.verdict.basis == "median" ? m.basis_median : m.basis_worst_run);
  // Which figure is judged matters when the throughput drops: the sustained one, said so.
  Spans judged =
      row.sustained
          ? FillSpans(m.verdict_judged_sustained, {{"figure", FigureWithUnit(row.verdict.figure, lang)},
                                                   {"basis", basis},
                                                   {"call", CodeSpans(std::to_string(row.drop_call))}})
          : Spans();
  Spans text;
  if (!row.verdict.uses.empty()) {
    text = MeetsText(met.empty() ? m.answer_meets_none : missed.empty() ? m.answer_meets_all : m.answer_meets_some,
                     met, missed, m);
  }
  if (judged.empty()) return text;
  return text.empty() ? judged : text + " " + judged;
}

Spans TargetsText(const TaskVerdicts& tv, Lang lang, const ModelMessages& m) {
  if (tv.targets == nullptr || tv.cells.empty()) return {};
  std::vector<Spans> parts;
  const CellVerdict& first = tv.cells.front();
  for (size_t i = 0; i < tv.targets->uses.size() && i < first.uses.size(); ++i) {
    const UseTarget& use = tv.targets->uses[i];
    parts.push_back(FillSpans(use.max_seconds_per_item ? m.use_max : m.use_min,
                              {{"target", RefSpans(first.uses[i].target, lang)},
                               {"item", ItemWord(tv.item, false, m)},
                               {"items", ItemWord(tv.item, true, m)},
                               {"use", Word(use.name)}}));
  }
  return JoinSpans(parts, lang == Lang::kFr ? " ; " : "; ");
}

}  // namespace

void RenderAnswer(const GuideModel& model, Lang lang, Document& doc) {
  const ModelMessages& m = Msg(lang);
  std::vector<ListItem> items;
  for (const TaskDecision& d : model.decisions) {
    const TaskVerdicts* tv = VerdictsOf(model, d.task);
    if (tv == nullptr || d.rows.empty()) continue;
    if (tv->targets == nullptr) {
      items.push_back(ListItem{FillSpans(m.answer_no_target, {{"task", CodeSpans(d.task)}}), {}});
      continue;
    }
    // Machine by machine, the fastest first: what it meets, at which setting, figure and cost.
    std::vector<const DecisionRow*> rows;
    for (const DecisionRow& row : d.rows) rows.push_back(&row);
    std::stable_sort(rows.begin(), rows.end(), [](const DecisionRow* a, const DecisionRow* b) {
      return a->verdict.items_per_second.value > b->verdict.items_per_second.value;
    });
    std::vector<Spans> machines;
    for (const DecisionRow* row : rows) {
      std::vector<Spans> met, missed;
      for (const UseVerdict& u : row->verdict.uses) (u.ok ? met : missed).push_back(Word(u.use));
      std::string_view verdict = met.empty() ? m.answer_meets_none : missed.empty() ? m.answer_meets_all : m.answer_meets_some;
      Spans cost = CostText(model, row->verdict.key, d.item, lang, m);
      CellKey key = row->verdict.key;
      key.phase = v1::PHASE_WARM;  // the table says "cold runs only"; the answer keeps it short
      // In parentheses: the setting (when it has one), the figure judged, the cost (when priced).
      std::vector<Spans> details;
      if (!key.mode.empty() || !key.matrix.empty()) details.push_back(WorkingSetting(key, m));
      // A machine whose throughput drops: the figure judged is the sustained one, and the burst it
      // reached first stands beside it.
      if (row->burst && row->sustained) {
        const Level& burst = *row->burst;
        details.push_back(FillSpans(m.answer_sustained,
                                    {{"figure", FigureWithUnit(row->verdict.figure, lang)},
                                     {"call", CodeSpans(std::to_string(row->drop_call))},
                                     {"burst", LevelText(burst.median, burst.min, burst.max, lang, m)}}));
      } else {
        details.push_back(FigureWithUnit(row->verdict.figure, lang));
      }
      if (!cost.empty()) details.push_back(cost);
      machines.push_back(FillSpans(m.answer_machine, {{"machine", CodeSpans(row->verdict.key.machine)},
                                                      {"verdict", MeetsText(verdict, met, missed, m)},
                                                      {"details", JoinSpans(details, ", ")}}));
    }
    Spans uses = JoinSpans(machines, lang == Lang::kFr ? " ; " : "; ");
    items.push_back(ListItem{FillSpans(m.answer_task, {{"task", CodeSpans(d.task)}, {"uses", uses}}), {}});
  }
  doc.List(std::move(items));
}

void RenderDecisionSection(const Analysis& analysis, const GuideModel& model, Lang lang, Document& doc) {
  const ModelMessages& m = Msg(lang);
  doc.Heading(2, Wording(m.decision_section));
  for (const TaskDecision& d : model.decisions) {
    const TaskVerdicts* tv = VerdictsOf(model, d.task);
    doc.Heading(3, FillSpans(m.task_heading, {{"task", CodeSpans(d.task)}}));
    if (d.rows.empty()) {
      doc.Paragraph(Wording(m.no_warm_cell));
      continue;
    }
    if (tv != nullptr) {
      Spans targets = TargetsText(*tv, lang, m);
      doc.Paragraph(targets.empty() ? Wording(m.no_targets) : FillSpans(m.decision_targets, {{"targets", targets}}));
    }
    // The figure's label for the burst and sustained headers: the first row's cell's.
    const Cell* first = FindCell(analysis, d.rows.front().verdict.key);
    const Spans label = first != nullptr ? CellSpans(FigureName(first->label, first->unit, lang)) : Spans();
    // The cost and energy columns only where a row has one (a task measured nowhere with a price or
    // an energy meter says so once, below the table, instead of a column of "no price").
    bool any_cost = false, any_energy = false;
    for (const DecisionRow& row : d.rows) {
      any_cost = any_cost || !CostText(model, row.verdict.key, d.item, lang, m).empty();
      any_energy = any_energy || MeasuredEnergy(FindCell(analysis, row.verdict.key), lang, m).has_value();
    }
    std::vector<Spans> header = {Wording(m.col_machine),
                                 Wording(m.col_verdict),
                                 Wording(m.col_working_setting),
                                 FillSpans(m.col_burst, {{"label", label}}),
                                 FillSpans(m.col_sustained, {{"label", label}}),
                                 Wording(m.col_runs),
                                 Wording(m.col_memory)};
    if (any_cost) header.push_back(Wording(m.col_cost));
    if (any_energy) header.push_back(Wording(m.col_energy));
    std::vector<std::vector<Spans>> rows;
    for (const DecisionRow& row : d.rows) {
      const Cell* cell = FindCell(analysis, row.verdict.key);
      Spans burst = row.burst ? LevelWithCalls(*row.burst, lang, m)
                    : cell != nullptr ? LevelText(cell->median, cell->min, cell->max, lang, m, cell->spread)
                                      : Wording(m.no_mark);
      Spans sustained = row.sustained ? LevelWithCalls(*row.sustained, lang, m) : Wording(m.no_drop);
      Spans runs = RefCountSpans(row.runs);
      if (row.excluded) {
        runs = FillSpans(m.runs_excluded, {{"runs", runs}, {"excluded", RefCountSpans(*row.excluded)}});
      }
      Spans cost = CostText(model, row.verdict.key, d.item, lang, m);
      std::vector<Spans> cells = {CodeSpans(row.verdict.key.machine),
                                  VerdictText(row, lang, m),
                                  WorkingSetting(row.verdict.key, m),
                                  burst,
                                  sustained,
                                  runs,
                                  MemoryText(model, row, lang, m)};
      if (any_cost) cells.push_back(cost.empty() ? Wording(m.no_price) : cost);
      if (any_energy) cells.push_back(EnergyText(cell, lang, m));
      rows.push_back(std::move(cells));
    }
    doc.Table(std::move(header), std::move(rows));
    std::vector<Spans> missing;
    if (!any_cost) missing.push_back(Wording(m.no_cost_column));
    if (!any_energy) missing.push_back(Wording(m.no_energy_column));
    if (!missing.empty()) doc.Paragraph(JoinSpans(missing, " "));
  }
  doc.Paragraph(Wording(m.decision_intro));
}

void RenderWatchSection(const GuideModel& model, Lang lang, Document& doc) {
  const ModelMessages& m = Msg(lang);
  doc.Heading(2, Wording(m.watch_section));
  doc.Paragraph(Wording(m.watch_intro));
  if (model.watches.empty()) {
    doc.Paragraph(Wording(m.watch_none));
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
      doc.Paragraph({BoldSpan(FillSpans(m.task_heading, {{"task", CodeSpans(task)}}))});
    }
    std::vector<Spans> runs;
    constexpr size_t kShown = 6;
    for (size_t i = 0; i < w.run_ids.size() && i < kShown; ++i) {
      runs.push_back(CodeSpans(w.run_ids[i].substr(0, 8)) + " (" + Wording(TableMsg(lang).call) + " " +
                     CodeSpans(std::to_string(w.calls[i])) + ")");
    }
    if (w.run_ids.size() > kShown) runs.push_back(TextSpans("…"));
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
    Spans where = CodeSpans(w.key.machine);
    if (!w.key.mode.empty() || !w.key.matrix.empty()) where += " " + WorkingSetting(w.key, m);
    if (w.key.phase == v1::PHASE_WARM || w.key.phase == v1::PHASE_VALIDATION) {
      where += " (" +
               Wording(w.key.phase == v1::PHASE_WARM ? TableMsg(lang).phase_warm : TableMsg(lang).phase_validation) +
               ")";
    }
    items.push_back(ListItem{
        where + (lang == Lang::kFr ? " : " : ": ") +
            FillSpans(tmpl, {{"count", RefCountSpans(w.count)},
                             {"runs", JoinSpans(runs, ", ")},
                             {"code", CodeSpans(w.code)},
                             {"reason", w.reason.empty() ? Wording(m.no_mark) : ShortReason(w.reason)}}),
        {}});
  }
  doc.List(std::move(items));
}

void RenderRepetitionSection(const GuideModel& model, Lang lang, Document& doc) {
  if (model.repetition_tables.empty()) return;
  const ModelMessages& m = Msg(lang);
  doc.Heading(2, Wording(m.repetition_section));
  doc.Paragraph(Wording(m.repetition_intro));
  auto values = [&](const std::vector<std::optional<Figure>>& figures, const std::optional<Figure>& median,
                    const std::optional<Spread>& spread) {
    std::vector<Spans> list;
    for (const auto& f : figures) list.push_back(f ? RefSpans(*f, lang) : Wording(m.no_mark));
    Spans joined = JoinSpans(list, ", ");
    return median ? FillSpans(m.median_of,
                              {{"median", RefSpans(*median, lang) + SpreadText(spread, lang)}, {"values", joined}})
                  : joined;
  };
  for (const RepetitionTable& t : model.repetition_tables) {
    doc.Heading(3, FillSpans(m.task_heading, {{"task", CodeSpans(t.task)}}));
    std::vector<Spans> header = {Wording(m.col_platform),
                                 t.axis == "batch_size" ? Wording(m.col_axis) : CellSpans(t.axis)};
    if (!t.latency_label.empty()) {
      header.push_back(FillSpans(m.col_latency_ms, {{"label", CellSpans(LocalWords(t.latency_label, lang))}}));
    }
    header.push_back(FillSpans(m.col_rate, {{"label", CellSpans(FigureName(t.rate_label, t.rate_unit, lang))}}));
    header.push_back(Wording(m.col_max_memory));
    std::vector<std::vector<Spans>> rows;
    for (const RepetitionRow& r : t.rows) {
      std::vector<std::optional<Figure>> rate(r.rate.begin(), r.rate.end());
      std::vector<Spans> cells = {CodeSpans(r.key.machine) + " " + CodeOrNone(r.key.mode, m),
                                  CodeSpans(r.axis_value)};
      if (!t.latency_label.empty()) cells.push_back(values(r.latency_ms, r.latency_median_ms, r.latency_spread_ms));
      cells.push_back(values(rate, r.rate_median, r.rate_spread));
      Spans memory = Wording(m.not_measured);
      if (r.memory_max_gib) {
        std::vector<Spans> each;
        for (const auto& f : r.memory_gib) each.push_back(f ? RefSpans(*f, lang) : Wording(m.no_mark));
        memory = FillSpans(m.max_of, {{"max", RefSpans(*r.memory_max_gib, lang)}, {"values", JoinSpans(each, ", ")}}) +
                 " (" + Wording(MemoryKindWording(TableMsg(lang), r.memory_kind)) + ")";
      }
      cells.push_back(memory);
      rows.push_back(std::move(cells));
    }
    doc.Table(std::move(header), std::move(rows));
  }
}

}  // namespace benchfleet::synthesis
