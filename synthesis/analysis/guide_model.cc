// Sections 4 to 7 of the guide (guide_model.h): verdicts against the targets, thresholds for moving
// to a dedicated GPU, cost, and the rules drawn from the measurements. Every figure is added to the
// Analysis' SourceTable; a formula's value is computed here with the very operations, in the very
// order (left to right), that its text states, so the guide's test recomputes the same double.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <tuple>
#include <utility>
#include <vector>

#include "common/run_flags.h"
#include "synthesis/analysis/guide_model.h"

namespace benchfleet::synthesis {
namespace {

// Unit conversions written as literals in the formulas (never figures).
constexpr double kSecondsPerHour = 3600;
constexpr double kPerMillion = 1000000;
// COLD_START is printed when a cold call takes more than this many warm calls' time.
constexpr double kColdStartRatio = 1.5;

std::string ClassOf(const GuideContext& context, const std::string& machine) {
  auto it = context.class_of_machine.find(machine);
  return it != context.class_of_machine.end() && !it->second.empty() ? it->second : machine;
}

// A rate (tokens/s, images/s) is higher-better; the rest (seconds, the wall-time fallback) lower.
bool IsRate(const Cell& cell) { return cell.better == v1::BETTER_HIGHER; }

struct CellFigure {
  std::string basis;
  Figure figure;
};

// The cell's figure: its median when it has one, else its worst accepted run (the lowest rate, the
// highest seconds; the first such run in run order).
std::optional<CellFigure> FigureOf(const Cell& cell) {
  if (cell.median) return CellFigure{"median", *cell.median};
  if (cell.runs.empty()) return std::nullopt;
  const RunFigure* worst = &cell.runs.front();
  for (const RunFigure& rf : cell.runs) {
    if (IsRate(cell) ? rf.figure.value < worst->figure.value : rf.figure.value > worst->figure.value) worst = &rf;
  }
  return CellFigure{"worst_run", worst->figure};
}

std::vector<std::string> TasksInCellOrder(const Analysis& analysis) {
  std::vector<std::string> tasks;
  for (const Cell& c : analysis.cells) {
    if (std::find(tasks.begin(), tasks.end(), c.key.task) == tasks.end()) tasks.push_back(c.key.task);
  }
  return tasks;
}

std::string PerSecondUnit(const std::string& item) { return item + "s/s"; }
std::string SecondsPerUnit(const std::string& item) { return "s/" + item; }

Figure Target(SourceTable& sources, const TargetNumber& n, std::string unit) {
  return Figure{n.value, std::move(unit), sources.AddTarget(n.value, n.where)};
}

// Judges one warm cell whose figure is positive; `use_targets` parallels `targets->uses`.
CellVerdict Judge(const Cell& cell, const CellFigure& cf, const std::string& machine_class, const std::string& item,
                  const TaskTargets* targets, const std::vector<Figure>& use_targets, SourceTable& sources) {
  CellVerdict v;
  v.key = cell.key;
  v.machine_class = machine_class;
  v.basis = cf.basis;
  v.figure = cf.figure;
  if (cf.basis == "median") v.spread = cell.spread;
  const double x1 = cf.figure.value;
  if (IsRate(cell)) {
    v.seconds_per_item = sources.AddFormula("1 / x1", {x1}, {cf.figure.source_id}, 1 / x1, SecondsPerUnit(item));
    v.items_per_second = sources.AddFormula("x1", {x1}, {cf.figure.source_id}, x1, PerSecondUnit(item));
  } else {
    v.seconds_per_item = sources.AddFormula("x1", {x1}, {cf.figure.source_id}, x1, SecondsPerUnit(item));
    v.items_per_second = sources.AddFormula("1 / x1", {x1}, {cf.figure.source_id}, 1 / x1, PerSecondUnit(item));
  }
  if (targets != nullptr) {
    for (size_t i = 0; i < targets->uses.size(); ++i) {
      const UseTarget& use = targets->uses[i];
      bool ok = use.max_seconds_per_item ? v.seconds_per_item.value <= use.max_seconds_per_item->value
                                         : v.items_per_second.value >= use.min_items_per_second->value;
      v.uses.push_back(UseVerdict{use.name, ok, use_targets[i]});
    }
  }
  return v;
}

TaskVerdicts VerdictsFor(const std::string& task, const GuideContext& context, const Analysis& analysis,
                         SourceTable& sources) {
  TaskVerdicts tv;
  tv.task = task;
  tv.targets = TargetsFor(context.targets, task);
  tv.item = tv.targets != nullptr ? tv.targets->item : "run";
  // Warm cells with a positive figure (a zero figure has no seconds per item), by class then key.
  std::vector<std::tuple<std::string, const Cell*, CellFigure>> judged;
  for (const Cell& c : analysis.cells) {
    if (c.key.task != task || !IsJudgedCell(c, analysis)) continue;
    std::optional<CellFigure> cf = FigureOf(c);
    if (!cf || !(cf->figure.value > 0)) continue;
    judged.emplace_back(ClassOf(context, c.key.machine), &c, *cf);
  }
  std::stable_sort(judged.begin(), judged.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)->key) < std::tie(std::get<0>(b), std::get<1>(b)->key);
  });
  // Each target is one source per task, added before the cells that cite it.
  std::vector<Figure> use_targets;
  if (tv.targets != nullptr && !judged.empty()) {
    for (const UseTarget& use : tv.targets->uses) {
      use_targets.push_back(use.max_seconds_per_item
                                ? Target(sources, *use.max_seconds_per_item, SecondsPerUnit(tv.item))
                                : Target(sources, *use.min_items_per_second, PerSecondUnit(tv.item)));
    }
  }
  for (const auto& [machine_class, cell, cf] : judged) {
    tv.cells.push_back(Judge(*cell, cf, machine_class, tv.item, tv.targets, use_targets, sources));
  }
  std::map<std::string, CellVerdict*> best;
  for (CellVerdict& v : tv.cells) {
    CellVerdict*& b = best[v.machine_class];
    if (b == nullptr || v.items_per_second.value > b->items_per_second.value) b = &v;
  }
  for (auto& [machine_class, v] : best) v->best_of_class = true;
  return tv;
}

