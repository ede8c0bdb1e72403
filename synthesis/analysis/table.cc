#include "synthesis/analysis/table.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iterator>
#include <map>
#include <string_view>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "common/run_flags.h"

namespace benchfleet::synthesis {
namespace {

// The figure of runs whose records carry no declaration: the run's wall time.
constexpr std::string_view kWallSeconds = "wall_seconds";

// A cell key that refers to a row's strings: looked up per row without copying them.
struct CellKeyView {
  std::string_view task, machine, backend, mode, matrix;
  v1::Phase phase;
};

struct CellKeyLess {
  using is_transparent = void;
  // CellKey's order (matrices by MatrixStringLess), over views and keys alike.
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    const auto x = std::tie(a.task, a.machine, a.backend, a.mode);
    const auto y = std::tie(b.task, b.machine, b.backend, b.mode);
    if (x != y) return x < y;
    if (a.matrix != b.matrix) return MatrixStringLess(a.matrix, b.matrix);
    return a.phase < b.phase;
  }
};

std::map<CellKey, std::vector<const RunRow*>> GroupByCell(const std::vector<const RunRow*>& records,
                                                          const std::vector<std::string_view>& machines) {
  // Looked up by views and CellKey built once per cell: a key of five strings copied per record
  // was a tenth of the analysis at a million runs.
  std::map<CellKey, std::vector<const RunRow*>, CellKeyLess> cells;
  for (size_t i = 0; i < records.size(); ++i) {
    const RunRow& r = *records[i];
    const std::string_view machine = machines[i];
    const CellKeyView view{r.task, machine, r.backend, r.mode, r.matrix, r.phase};
    auto it = cells.find(view);
    if (it == cells.end()) {
      it = cells.emplace(CellKey{std::string(r.task), std::string(machine), std::string(r.backend),
                                 std::string(r.mode), std::string(r.matrix), r.phase},
                         std::vector<const RunRow*>{}).first;
    }
    it->second.push_back(&r);
  }
  // Records usually come oldest first already (the database reader sorts them): check first.
  for (auto& [key, runs] : cells) {
    if (!std::is_sorted(runs.begin(), runs.end(), RunBefore)) std::sort(runs.begin(), runs.end(), RunBefore);
  }
  return {std::make_move_iterator(cells.begin()), std::make_move_iterator(cells.end())};
}

void AppendTraps(const CellKey& key, const std::vector<const RunRow*>& runs, std::vector<Trap>* traps) {
  for (const auto* r : runs) {
    if (r->status == v1::RunStatus::CODE_FAILED) {
      traps->push_back(Trap{key, std::string(r->run_id), r->call_index, "FAILED", std::string(r->status_message), /*cause=*/""});
    }
    std::string cause;
    for (const auto& f : r->flags) {
      if (f.code == "THROTTLED") cause = "THROTTLED";
      if (f.code == "CONTENDED" && cause.empty()) cause = "CONTENDED";
    }
    for (const auto& f : r->flags) {
      traps->push_back(Trap{key, std::string(r->run_id), r->call_index, std::string(f.code), std::string(f.reason),
                            f.code == "THROUGHPUT_DROP" ? cause : std::string()});
    }
  }
}

// Bytes for people: a formula source in MiB below one GiB, else in GiB (literal divisors).
Figure HumanBytes(const Figure& bytes, SourceTable* table) {
  constexpr double kMiB = 1048576, kGiB = 1073741824;
  const double x1 = bytes.value;
  if (x1 < kGiB) return table->AddFormula("x1 / 1048576", {x1}, {bytes.source_id}, x1 / kMiB, "MiB");
  return table->AddFormula("x1 / 1073741824", {x1}, {bytes.source_id}, x1 / kGiB, "GiB");
}

Cell BuildCell(const CellKey& key, const std::vector<const RunRow*>& runs, SourceTable* table) {
  Cell cell;
  cell.key = key;
  std::vector<const RunRow*> ok;
  ok.reserve(runs.size());
  for (const auto* r : runs) {
    cell.simulated = cell.simulated || r->simulated;
    if (r->status == v1::RunStatus::CODE_OK) ok.push_back(r);
  }
  cell.metric = SelectMetricName(ok);
  cell.label = cell.metric;
  for (const auto* r : ok) {
    auto m = std::find_if(r->metrics.begin(), r->metrics.end(),
                          [&](const RunRow::Metric& x) { return x.name == cell.metric; });
    if (cell.metric == kWallSeconds) {
      // Read from wall_duration; a reader that declares it (a ComfyUI log) gives its label.
      if (!MetricOf(*r, cell.metric)) continue;
      cell.unit = "s";
      if (m != r->metrics.end() && !m->label.empty()) cell.label = std::string(m->label);
      break;
    }
    m = std::find_if(r->metrics.begin(), r->metrics.end(),
                          [&](const RunRow::Metric& x) { return x.name == cell.metric; });
    if (m != r->metrics.end()) {
      cell.unit = std::string(m->unit);
      if (!m->label.empty()) cell.label = std::string(m->label);
      cell.better = m->better == v1::BETTER_UNSPECIFIED ? v1::BETTER_HIGHER : m->better;
      break;
    }
  }

  // Reserved: growing a vector of a cell's quarter of a million runs moved every one each time.
  std::vector<const RunRow*> accepted;
  accepted.reserve(ok.size());
  cell.runs.reserve(ok.size());
  for (const auto* r : runs) {
    std::optional<double> value = MetricOf(*r, cell.metric);
    std::optional<Figure> figure;
    if (value) {
      figure = Figure{*value, cell.unit, table->AddValue(r->run_id, r->provenance, *value)};
    }
    if (r->status != v1::RunStatus::CODE_OK) {
      cell.excluded.push_back(ExcludedRun{std::string(r->run_id), r->call_index,
                                          r->status == v1::RunStatus::CODE_FAILED ? "FAILED" : "NOT_OK",
                                          std::string(r->status_message), figure});
      continue;
    }
    auto flag = std::find_if(r->flags.begin(), r->flags.end(),
                             [](const RunRow::Flag& f) { return ExcludesRun(f.code); });
    if (flag != r->flags.end()) {
      cell.excluded.push_back(ExcludedRun{std::string(r->run_id), r->call_index, std::string(flag->code),
                                          std::string(flag->reason), figure});
      continue;
    }
    if (!figure) {
      cell.excluded.push_back(
          ExcludedRun{std::string(r->run_id), r->call_index, "MISSING_METRIC", "no " + cell.metric, std::nullopt});
      continue;
    }
    // The duration chart's figure: the cell's own when its metric is wall time, else the run's own
    // "value" source, added right after its figure's so the ids stay deterministic.
    std::optional<Figure> wall;
    if (cell.metric == kWallSeconds) {
      wall = *figure;
    } else if (std::optional<double> seconds = MetricOf(*r, kWallSeconds)) {
      wall = Figure{*seconds, "s", table->AddValue(r->run_id, r->provenance, *seconds)};
    }
    RunFigure& run = cell.runs.emplace_back();
    run.run_id = std::string(r->run_id);
    run.call_index = r->call_index;
    run.figure = *figure;
    run.wall_seconds = wall;
    accepted.push_back(r);
  }

  const size_t n = cell.runs.size();
  if (n >= 1) {
    // The aggregates cite each accepted run's "value" source, which names the run, its provenance
    // and its figure, instead of repeating the three: at a million runs, five copies of every run
    // id, provenance and figure per cell were most of sources.csv's half a gigabyte and of the
    // analysis' memory.
    std::vector<std::string> refs;
    std::vector<double> in_run_order;
    refs.reserve(n);
    in_run_order.reserve(n);
    for (const auto& rf : cell.runs) {
      refs.push_back(rf.figure.source_id);
      in_run_order.push_back(rf.figure.value);
    }
    std::vector<double> sorted = in_run_order;
    std::sort(sorted.begin(), sorted.end());
    const bool with_median = n >= static_cast<size_t>(kMedianMinRuns);
    const bool with_quartiles = n > static_cast<size_t>(kDistributionAboveRuns);
    // The last aggregate takes `refs` itself, the others a copy; the spread, after a median, reads it.
    auto aggregate = [&](const char* op, double value, bool last) {
      return Figure{value, cell.unit, table->AddAggregate(op, last ? std::move(refs) : refs)};
    };
    cell.min = aggregate("min", sorted.front(), false);
    cell.max = aggregate("max", sorted.back(), !with_median);
    if (with_median) cell.median = aggregate("median", Quantile(sorted, 0.5), false);
    if (with_quartiles) {
      cell.q1 = aggregate("q1", Quantile(sorted, 0.25), false);
      cell.q3 = aggregate("q3", Quantile(sorted, 0.75), false);
      cell.distribution_only = true;
    }
    // The bootstrap draws from the figures in run order, as the sources list them.
    if (with_median) cell.spread = AddSpreadOfRefs(in_run_order, refs, cell.unit, table);
  }

  if (!cell.excluded.empty()) {
    // Each excluded id's provenance is that of the first run (in run order) with the id: one pass
    // over the runs with a hash lookup, not a search of the whole cell per excluded run.
    std::unordered_map<std::string_view, const RunRow*> first_with_id;
    for (const auto& e : cell.excluded) first_with_id.emplace(e.run_id, nullptr);
    for (const auto* r : runs) {
      auto it = first_with_id.find(r->run_id);
      if (it != first_with_id.end() && it->second == nullptr) it->second = r;
    }
    std::vector<std::string> ids, provenance;
    for (const auto& e : cell.excluded) {
      ids.push_back(e.run_id);
      const RunRow* r = first_with_id.at(e.run_id);
      provenance.push_back(r != nullptr ? std::string(r->provenance) : "unknown");
    }
    cell.excluded_count = Figure{static_cast<double>(ids.size()), "runs", table->AddCount(ids, provenance)};
  }

  // Further headline figures: each name's values over the accepted runs, by headline rank.
  struct FurtherAcc {
    FurtherFigure figure;
    std::vector<std::string> ids, provenance;
    std::vector<double> inputs;
  };
  std::map<std::pair<uint32_t, std::string_view>, FurtherAcc> further;
  for (const auto* r : accepted) {
    for (const auto& m : r->metrics) {
      if (m.headline <= 1 || m.name == cell.metric) continue;
      FurtherAcc& acc = further[{m.headline, m.name}];
      if (acc.ids.empty()) {
        acc.figure.name = std::string(m.name);
        acc.figure.label = m.label.empty() ? std::string(m.name) : std::string(m.label);
        acc.figure.unit = std::string(m.unit);
        acc.figure.headline = m.headline;
      }
      acc.ids.emplace_back(r->run_id);
      acc.provenance.emplace_back(r->provenance);
      acc.inputs.push_back(m.value);
    }
  }
  for (auto& [rank_name, acc] : further) {
    FurtherFigure f = std::move(acc.figure);
    const size_t runs = acc.inputs.size();
    std::vector<double> sorted = acc.inputs;
    std::sort(sorted.begin(), sorted.end());
    if (runs >= static_cast<size_t>(kMedianMinRuns)) {
      f.median = Figure{Quantile(sorted, 0.5), f.unit, table->Add("median", acc.ids, acc.provenance, acc.inputs)};
      f.spread = AddSpreadOfInputs(acc.inputs, acc.ids, acc.provenance, f.unit, table);
    } else if (runs == 1) {
      f.min = Figure{sorted.front(), f.unit, table->Add("value", acc.ids, acc.provenance, acc.inputs)};
    } else {
      f.min = Figure{sorted.front(), f.unit, table->Add("min", acc.ids, acc.provenance, acc.inputs)};
      f.max = Figure{sorted.back(), f.unit, table->Add("max", acc.ids, acc.provenance, acc.inputs)};
    }
    // Seconds under one read as milliseconds ("29.1 ms", not "0.0291 s").
    if (f.unit == "s" && sorted.back() < 1) {
      auto ms = [&](const std::optional<Figure>& s) -> std::optional<Figure> {
        if (!s) return std::nullopt;
        return table->AddFormula("x1 * 1000", {s->value}, {s->source_id}, s->value * 1000, "ms");
      };
      f.median_ms = ms(f.median);
      f.min_ms = ms(f.min);
      f.max_ms = ms(f.max);
      if (f.spread) f.spread_ms = ScaleSpread(*f.spread, "x1 * 1000", 1000, "ms", table);
    }
    cell.further.push_back(std::move(f));
  }

  // Memory: max per (kind, scope) over accepted runs; the first run (in run order) at the max wins.
  struct Acc {
    uint64_t max = 0;
    std::string source;
    std::vector<std::string> ids, provenance;
    std::vector<double> inputs;
  };
  std::map<std::pair<int, std::string_view>, Acc> memory;
  for (const auto* r : accepted) {
    for (const auto& m : r->memory) {
      Acc& acc = memory[{m.kind, m.scope}];
      if (acc.ids.empty() || m.bytes > acc.max) {
        acc.max = m.bytes;
        acc.source = m.source;
      }
      acc.ids.emplace_back(r->run_id);
      acc.provenance.emplace_back(r->provenance);
      acc.inputs.push_back(static_cast<double>(m.bytes));
    }
  }
  for (auto& [kind_scope, acc] : memory) {
    auto kind = static_cast<v1::MemoryKind>(kind_scope.first);
    std::string op = acc.ids.size() == 1 ? "value" : "max";
    Figure bytes{static_cast<double>(acc.max), "bytes", table->Add(op, acc.ids, acc.provenance, acc.inputs)};
    cell.memory.push_back(MemoryEntry{kind, v1::MemoryKind_Name(kind), std::string(kind_scope.second), acc.source,
                                      bytes, HumanBytes(bytes, table)});
  }

  // A small cell's runs, each with its own further figures and memory (a repetition table's rows).
  if (cell.runs.size() <= static_cast<size_t>(kDistributionAboveRuns)) {
    // The cell's largest memory kind (device kinds before host ones, as MemoryEntry sorts them).
    std::optional<v1::MemoryKind> kind;
    double largest = -1;
    for (const MemoryEntry& e : cell.memory) {
      if (e.bytes.value > largest) {
        largest = e.bytes.value;
        kind = e.kind;
      }
    }
    for (size_t i = 0; i < cell.runs.size(); ++i) {
      RunFigure& rf = cell.runs[i];
      const RunRow& r = *accepted[i];
      for (const FurtherFigure& f : cell.further) {
        auto m = std::find_if(r.metrics.begin(), r.metrics.end(),
                              [&](const RunRow::Metric& x) { return x.name == f.name; });
        rf.further.push_back(m == r.metrics.end() ? std::nullopt
                                                  : std::optional<Figure>(Figure{
                                                        m->value, f.unit, table->AddValue(r.run_id, r.provenance, m->value)}));
      }
      if (!kind) continue;
      uint64_t bytes = 0;
      bool found = false;
      for (const auto& m : r.memory) {
        if (m.kind == *kind && (!found || m.bytes > bytes)) {
          bytes = m.bytes;
          found = true;
        }
      }
      if (found) {
        rf.memory_kind = *kind;
        rf.memory_bytes =
            Figure{static_cast<double>(bytes), "bytes", table->AddValue(r.run_id, r.provenance, static_cast<double>(bytes))};
      }
    }
  }
  return cell;
}

// Shifts the ids of every figure of `cell` (SourceTable::AppendShifted).
void ShiftCellSourceIds(size_t shift, Cell* cell) {
  if (shift == 0) return;
  auto shift_figure = [shift](Figure& f) { ShiftSourceId(shift, &f.source_id); };
  for (RunFigure& rf : cell->runs) {
    shift_figure(rf.figure);
    if (rf.wall_seconds) shift_figure(*rf.wall_seconds);
  }
  for (ExcludedRun& e : cell->excluded) {
    if (e.figure) shift_figure(*e.figure);
  }
  for (std::optional<Figure>* f : {&cell->excluded_count, &cell->min, &cell->max, &cell->median, &cell->q1, &cell->q3}) {
    if (f->has_value()) shift_figure(**f);
  }
  if (cell->spread) ShiftSpreadSourceIds(shift, &*cell->spread);
  for (MemoryEntry& m : cell->memory) {
    shift_figure(m.bytes);
    shift_figure(m.human);
  }
  for (RunFigure& rf : cell->runs) {
    for (std::optional<Figure>& f : rf.further) {
      if (f) shift_figure(*f);
    }
    if (rf.memory_bytes) shift_figure(*rf.memory_bytes);
  }
  for (FurtherFigure& f : cell->further) {
    for (std::optional<Figure>* x : {&f.median, &f.min, &f.max, &f.median_ms, &f.min_ms, &f.max_ms}) {
      if (x->has_value()) shift_figure(**x);
    }
    for (std::optional<Spread>* x : {&f.spread, &f.spread_ms}) {
      if (x->has_value()) ShiftSpreadSourceIds(shift, &**x);
    }
  }
}

}  // namespace

