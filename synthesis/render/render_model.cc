// Sections 4 to 7 of the guide (sections.h): verdicts, thresholds, cost and rules, from the
// GuideModel, built as spans (spans.h): the catalogue's templates filled with values that are never
// parsed. Every figure is printed with RefSpans(); every verbatim identifier (task, class, setting,
// record text) in a code span, and so are the formulas' unit conversions (3600 s/h, one million),
// so the guide's number test finds no digit without a source. Wording: messages_model.cc.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "synthesis/render/spread_text.h"
#include "synthesis/render/inline_text.h"
#include "synthesis/render/messages.h"
#include "synthesis/render/messages_model.h"
#include "synthesis/render/model_text.h"
#include "synthesis/render/sections.h"
#include "synthesis/render/spans.h"

namespace benchfleet::synthesis {
namespace {

bool HasDigit(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string JoinNonEmpty(const std::vector<std::string>& parts) {
  std::vector<std::string> kept;
  for (const std::string& p : parts) {
    if (!p.empty()) kept.push_back(p);
  }
  return Join(kept, " / ");
}

}  // namespace

// Verbatim text from the targets or the records shown as a word (a use name, a currency, a unit):
// plain when it holds no digit, else a code span.
Spans Word(std::string_view text) { return HasDigit(text) ? CodeSpans(text) : CellSpans(text); }

Spans CodeOrNone(const std::string& text, const ModelMessages& m) {
  return text.empty() ? Wording(m.no_mark) : CodeSpans(text);
}

Spans ItemWord(const std::string& item, bool plural, const ModelMessages& m) {
  if (item == "image") return Wording(plural ? m.images : m.image);
  if (item == "token") return Wording(plural ? m.tokens : m.token);
  if (item == "request") return Wording(plural ? m.requests : m.request);
  if (item == "run") return Wording(plural ? m.runs : m.run);
  return Word(item);
}

// A setting as one code span: machine / backend / mode / matrix (empty parts left out).
Spans Setting(const CellKey& key, const ModelMessages& m) {
  Spans setting = CodeOrNone(JoinNonEmpty({key.machine, key.backend, key.mode, key.matrix}), m);
  if (key.phase == v1::PHASE_COLD) setting += " (" + Wording(m.setting_cold) + ")";
  return setting;
}

Spans FigureWithUnit(const Figure& f, Lang lang) {
  return f.unit.empty() ? RefSpans(f, lang) : RefSpans(f, lang) + " " + Word(LocalWords(f.unit, lang));
}

namespace {

// The unit conversions of guide_model.cc's formulas ("x1 * 3600 * x2", "... * 1000000"), shown in
// the arithmetic as the constants they are.
constexpr std::string_view kSecondsPerHourText = "3600";
constexpr std::string_view kMillionText = "1000000";

using Values = SpanValues;

const ModelMessages& Msg(Lang lang) { return lang == Lang::kFr ? ModelMessagesFr() : ModelMessagesEn(); }

void TaskHeading(const std::string& task, const ModelMessages& m, Document& doc) {
  doc.Heading(3, FillSpans(m.task_heading, {{"task", CodeSpans(task)}}));
}

void RenderTaskTargets(const TaskVerdicts& tv, Lang lang, const ModelMessages& m, Document& doc) {
  if (tv.targets == nullptr) {
    doc.Paragraph(Wording(m.no_targets));
    return;
  }
  doc.Paragraph(
      FillSpans(m.task_entry, {{"match", CodeSpans(tv.targets->match)}, {"item", ItemWord(tv.item, false, m)}}));
  // The target figures are sources only once a setting cites them.
  if (tv.cells.empty()) return;
  const CellVerdict& first = tv.cells.front();
  std::vector<ListItem> items;
  for (size_t i = 0; i < tv.targets->uses.size() && i < first.uses.size(); ++i) {
    const UseTarget& use = tv.targets->uses[i];
    Values values = {{"target", RefSpans(first.uses[i].target, lang)},
                     {"item", ItemWord(tv.item, false, m)},
                     {"items", ItemWord(tv.item, true, m)},
                     {"use", Word(use.name)}};
    items.push_back(ListItem{FillSpans(use.max_seconds_per_item ? m.use_max : m.use_min, values) +
                                 (use.interactive ? Wording(m.use_interactive) : Spans()),
                             {}});
  }
  doc.List(std::move(items));
}

void RenderVerdictTable(const TaskVerdicts& tv, Lang lang, const ModelMessages& m, Document& doc) {
  std::vector<Spans> header = {Wording(m.col_class), Wording(m.col_setting), Wording(m.col_figure),
                               Wording(m.col_basis),
                               FillSpans(m.col_seconds_per_item, {{"item", ItemWord(tv.item, false, m)}})};
  if (tv.targets != nullptr) {
    for (const UseTarget& use : tv.targets->uses) header.push_back(Word(use.name));
  }
  header.push_back(Wording(m.col_best));
  std::vector<std::vector<Spans>> rows;
  for (const CellVerdict& v : tv.cells) {
    std::vector<Spans> row = {CodeSpans(v.machine_class), Setting(v.key, m),
                              FigureWithUnit(v.figure, lang) + SpreadText(v.spread, lang),
                              Wording(v.basis == "median" ? m.basis_median : m.basis_worst_run),
                              RefSpans(v.seconds_per_item, lang)};
    for (const UseVerdict& u : v.uses) row.push_back(Wording(u.ok ? m.use_ok : m.use_not_ok));
    row.push_back(Wording(v.best_of_class ? m.best_mark : m.no_mark));
    rows.push_back(std::move(row));
  }
  doc.Table(std::move(header), std::move(rows));
}

void RenderClassSentences(const TaskVerdicts& tv, Lang lang, const ModelMessages& m, Document& doc) {
  std::vector<ListItem> items;
  for (const CellVerdict& v : tv.cells) {
    if (!v.best_of_class) continue;
    std::vector<Spans> judgement;
    for (const UseVerdict& u : v.uses) {
      judgement.push_back(FillSpans(u.ok ? m.fine_for : m.not_for, {{"use", Word(u.use)}}));
    }
    Values values = {{"class", CodeSpans(v.machine_class)},
                     {"setting", Setting(v.key, m)},
                     {"seconds", RefSpans(v.seconds_per_item, lang)},
                     {"item", ItemWord(tv.item, false, m)},
                     {"judgement", JoinSpans(judgement, m.list_separator)}};
    items.push_back(ListItem{FillSpans(judgement.empty() ? m.class_sentence_no_target : m.class_sentence, values), {}});
  }
  doc.List(std::move(items));
}

Spans CapacityText(const Capacity& c, const std::string& item, Lang lang, const ModelMessages& m,
                   const Figure& hours) {
  return FillSpans(m.capacity_line, {{"class", CodeSpans(c.machine_class)},
                                     {"setting", Setting(c.key, m)},
                                     {"ips", RefSpans(c.items_per_second, lang)},
                                     {"items", ItemWord(item, true, m)},
                                     {"k3600", CodeSpans(kSecondsPerHourText)},
                                     {"hours", RefSpans(hours, lang)},
                                     {"day", RefSpans(c.items_per_day, lang)}});
}

Spans UsersText(const Capacity& c, const std::string& item, Lang lang, const ModelMessages& m,
                const Figure& per_user) {
  if (!c.concurrent_users) return {};
  return FillSpans(m.users_part, {{"ips", RefSpans(c.items_per_second, lang)},
                                  {"items", ItemWord(item, true, m)},
                                  {"min", RefSpans(per_user, lang)},
                                  {"users", RefSpans(*c.concurrent_users, lang)}});
}

}  // namespace

void RenderVerdictsSection(const GuideModel& model, Lang lang, Document& doc) {
  const ModelMessages& m = Msg(lang);
  doc.Heading(2, Wording(m.verdicts_section));
  if (model.targets != nullptr) doc.Paragraph(FillSpans(m.targets_used, {{"file", CodeSpans(model.targets->path)}}));
  doc.Paragraph(Wording(m.figure_rule));
  for (const TaskVerdicts& tv : model.verdicts) {
    TaskHeading(tv.task, m, doc);
    RenderTaskTargets(tv, lang, m, doc);
    if (tv.cells.empty()) {
      doc.Paragraph(Wording(m.no_warm_cell));
      continue;
    }
    RenderVerdictTable(tv, lang, m, doc);
    RenderClassSentences(tv, lang, m, doc);
  }
}

void RenderThresholdsSection(const GuideModel& model, Lang lang, Document& doc) {
  const ModelMessages& m = Msg(lang);
  doc.Heading(2, Wording(m.thresholds_section));
  doc.Paragraph(FillSpans(m.thresholds_intro, {{"k3600", CodeSpans(kSecondsPerHourText)}}));
  if (model.thresholds.empty()) {
    doc.Paragraph(Wording(m.no_threshold));
    return;
  }
  for (const TaskThreshold& th : model.thresholds) {
    TaskHeading(th.task, m, doc);
    const Capacity& ref = th.reference;
    doc.Paragraph(FillSpans(th.reference_is_dedicated_gpu ? m.reference_dedicated : m.reference_fastest,
                            {{"class", CodeSpans(ref.machine_class)}, {"setting", Setting(ref.key, m)}}));
    auto capacity = [&](const Capacity& c) {
      return CapacityText(c, th.item, lang, m, th.hours_per_day) +
             (th.per_user ? UsersText(c, th.item, lang, m, *th.per_user) : Spans());
    };
    // In the reader's terms first: the workload above which each other class no longer keeps up.
    std::string interactive_use;
    for (const TaskVerdicts& tv : model.verdicts) {
      if (tv.task != th.task || tv.targets == nullptr) continue;
      for (const UseTarget& use : tv.targets->uses) {
        if (use.interactive && use.min_items_per_second && interactive_use.empty()) interactive_use = use.name;
      }
    }
    std::vector<ListItem> moves;
    for (const TaskThreshold::Other& o : th.others) {
      if (!(o.ratio.value > 1)) {
        moves.push_back(ListItem{FillSpans(m.threshold_holds, {{"class", CodeSpans(o.capacity.machine_class)},
                                                               {"ref_class", CodeSpans(ref.machine_class)}}),
                                 {}});
        continue;
      }
      Spans users;
      if (o.capacity.concurrent_users && !interactive_use.empty()) {
        users = FillSpans(m.threshold_users,
                          {{"users", RefSpans(*o.capacity.concurrent_users, lang)}, {"use", Word(interactive_use)}});
      }
      moves.push_back(ListItem{FillSpans(m.threshold_move, {{"day", RefSpans(o.capacity.items_per_day, lang)},
                                                            {"items", ItemWord(th.item, true, m)},
                                                            {"users", users},
                                                            {"class", CodeSpans(o.capacity.machine_class)},
                                                            {"ref_class", CodeSpans(ref.machine_class)},
                                                            {"ref_day", RefSpans(ref.items_per_day, lang)}}),
                               {}});
    }
    doc.List(std::move(moves));
    doc.Paragraph(Wording(m.threshold_how));
    std::vector<ListItem> how = {ListItem{capacity(ref) + ".", {}}};
    for (const TaskThreshold::Other& o : th.others) {
      Values values = {{"day", RefSpans(o.capacity.items_per_day, lang)},
                       {"items", ItemWord(th.item, true, m)},
                       {"class", CodeSpans(o.capacity.machine_class)},
                       {"ref_class", CodeSpans(ref.machine_class)},
                       {"ref_ips", RefSpans(ref.items_per_second, lang)},
                       {"ips", RefSpans(o.capacity.items_per_second, lang)},
                       {"ratio", RefSpans(o.ratio, lang)}};
      how.push_back(ListItem{
          capacity(o.capacity) + ". " + FillSpans(o.ratio.value > 1 ? m.other_line : m.other_not_slower, values), {}});
    }
    doc.List(std::move(how));
  }
}

void RenderCostSection(const GuideModel& model, Lang lang, Document& doc) {
  const ModelMessages& m = Msg(lang);
  doc.Heading(2, Wording(m.cost_section));
  doc.Paragraph(FillSpans(m.cost_intro, {{"k3600", CodeSpans(kSecondsPerHourText)}}));
  if (model.costs.empty()) {
    doc.Paragraph(Wording(m.no_cost));
    return;
  }
  std::vector<ListItem> lines;
  for (const TaskCost& c : model.costs) {
    // The seconds per item the cost rests on: the verdict of the same setting.
    const CellVerdict* verdict = nullptr;
    for (const TaskVerdicts& tv : model.verdicts) {
      if (tv.task != c.task) continue;
      for (const CellVerdict& v : tv.cells) {
        if (v.key == c.key) verdict = &v;
      }
    }
    if (verdict == nullptr) continue;
    Spans currency = Word(c.currency);
    Spans line = FillSpans(m.cost_line, {{"task", CodeSpans(c.task)},
                                         {"class", CodeSpans(c.machine_class)},
                                         {"setting", Setting(c.key, m)},
                                         {"price", RefSpans(c.price_per_hour, lang)},
                                         {"currency", currency},
                                         {"k3600", CodeSpans(kSecondsPerHourText)},
                                         {"seconds", RefSpans(verdict->seconds_per_item, lang)},
                                         {"item", ItemWord(c.item, false, m)},
                                         {"cost", RefSpans(c.cost_per_item, lang)}});
    if (c.cost_per_million) {
      line += FillSpans(m.cost_million, {{"k1000000", CodeSpans(kMillionText)},
                                         {"cost", RefSpans(*c.cost_per_million, lang)},
                                         {"currency", currency},
                                         {"items", ItemWord(c.item, true, m)}});
    }
    lines.push_back(ListItem{line + ".", {}});
  }
  doc.List(std::move(lines));
}

namespace {

std::string_view RuleTemplate(const std::string& code, const ModelMessages& m) {
  if (code == "GPU_OVER_CPU") return m.rule_gpu_over_cpu;
  if (code == "COLD_START") return m.rule_cold_start;
  if (code == "CACHE_HITS") return m.rule_cache_hits;
  if (code == "PROMPT_CACHE_HITS") return m.rule_prompt_cache_hits;
  if (code == "THROUGHPUT_DROP") return m.rule_throughput_drop;
  if (code == "FASTEST_CLASS") return m.rule_fastest_class;
  if (code == "BEST_SETTING") return m.rule_best_setting;
  if (code == "FAILED_SETTING") return m.rule_failed_setting;
  if (code == "MEMORY_NEED") return m.rule_memory_need;
  if (code == "CHEAPEST") return m.rule_cheapest;
  return {};
}

Spans RuleText(const Rule& r, Lang lang, const ModelMessages& m) {
  auto word = [&](const std::string& name) {
    auto it = r.words.find(name);
    return it == r.words.end() ? std::string() : it->second;
  };
  const std::string item = word("item");
  Values values;
  for (const auto& [name, figure] : r.figures) {
    if (name == "count") {
      values.emplace_back(name, RefCountSpans(figure));  // a number of runs, whole
    } else if (name == "cold" || name == "warm" || name == "memory") {
      values.emplace_back(name, FigureWithUnit(figure, lang));  // the cells' own metrics (tokens/s, s)
    } else {
      values.emplace_back(name, RefSpans(figure, lang));
    }
  }
  values.emplace_back("task", CodeSpans(r.task));
  values.emplace_back("item", ItemWord(item, false, m));
  values.emplace_back("items", ItemWord(item, true, m));
  CellKey key;
  key.backend = word("backend");
  key.mode = word("mode");
  key.matrix = word("matrix");
  values.emplace_back("setting", Setting(key, m));
  values.emplace_back("currency", Word(word("currency")));
  Spans per = FillSpans(word("per_million").empty() ? m.rule_per_item : m.rule_per_million,
                        {{"currency", Word(word("currency"))}, {"item", ItemWord(item, false, m)},
                         {"items", ItemWord(item, true, m)}});
  values.emplace_back("per", per);
  if (const std::string bytes = word("capacity_bytes"); !bytes.empty()) {
    values.emplace_back("capacity", CodeSpans(ConditionsSizeText(std::stoull(bytes), lang)));
  }
  for (const char* name : {"machine", "class", "second_class", "drop_class", "gpu_setting", "cpu_setting",
                           "best_matrix", "worst_matrix", "codes", "reason", "message", "drop_call"}) {
    values.emplace_back(name, CodeOrNone(word(name), m));
  }
  // A memory kind in the catalogue's words ("process peak RSS (host memory)"), never its enum name.
  v1::MemoryKind kind = v1::MEMORY_KIND_UNSPECIFIED;
  if (const std::string name = word("kind"); !name.empty() && v1::MemoryKind_Parse(name, &kind)) {
    values.emplace_back("kind", Wording(MemoryKindWording(lang == Lang::kFr ? MessagesFr() : MessagesEn(), kind)));
  } else {
    values.emplace_back("kind", CodeOrNone(word("kind"), m));
  }
  std::string_view tmpl = RuleTemplate(r.code, m);
  if (r.code == "MEMORY_NEED" && r.words.contains("capacity_bytes")) tmpl = m.rule_memory_need_of;
  Spans text = FillSpans(tmpl, values);
  // The fastest class' comparison rests on sustained rates when a class drops: said so.
  if (r.code == "FASTEST_CLASS" && r.words.contains("drop_class")) text += " " + FillSpans(m.rule_fastest_drop, values);
  return text;
}

}  // namespace

void RenderRulesSection(const GuideModel& model, Lang lang, Document& doc) {
  const ModelMessages& m = Msg(lang);
  doc.Heading(2, Wording(m.rules_section));
  doc.Paragraph(Wording(m.rules_intro));
  if (model.rules.empty()) {
    doc.Paragraph(Wording(m.no_rule));
    return;
  }
  std::vector<ListItem> items;
  for (const Rule& r : model.rules) items.push_back(ListItem{RuleText(r, lang, m), {}});
  doc.List(std::move(items));
}

}  // namespace benchfleet::synthesis