std::vector<const CellVerdict*> BestOfClass(const TaskVerdicts& tv) {
  std::vector<const CellVerdict*> out;
  for (const CellVerdict& v : tv.cells) {
    if (v.best_of_class) out.push_back(&v);
  }
  return out;
}

const ClassTargets* ClassTargetsOf(const Targets& targets, const std::string& machine_class) {
  for (const ClassTargets& c : targets.classes) {
    if (c.name == machine_class) return &c;
  }
  return nullptr;
}

std::optional<TaskThreshold> ThresholdFor(const TaskVerdicts& tv, const GuideContext& context,
                                          SourceTable& sources) {
  std::vector<const CellVerdict*> best = BestOfClass(tv);
  if (best.size() < 2) return std::nullopt;
  TaskThreshold th;
  th.task = tv.task;
  th.item = tv.item;
  const CellVerdict* ref = nullptr;
  for (const CellVerdict* v : best) {
    const ClassTargets* ct = ClassTargetsOf(context.targets, v->machine_class);
    if (ct == nullptr || !ct->dedicated_gpu) continue;
    if (ref == nullptr || v->items_per_second.value > ref->items_per_second.value) ref = v;
  }
  th.reference_is_dedicated_gpu = ref != nullptr;
  if (ref == nullptr) {
    for (const CellVerdict* v : best) {
      if (ref == nullptr || v->items_per_second.value > ref->items_per_second.value) ref = v;
    }
  }
  // The interactive use's minimum rate defines one concurrent user.
  std::optional<Figure> per_user;
  if (tv.targets != nullptr) {
    for (size_t i = 0; i < tv.targets->uses.size(); ++i) {
      const UseTarget& use = tv.targets->uses[i];
      if (use.interactive && use.min_items_per_second && i < ref->uses.size()) {
        per_user = ref->uses[i].target;
        break;
      }
    }
  }
  Figure hours = Target(sources, context.targets.hours_per_day, "h/day");
  th.hours_per_day = hours;
  th.per_user = per_user;
  auto capacity = [&](const CellVerdict& v) {
    Capacity c;
    c.key = v.key;
    c.machine_class = v.machine_class;
    c.items_per_second = v.items_per_second;
    const double x1 = v.items_per_second.value, x2 = hours.value;
    c.items_per_day = sources.AddFormula("x1 * 3600 * x2", {x1, x2}, {v.items_per_second.source_id, hours.source_id},
                                         x1 * kSecondsPerHour * x2, tv.item + "s/day");
    if (per_user) {
      c.concurrent_users = sources.AddFormula("x1 / x2", {x1, per_user->value},
                                              {v.items_per_second.source_id, per_user->source_id},
                                              x1 / per_user->value, "users");
    }
    return c;
  };
  th.reference = capacity(*ref);
  std::vector<const CellVerdict*> others;
  for (const CellVerdict* v : best) {
    if (v != ref) others.push_back(v);
  }
  std::stable_sort(others.begin(), others.end(), [](const CellVerdict* a, const CellVerdict* b) {
    return a->items_per_second.value < b->items_per_second.value;
  });
  for (const CellVerdict* v : others) {
    TaskThreshold::Other o;
    o.capacity = capacity(*v);
    const double x1 = ref->items_per_second.value, x2 = v->items_per_second.value;
    o.ratio = sources.AddFormula("x1 / x2", {x1, x2}, {ref->items_per_second.source_id, v->items_per_second.source_id},
                                 x1 / x2, "x");
    th.others.push_back(std::move(o));
  }
  return th;
}

