// The answer's part of the guide (guide_model.h: DeriveDecisions): per task, one decision row per
// machine class (its best setting, burst and sustained levels when its throughput drops, runs,
// memory), the traps to watch counted per cell and code, and the Workflow v6 method's repetition
// tables. Every figure is a source of the Analysis' table, added in a fixed walk so ids stay
// deterministic.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/run_flags.h"
#include "synthesis/analysis/guide_model.h"

namespace benchfleet::synthesis {
namespace {

constexpr std::string_view kThroughputDrop = "THROUGHPUT_DROP";
// The backend whose cells get the Workflow v6 method's own table.
constexpr std::string_view kWorkflowBackend = "workflow";

std::string ProvenanceOfSource(const SourceTable& sources, const std::string& id) {
  const Source* s = sources.Find(id);
  return s != nullptr && s->provenance.size() == 1 ? s->provenance[0] : "unknown";
}

// A count source over runs cited by their "value" sources.
Figure CountOf(const std::vector<const RunFigure*>& runs, SourceTable& sources) {
  std::vector<std::string> ids, provenance;
  for (const RunFigure* rf : runs) {
    ids.push_back(rf->run_id);
    provenance.push_back(ProvenanceOfSource(sources, rf->figure.source_id));
  }
  return Figure{static_cast<double>(runs.size()), "runs", sources.AddCount(std::move(ids), std::move(provenance))};
}

// The level of `runs` (non-empty): median from kMedianMinRuns on, else the value or the range.
Level LevelOf(const std::vector<const RunFigure*>& runs, const std::string& unit, SourceTable& sources) {
  Level level;
  level.runs = runs.size();
  level.first_call = runs.front()->call_index;
  level.last_call = runs.back()->call_index;
  std::vector<std::string> refs;
  std::vector<double> values;
  for (const RunFigure* rf : runs) {
    refs.push_back(rf->figure.source_id);
    values.push_back(rf->figure.value);
    level.first_call = std::min(level.first_call, rf->call_index);
    level.last_call = std::max(level.last_call, rf->call_index);
  }
  const std::vector<double> in_run_order = values;
  std::sort(values.begin(), values.end());
  if (runs.size() == 1) {
    level.min = runs.front()->figure;
  } else if (runs.size() >= static_cast<size_t>(kMedianMinRuns)) {
    level.median = Figure{Quantile(values, 0.5), unit, sources.AddAggregate("median", refs)};
    level.spread = AddSpreadOfRefs(in_run_order, refs, unit, &sources);
  } else {
    level.min = Figure{values.front(), unit, sources.AddAggregate("min", refs)};
    level.max = Figure{values.back(), unit, sources.AddAggregate("max", std::move(refs))};
  }
  return level;
}

DecisionRow RowOf(const CellVerdict& verdict, const Cell& cell, const Analysis& analysis, SourceTable& sources) {
  DecisionRow row;
  row.verdict = verdict;
  std::vector<const RunFigure*> all;
  for (const RunFigure& rf : cell.runs) all.push_back(&rf);
  row.runs = CountOf(all, sources);
  row.excluded = cell.excluded_count;
  // The first call the records flag as a drop splits the accepted runs in two.
  std::optional<uint32_t> drop;
  for (const Trap& t : analysis.traps) {
    if (t.key == cell.key && t.code == kThroughputDrop && (!drop || t.call_index < *drop)) drop = t.call_index;
  }
  if (drop) {
    std::vector<const RunFigure*> before, after;
    for (const RunFigure& rf : cell.runs) (rf.call_index < *drop ? before : after).push_back(&rf);
    if (!before.empty() && !after.empty()) {
      row.drop_call = *drop;
      row.burst = LevelOf(before, cell.unit, sources);
      row.sustained = LevelOf(after, cell.unit, sources);
    }
  }
  for (const MemoryEntry& m : cell.memory) {
    const bool better_kind = !row.memory || (IsDeviceMemory(m.kind) && !IsDeviceMemory(row.memory->kind));
    const bool same_family = row.memory && IsDeviceMemory(m.kind) == IsDeviceMemory(row.memory->kind);
    if (better_kind || (same_family && m.bytes.value > row.memory->bytes.value)) row.memory = m;
  }
  return row;
}

void Decisions(const Analysis& analysis, SourceTable& sources, GuideModel* model) {
  for (const TaskVerdicts& tv : model->verdicts) {
    TaskDecision decision;
    decision.task = tv.task;
    decision.item = tv.item;
    for (const CellVerdict& v : tv.cells) {
      if (!v.best_of_class) continue;
      const Cell* cell = FindCell(analysis, v.key);
      if (cell == nullptr) continue;
      decision.rows.push_back(RowOf(v, *cell, analysis, sources));
    }
    model->decisions.push_back(std::move(decision));
  }
}

void Watches(const Analysis& analysis, SourceTable& sources, GuideModel* model) {
  // Traps come sorted by key, run order, then flag order: one Watch per (key, code, cause).
  using Group = std::tuple<CellKey, std::string, std::string>;
  std::map<Group, size_t> index;
  std::vector<std::vector<const Trap*>> groups;
  std::vector<Group> order;
  for (const Trap& t : analysis.traps) {
    auto [it, inserted] = index.emplace(Group{t.key, t.code, t.cause}, groups.size());
    if (inserted) {
      groups.emplace_back();
      order.emplace_back(t.key, t.code, t.cause);
    }
    groups[it->second].push_back(&t);
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    Watch w;
    w.key = std::get<0>(order[g]);
    w.code = std::get<1>(order[g]);
    w.cause = std::get<2>(order[g]);
    w.reason = groups[g].front()->reason;
    // Each run once, in trap order; a hash index, as a cell of a large fleet has many thousand.
    absl::flat_hash_map<std::string_view, size_t> position;
    for (const Trap* t : groups[g]) {
      if (!position.emplace(t->run_id, w.run_ids.size()).second) continue;
      w.run_ids.push_back(t->run_id);
      w.calls.push_back(t->call_index);
    }
    // A trap's run has a "value" source when it has the cell's figure; else its provenance is
    // unknown. A run in both lists takes its kept figure's provenance.
    std::vector<std::string> provenance(w.run_ids.size(), "unknown");
    if (const Cell* cell = FindCell(analysis, w.key); cell != nullptr) {
      for (const ExcludedRun& e : cell->excluded) {
        auto it = e.figure ? position.find(e.run_id) : position.end();
        if (it != position.end()) provenance[it->second] = ProvenanceOfSource(sources, e.figure->source_id);
      }
      for (const RunFigure& rf : cell->runs) {
        auto it = position.find(rf.run_id);
        if (it != position.end()) provenance[it->second] = ProvenanceOfSource(sources, rf.figure.source_id);
      }
    }
    w.count = Figure{static_cast<double>(w.run_ids.size()), "runs", sources.AddCount(w.run_ids, provenance)};
    model->watches.push_back(std::move(w));
  }
}

// "batch_size=8;mode=nvidia" -> {"batch_size", "8"}: the first key other than "mode" whose value
// is a number; nullopt when there is none.
std::optional<std::pair<std::string, std::string>> NumericAxis(const std::string& matrix) {
  size_t start = 0;
  while (start < matrix.size()) {
    size_t end = matrix.find(';', start);
    if (end == std::string::npos) end = matrix.size();
    std::string part = matrix.substr(start, end - start);
    start = end + 1;
    size_t eq = part.find('=');
    if (eq == std::string::npos) continue;
    std::string key = part.substr(0, eq), value = part.substr(eq + 1);
    if (key == "mode" || value.empty()) continue;
    if (std::all_of(value.begin(), value.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; })) {
      return std::make_pair(key, value);
    }
  }
  return std::nullopt;
}

std::optional<Figure> Scaled(const std::optional<Figure>& f, const char* formula, double factor, bool divide,
                             const char* unit, SourceTable& sources) {
  if (!f) return std::nullopt;
  const double x1 = f->value;
  return sources.AddFormula(formula, {x1}, {f->source_id}, divide ? x1 / factor : x1 * factor, unit);
}

void RepetitionTables(const Analysis& analysis, SourceTable& sources, GuideModel* model) {
  constexpr double kMsPerSecond = 1000, kBytesPerGiB = 1073741824;
  std::map<std::string, RepetitionTable> tables;
  std::vector<std::string> tasks;
  for (const Cell& cell : analysis.cells) {
    if (cell.key.backend != kWorkflowBackend || cell.runs.empty()) continue;
    auto axis = NumericAxis(cell.key.matrix);
    if (!axis) continue;
    auto [it, inserted] = tables.try_emplace(cell.key.task);
    RepetitionTable& table = it->second;
    if (inserted) {
      tasks.push_back(cell.key.task);
      table.task = cell.key.task;
      table.axis = axis->first;
      table.rate_label = cell.label;
      table.rate_unit = cell.unit;
    }
    if (axis->first != table.axis) continue;
    // The latency: the first further figure measured in seconds.
    std::optional<size_t> latency;
    for (size_t i = 0; i < cell.further.size(); ++i) {
      if (cell.further[i].unit == "s") {
        latency = i;
        break;
      }
    }
    if (latency && table.latency_label.empty()) table.latency_label = cell.further[*latency].label;
    RepetitionRow row;
    row.key = cell.key;
    row.axis_value = axis->second;
    for (const RunFigure& rf : cell.runs) {
      row.rate.push_back(rf.figure);
      std::optional<Figure> seconds = latency && *latency < rf.further.size() ? rf.further[*latency] : std::nullopt;
      row.latency_ms.push_back(Scaled(seconds, "x1 * 1000", kMsPerSecond, false, "ms", sources));
      row.memory_gib.push_back(Scaled(rf.memory_bytes, "x1 / 1073741824", kBytesPerGiB, true, "GiB", sources));
      if (rf.memory_bytes) row.memory_kind = rf.memory_kind;
    }
    row.rate_median = cell.median;
    row.rate_spread = cell.spread;
    if (latency) {
      const FurtherFigure& f = cell.further[*latency];
      row.latency_median_ms = Scaled(f.median, "x1 * 1000", kMsPerSecond, false, "ms", sources);
      if (f.spread) row.latency_spread_ms = ScaleSpread(*f.spread, "x1 * 1000", kMsPerSecond, "ms", &sources);
    }
    const MemoryEntry* largest = nullptr;
    for (const MemoryEntry& m : cell.memory) {
      if (m.kind == row.memory_kind && (largest == nullptr || m.bytes.value > largest->bytes.value)) largest = &m;
    }
    if (largest != nullptr) {
      row.memory_max_gib = Scaled(largest->bytes, "x1 / 1073741824", kBytesPerGiB, true, "GiB", sources);
    }
    table.rows.push_back(std::move(row));
  }
  for (const std::string& task : tasks) model->repetition_tables.push_back(std::move(tables.at(task)));
}

}  // namespace

void DeriveDecisions(Analysis* analysis, GuideModel* model) {
  Decisions(*analysis, analysis->sources, model);
  Watches(*analysis, analysis->sources, model);
  RepetitionTables(*analysis, analysis->sources, model);
}

}  // namespace benchfleet::synthesis