const Cell* FindCell(const Analysis& analysis, const CellKey& key) {
  auto it = std::lower_bound(analysis.cells.begin(), analysis.cells.end(), key,
                             [](const Cell& c, const CellKey& k) { return c.key < k; });
  return it != analysis.cells.end() && it->key == key ? &*it : nullptr;
}

std::string DefaultMachineOf(const v1::RunRecord& record) {
  auto it = record.params().find("machine");
  return it != record.params().end() && !it->second.empty() ? it->second : record.agent_id();
}

std::string_view DefaultMachineOfRow(const RunRow& row) {
  std::optional<std::string_view> machine = row.FindParam("machine");
  return machine && !machine->empty() ? *machine : row.agent_id;
}

std::string SelectMetricName(const std::vector<const RunRow*>& runs) {
  // Counted by view: runs of one backend share one interned name, so this is a handful of entries.
  std::vector<std::pair<std::string_view, size_t>> counts;
  for (const auto* r : runs) {
    for (const auto& m : r->metrics) {
      if (m.headline != 1) continue;
      auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == m.name; });
      if (it == counts.end()) {
        counts.emplace_back(m.name, 1);
      } else {
        ++it->second;
      }
      break;
    }
  }
  if (counts.empty()) return std::string(kWallSeconds);
  auto best = counts.begin();
  for (auto it = counts.begin(); it != counts.end(); ++it) {
    if (it->second > best->second) best = it;
  }
  return std::string(best->first);
}