void CostsFor(const TaskVerdicts& tv, const GuideContext& context, SourceTable& sources, std::vector<TaskCost>* out) {
  for (const CellVerdict* v : BestOfClass(tv)) {
    const ClassTargets* ct = ClassTargetsOf(context.targets, v->machine_class);
    if (ct == nullptr || !ct->price_per_hour) continue;
    TaskCost cost;
    cost.task = tv.task;
    cost.item = tv.item;
    cost.key = v->key;
    cost.machine_class = v->machine_class;
    cost.currency = ct->currency;
    cost.price_per_hour = Target(sources, *ct->price_per_hour, ct->currency + "/h");
    const double x1 = cost.price_per_hour.value, x2 = v->seconds_per_item.value;
    const std::vector<std::string> refs = {cost.price_per_hour.source_id, v->seconds_per_item.source_id};
    cost.cost_per_item =
        sources.AddFormula("x1 / 3600 * x2", {x1, x2}, refs, x1 / kSecondsPerHour * x2, ct->currency + "/" + tv.item);
    if (tv.item == "token") {
      cost.cost_per_million = sources.AddFormula("x1 / 3600 * x2 * 1000000", {x1, x2}, refs,
                                                 x1 / kSecondsPerHour * x2 * kPerMillion,
                                                 ct->currency + "/million tokens");
    }
    out->push_back(std::move(cost));
  }
}


// Section 7: each code in the header's order, then by task; a rule's sources are added only when
// its condition holds, so sources.csv holds no figure the guide does not print.
class RuleBuilder {
 public:
  RuleBuilder(const GuideContext& context, Analysis* analysis, GuideModel* model)
      : context_(context), analysis_(*analysis), sources_(analysis->sources), model_(*model) {}

  void Build() {
    for (const TaskVerdicts& tv : model_.verdicts) GpuOverCpu(tv);
    for (const TaskVerdicts& tv : model_.verdicts) ColdStart(tv);
    for (const TaskVerdicts& tv : model_.verdicts) {
      // Two caches, two remedies: a server's execution cache (ComfyUI's) wants an input of each run's
      // own, a prompt cache (llama-server's) turning off.
      TrapCount(tv, "CACHE_HITS", {std::string(kCacheHitFlag)});
      TrapCount(tv, "PROMPT_CACHE_HITS", {std::string(kPromptCacheUsedFlag)});
    }
    for (const TaskVerdicts& tv : model_.verdicts) TrapCount(tv, "THROUGHPUT_DROP", {"THROUGHPUT_DROP"});
    for (const TaskVerdicts& tv : model_.verdicts) FastestClass(tv);
    for (const TaskVerdicts& tv : model_.verdicts) Cheapest(tv);
    for (const TaskVerdicts& tv : model_.verdicts) BestSetting(tv);
    for (const TaskVerdicts& tv : model_.verdicts) FailedSetting(tv);
    for (const TaskVerdicts& tv : model_.verdicts) MemoryNeed(tv);
  }

 private:
  static Rule NewRule(std::string code, const TaskVerdicts& tv) {
    Rule r;
    r.code = std::move(code);
    r.task = tv.task;
    r.words["item"] = tv.item;
    return r;
  }

  void SettingWords(const CellKey& key, Rule& r) const {
    r.words["machine"] = key.machine;
    r.words["class"] = ClassOf(context_, key.machine);
    r.words["backend"] = key.backend;
    r.words["mode"] = key.mode;
    r.words["matrix"] = key.matrix;
  }

  Figure Ratio(const Figure& a, const Figure& b) {
    return sources_.AddFormula("x1 / x2", {a.value, b.value}, {a.source_id, b.source_id}, a.value / b.value, "x");
  }

  // A run's provenance is that of the first "value" source of its figure (failed and cached runs
  // keep one when they have a value); "unknown" for a run that has none. Looked up for these runs
  // only, in one pass over the sources: a map of every run's would cost more than all the rules
  // (two sources a run, a million runs). The rules add no "value" source, so the pass sees the
  // same ones whenever it runs.
  Figure Count(const std::vector<std::string>& run_ids) {
    std::unordered_map<std::string_view, const std::string*> found;
    for (const std::string& id : run_ids) found.emplace(id, nullptr);
    for (const Source& s : sources_.sources()) {
      if (s.operation == "value" && s.run_ids.size() == 1 && s.provenance.size() == 1) {
        auto it = found.find(s.run_ids[0]);
        if (it != found.end() && it->second == nullptr) it->second = &s.provenance[0];
      }
    }
    std::vector<std::string> provenance;
    for (const std::string& id : run_ids) {
      const std::string* p = found.at(id);
      provenance.push_back(p != nullptr ? *p : "unknown");
    }
    return Figure{static_cast<double>(run_ids.size()), "runs", sources_.AddCount(run_ids, provenance)};
  }

  // GPU_OVER_CPU: per machine, its best warm "gpu" setting against its best warm "cpu" one.
  void GpuOverCpu(const TaskVerdicts& tv) {
    std::map<std::string, std::pair<const CellVerdict*, const CellVerdict*>> by_machine;
    for (const CellVerdict& v : tv.cells) {
      auto& [gpu, cpu] = by_machine[v.key.machine];
      const CellVerdict*& slot = v.key.mode == "gpu" ? gpu : cpu;
      if (v.key.mode != "gpu" && v.key.mode != "cpu") continue;
      if (slot == nullptr || v.items_per_second.value > slot->items_per_second.value) slot = &v;
    }
    for (const auto& [machine, pair] : by_machine) {
      const auto& [gpu, cpu] = pair;
      if (gpu == nullptr || cpu == nullptr) continue;
      if (!(gpu->items_per_second.value / cpu->items_per_second.value > 1)) continue;
      Rule r = NewRule("GPU_OVER_CPU", tv);
      SettingWords(gpu->key, r);
      r.words.erase("mode");
      r.words["gpu_setting"] = gpu->key.backend + (gpu->key.matrix.empty() ? "" : " / " + gpu->key.matrix);
      r.words["cpu_setting"] = cpu->key.backend + (cpu->key.matrix.empty() ? "" : " / " + cpu->key.matrix);
      r.figures["ratio"] = Ratio(gpu->items_per_second, cpu->items_per_second);
      r.figures["gpu"] = gpu->items_per_second;
      r.figures["cpu"] = cpu->items_per_second;
      model_.rules.push_back(std::move(r));
    }
  }