std::optional<double> MetricOf(const RunRow& row, std::string_view metric) {
  if (metric == kWallSeconds) {
    if (!row.has_wall_duration) return std::nullopt;
    return row.wall_seconds;
  }
  for (const auto& m : row.metrics) {
    if (m.name == metric) return m.value;
  }
  return std::nullopt;
}

double Quantile(const std::vector<double>& sorted, double p) {
  const double h = (static_cast<double>(sorted.size()) - 1) * p;
  const size_t lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

namespace {

// The rows of `records`, the label of each, and views of the labels (what AnalyzeLabelled takes).
struct Labelled {
  RunRows rows;
  std::vector<std::string> labels;
  std::vector<std::string_view> views;

  Labelled(const std::vector<v1::RunRecord>& records, const MachineOf& machine_of) {
    AddRows(records, &rows);
    labels.reserve(records.size());
    for (const v1::RunRecord& r : records) labels.push_back(machine_of(r));
    views.assign(labels.begin(), labels.end());
  }
};

}  // namespace

Analysis Analyze(const std::vector<v1::RunRecord>& records, const MachineOf& machine_of) {
  const Labelled labelled(records, machine_of);
  return AnalyzeLabelled(labelled.rows.rows, labelled.views);
}

Analysis AnalyzeLabelled(const std::vector<const RunRow*>& records, const std::vector<std::string_view>& machines) {
  Analysis analysis;
  const auto groups = GroupByCell(records, machines);
  std::vector<const std::pair<const CellKey, std::vector<const RunRow*>>*> cells;
  for (const auto& group : groups) cells.push_back(&group);

  // Each cell is built with a source table of its own (ids from S1), on a few threads at a million
  // runs (where building the cells is most of the analysis); the tables then join in cell order,
  // their ids shifted, so every id is the one of building the cells one after the other.
  struct Built {
    Cell cell;
    SourceTable sources;
    std::vector<Trap> traps;
  };
  std::vector<Built> built(cells.size());
  std::atomic<size_t> next{0};
  auto build = [&] {
    for (size_t i = next++; i < cells.size(); i = next++) {
      const auto& [key, runs] = *cells[i];
      built[i].sources.Reserve(2 * runs.size() + 8);  // a value and a wall time a run, a few more
      built[i].cell = BuildCell(key, runs, &built[i].sources);
      AppendTraps(key, runs, &built[i].traps);
    }
  };
  constexpr size_t kRecordsPerThread = 50000;  // below that, a thread costs more than it saves
  const size_t threads = std::min<size_t>(
      {cells.size(), std::max<size_t>(1, std::thread::hardware_concurrency()), 8, 1 + records.size() / kRecordsPerThread});
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < threads; ++t) helpers.emplace_back(build);
  build();
  for (std::thread& t : helpers) t.join();

  // At most two "value" sources a run and a handful a cell, plus the guide model's few hundred:
  // reserved once, since growing a vector of millions of sources moves all of them each time.
  analysis.sources.Reserve(2 * records.size() + 8 * cells.size() + 1024);
  for (Built& b : built) {
    const size_t shift = analysis.sources.AppendShifted(std::move(b.sources));
    ShiftCellSourceIds(shift, &b.cell);
    analysis.simulated = analysis.simulated || b.cell.simulated;
    analysis.cells.push_back(std::move(b.cell));
    std::move(b.traps.begin(), b.traps.end(), std::back_inserter(analysis.traps));
  }
  return analysis;
}

std::vector<Trap> FindTraps(const std::vector<v1::RunRecord>& records, const MachineOf& machine_of) {
  std::vector<Trap> traps;
  const Labelled labelled(records, machine_of);
  for (const auto& [key, runs] : GroupByCell(labelled.rows.rows, labelled.views)) AppendTraps(key, runs, &traps);
  return traps;
}

}  // namespace benchfleet::synthesis