  // COLD_START: a cold cell against the warm cell of the same setting, seconds per item to seconds
  // per item, over the two cells' own figures.
  void ColdStart(const TaskVerdicts& tv) {
    for (const Cell& cold : analysis_.cells) {
      if (cold.key.task != tv.task || cold.key.phase != v1::PHASE_COLD) continue;
      std::optional<CellFigure> cf = FigureOf(cold);
      if (!cf || !(cf->figure.value > 0)) continue;
      CellKey warm_key = cold.key;
      warm_key.phase = v1::PHASE_WARM;
      auto warm = std::find_if(tv.cells.begin(), tv.cells.end(),
                               [&](const CellVerdict& v) { return v.key == warm_key; });
      if (warm == tv.cells.end()) continue;
      const Cell* warm_cell = nullptr;
      for (const Cell& c : analysis_.cells) {
        if (c.key == warm_key) warm_cell = &c;
      }
      if (warm_cell == nullptr) continue;
      const double x1 = cf->figure.value, x2 = warm->figure.value;
      std::string formula;
      double ratio = 0;
      if (IsRate(cold) && IsRate(*warm_cell)) {
        formula = "x2 / x1";
        ratio = x2 / x1;
      } else if (IsRate(cold)) {
        formula = "1 / x1 / x2";
        ratio = 1 / x1 / x2;
      } else if (IsRate(*warm_cell)) {
        formula = "x1 * x2";
        ratio = x1 * x2;
      } else {
        formula = "x1 / x2";
        ratio = x1 / x2;
      }
      if (!(ratio > kColdStartRatio)) continue;
      Rule r = NewRule("COLD_START", tv);
      SettingWords(cold.key, r);
      r.figures["ratio"] =
          sources_.AddFormula(formula, {x1, x2}, {cf->figure.source_id, warm->figure.source_id}, ratio, "x");
      r.figures["cold"] = cf->figure;
      r.figures["warm"] = warm->figure;
      model_.rules.push_back(std::move(r));
    }
  }

  // CACHE_HITS, THROUGHPUT_DROP: the runs the records flag, counted once each.
  void TrapCount(const TaskVerdicts& tv, const std::string& code, const std::set<std::string>& flags) {
    std::vector<std::string> run_ids, codes;
    std::unordered_set<std::string> seen;
    std::string first_reason;
    for (const Trap& t : analysis_.traps) {
      if (t.key.task != tv.task || !flags.count(t.code)) continue;
      if (run_ids.empty()) first_reason = t.reason;
      if (seen.insert(t.run_id).second) run_ids.push_back(t.run_id);
      if (std::find(codes.begin(), codes.end(), t.code) == codes.end()) codes.push_back(t.code);
    }
    if (run_ids.empty()) return;
    Rule r = NewRule(code, tv);
    std::string joined;
    for (const std::string& c : codes) joined += (joined.empty() ? "" : ", ") + c;
    r.words["codes"] = joined;
    r.words["reason"] = first_reason;
    r.figures["count"] = Count(run_ids);
    model_.rules.push_back(std::move(r));
  }

  // FASTEST_CLASS: the best class' best setting against the second class' best setting.
  void FastestClass(const TaskVerdicts& tv) {
    std::vector<const CellVerdict*> best = BestOfClass(tv);
    if (best.size() < 2) return;
    std::stable_sort(best.begin(), best.end(), [](const CellVerdict* a, const CellVerdict* b) {
      return a->items_per_second.value > b->items_per_second.value;
    });
    if (!(best[0]->items_per_second.value / best[1]->items_per_second.value > 1)) return;
    Rule r = NewRule("FASTEST_CLASS", tv);
    SettingWords(best[0]->key, r);
    r.words["class"] = best[0]->machine_class;
    r.words["second_class"] = best[1]->machine_class;
    r.figures["ratio"] = Ratio(best[0]->items_per_second, best[1]->items_per_second);
    r.figures["best"] = best[0]->items_per_second;
    r.figures["second"] = best[1]->items_per_second;
    // A class judged on its sustained rate says so, with the burst it reached first.
    for (const CellVerdict* v : {best[0], best[1]}) {
      const DecisionRow* row = DecisionRowOf(tv.task, v->key);
      if (row == nullptr || !row->burst || r.words.contains("drop_class")) continue;
      const Level& burst = *row->burst;
      r.words["drop_class"] = v->machine_class;
      r.words["drop_call"] = std::to_string(row->drop_call);
      r.figures["burst"] = burst.median ? *burst.median : burst.max ? *burst.max : *burst.min;
    }
    model_.rules.push_back(std::move(r));
  }

  const DecisionRow* DecisionRowOf(const std::string& task, const CellKey& key) const {
    for (const TaskDecision& d : model_.decisions) {
      if (d.task != task) continue;
      for (const DecisionRow& row : d.rows) {
        if (row.verdict.key == key) return &row;
      }
    }
    return nullptr;
  }

  // CHEAPEST: among the classes whose best setting meets every use, the lowest cost per item
  // against the next one in the same currency.
  void Cheapest(const TaskVerdicts& tv) {
    std::vector<const TaskCost*> meeting;
    for (const TaskCost& c : model_.costs) {
      if (c.task != tv.task) continue;
      auto v = std::find_if(tv.cells.begin(), tv.cells.end(), [&](const CellVerdict& x) { return x.key == c.key; });
      if (v == tv.cells.end() || v->uses.empty() ||
          !std::all_of(v->uses.begin(), v->uses.end(), [](const UseVerdict& u) { return u.ok; })) {
        continue;
      }
      meeting.push_back(&c);
    }
    std::stable_sort(meeting.begin(), meeting.end(), [](const TaskCost* a, const TaskCost* b) {
      return a->cost_per_item.value < b->cost_per_item.value;
    });
    for (size_t i = 1; i < meeting.size(); ++i) {
      if (meeting[i]->currency != meeting[0]->currency) continue;
      if (!(meeting[i]->cost_per_item.value > meeting[0]->cost_per_item.value)) return;
      const TaskCost& cheap = *meeting[0];
      const TaskCost& next = *meeting[i];
      Rule r = NewRule("CHEAPEST", tv);
      SettingWords(cheap.key, r);
      r.words["class"] = cheap.machine_class;
      r.words["second_class"] = next.machine_class;
      r.words["currency"] = cheap.currency;
      const bool million = cheap.cost_per_million && next.cost_per_million;
      r.figures["cost"] = million ? *cheap.cost_per_million : cheap.cost_per_item;
      r.figures["second_cost"] = million ? *next.cost_per_million : next.cost_per_item;
      r.words["per_million"] = million ? "yes" : "";
      r.figures["ratio"] = Ratio(r.figures["second_cost"], r.figures["cost"]);
      model_.rules.push_back(std::move(r));
      return;
    }
  }

  // BEST_SETTING: within a class, backend and mode, the best matrix combination against the worst.
  void BestSetting(const TaskVerdicts& tv) {
    std::map<std::tuple<std::string, std::string, std::string>, std::vector<const CellVerdict*>> groups;
    for (const CellVerdict& v : tv.cells) groups[{v.machine_class, v.key.backend, v.key.mode}].push_back(&v);
    for (const auto& [group, cells] : groups) {
      std::set<std::string> matrices;
      for (const CellVerdict* v : cells) matrices.insert(v->key.matrix);
      if (matrices.size() < 2) continue;
      const CellVerdict *best = cells.front(), *worst = cells.front();
      for (const CellVerdict* v : cells) {
        if (v->items_per_second.value > best->items_per_second.value) best = v;
        if (v->items_per_second.value < worst->items_per_second.value) worst = v;
      }
      if (!(best->items_per_second.value / worst->items_per_second.value > 1)) continue;
      Rule r = NewRule("BEST_SETTING", tv);
      SettingWords(best->key, r);
      r.words["class"] = std::get<0>(group);
      r.words["best_matrix"] = best->key.matrix;
      r.words["worst_matrix"] = worst->key.matrix;
      r.figures["ratio"] = Ratio(best->items_per_second, worst->items_per_second);
      r.figures["best"] = best->items_per_second;
      r.figures["worst"] = worst->items_per_second;
      model_.rules.push_back(std::move(r));
    }
  }

  // FAILED_SETTING: a setting (all phases) with runs, every one of them FAILED.
  void FailedSetting(const TaskVerdicts& tv) {
    std::map<CellKey, std::vector<const Cell*>> settings;
    for (const Cell& c : analysis_.cells) {
      if (c.key.task != tv.task) continue;
      CellKey setting = c.key;
      setting.phase = v1::PHASE_UNSPECIFIED;
      settings[setting].push_back(&c);
    }
    for (const auto& [setting, cells] : settings) {
      std::vector<std::string> run_ids;
      std::string message;
      bool all_failed = true;
      for (const Cell* c : cells) {
        if (!c->runs.empty()) all_failed = false;
        for (const ExcludedRun& e : c->excluded) {
          if (e.code != "FAILED") all_failed = false;
          if (run_ids.empty()) message = e.reason;
          run_ids.push_back(e.run_id);
        }
      }
      if (!all_failed || run_ids.empty()) continue;
      Rule r = NewRule("FAILED_SETTING", tv);
      SettingWords(setting, r);
      r.words["message"] = message;
      r.figures["count"] = Count(run_ids);
      model_.rules.push_back(std::move(r));
    }
  }

  // MEMORY_NEED: per kind (never merged), the largest peak of the task's accepted runs: device
  // memory in any mode, process peak RSS in "cpu" mode only (there it is the model's footprint).
  void MemoryNeed(const TaskVerdicts& tv) {
    std::map<int, std::pair<const Cell*, const MemoryEntry*>> largest;
    for (const Cell& c : analysis_.cells) {
      if (c.key.task != tv.task) continue;
      for (const MemoryEntry& m : c.memory) {
        bool device = IsDeviceMemory(m.kind);
        bool cpu_rss = m.kind == v1::MEMORY_KIND_PROCESS_PEAK_RSS && c.key.mode == "cpu";
        if (!device && !cpu_rss) continue;
        auto& [cell, entry] = largest[m.kind];
        if (entry == nullptr || m.bytes.value > entry->bytes.value) {
          cell = &c;
          entry = &m;
        }
      }
    }
    for (const auto& [kind, pair] : largest) {
      const auto& [cell, entry] = pair;
      Rule r = NewRule("MEMORY_NEED", tv);
      SettingWords(cell->key, r);
      r.words["kind"] = entry->label;
      r.words["scope"] = entry->scope;
      // The headroom: the capacity of the memory the kind lives in, as the machine's conditions say.
      if (uint64_t bytes = MemoryCapacityBytes(model_.series, cell->key.machine, entry->kind); bytes > 0) {
        r.words["capacity_bytes"] = std::to_string(bytes);
      }
      r.figures["memory"] = entry->human;  // MiB or GiB, a formula over the peak's bytes
      model_.rules.push_back(std::move(r));
    }
  }

  const GuideContext& context_;
  const Analysis& analysis_;
  SourceTable& sources_;
  GuideModel& model_;
};

}  // namespace

bool IsJudgedCell(const Cell& cell, const Analysis& analysis) {
  if (cell.key.phase == v1::PHASE_WARM) return true;
  if (cell.key.phase != v1::PHASE_COLD) return false;
  CellKey warm = cell.key;
  warm.phase = v1::PHASE_WARM;
  return FindCell(analysis, warm) == nullptr;
}

uint64_t MemoryCapacityBytes(const std::vector<SeriesConditions>& series, const std::string& machine,
                             v1::MemoryKind kind) {
  for (const SeriesConditions& s : series) {
    if (s.machine != machine || !s.conditions) continue;
    uint64_t bytes = 0;
    if (IsDeviceMemory(kind)) {
      for (const auto& a : s.conditions->accelerators()) bytes = std::max<uint64_t>(bytes, a.memory_bytes());
    } else {
      bytes = s.conditions->memory_bytes();
    }
    if (bytes > 0) return bytes;
  }
  return 0;
}

void DeriveVerdicts(const GuideContext& context, Analysis* analysis, GuideModel* model) {
  model->targets = &context.targets;
  for (const std::string& task : TasksInCellOrder(*analysis)) {
    model->verdicts.push_back(VerdictsFor(task, context, *analysis, analysis->sources));
  }
  for (const TaskVerdicts& tv : model->verdicts) {
    if (auto th = ThresholdFor(tv, context, analysis->sources)) model->thresholds.push_back(std::move(*th));
  }
  for (const TaskVerdicts& tv : model->verdicts) CostsFor(tv, context, analysis->sources, &model->costs);
}

void DeriveRules(const GuideContext& context, Analysis* analysis, GuideModel* model) {
  RuleBuilder builder(context, analysis, model);
  builder.Build();
}

GuideModel BuildGuideModel(const std::vector<v1::RunRecord>& records, const GuideContext& context,
                           const MachineOf& machine_of, Analysis* analysis) {
  return BuildGuideModel(DraftSeries(records, context, machine_of), context, analysis);
}

GuideModel BuildGuideModel(std::vector<SeriesDraft> series, const GuideContext& context, Analysis* analysis) {
  GuideModel model;
  model.series = AddSeriesSources(std::move(series), analysis);
  DeriveVerdicts(context, analysis, &model);
  DeriveDecisions(analysis, &model);
  DeriveRules(context, analysis, &model);
  return model;
}

}  // namespace benchfleet::synthesis
