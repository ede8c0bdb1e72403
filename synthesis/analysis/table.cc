#include "synthesis/analysis/table.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace benchfleet::synthesis {
namespace {

// Preference order of the figure shown per cell: the throughput a backend reports, else wall time.
constexpr const char* kThroughputMetrics[] = {"predicted_per_second", "images_per_second", "tokens_per_second"};

bool IsExcludingFlag(const std::string& code) {
  // INVALIDATED: an operator marked the run invalid (benchfleet runs invalidate).
  return code == "CACHE_HIT" || code == "PROMPT_CACHE_USED" || code == "CONTENDED" || code == "INVALIDATED";
}

std::string MatrixString(const v1::RunRecord& r) {
  std::map<std::string, std::string> sorted(r.matrix().begin(), r.matrix().end());
  std::string out;
  for (const auto& [k, v] : sorted) out += (out.empty() ? "" : ";") + k + "=" + v;
  return out;
}

CellKey KeyOf(const v1::RunRecord& r, const MachineOf& machine_of) {
  return CellKey{r.task(), machine_of(r), r.backend(), r.mode(), MatrixString(r), r.phase()};
}

// Run order: start_time, then call_index, then run_id (unique), so any input permutation sorts alike.
// References, not copies: make_tuple would copy both run ids at every comparison of the sort.
bool RunBefore(const v1::RunRecord* a, const v1::RunRecord* b) {
  const int64_t as = a->start_time().seconds(), bs = b->start_time().seconds();
  const int32_t an = a->start_time().nanos(), bn = b->start_time().nanos();
  const uint32_t ac = a->call_index(), bc = b->call_index();
  return std::tie(as, an, ac, a->run_id()) < std::tie(bs, bn, bc, b->run_id());
}

std::map<CellKey, std::vector<const v1::RunRecord*>> GroupByCell(const std::vector<v1::RunRecord>& records,
                                                                 const MachineOf& machine_of) {
  std::map<CellKey, std::vector<const v1::RunRecord*>> cells;
  for (const auto& r : records) cells[KeyOf(r, machine_of)].push_back(&r);
  for (auto& [key, runs] : cells) std::sort(runs.begin(), runs.end(), RunBefore);
  return cells;
}

std::string UnitOf(const v1::RunRecord& r, const std::string& metric) {
  if (metric == "wall_seconds") return "s";
  for (const auto& m : r.metrics()) {
    if (m.name() == metric) return m.unit();
  }
  return "";
}

void AppendTraps(const CellKey& key, const std::vector<const v1::RunRecord*>& runs, std::vector<Trap>* traps) {
  for (const auto* r : runs) {
    if (r->status().code() == v1::RunStatus::CODE_FAILED) {
      traps->push_back(Trap{key, r->run_id(), r->call_index(), "FAILED", r->status().message()});
    }
    for (const auto& f : r->flags()) traps->push_back(Trap{key, r->run_id(), r->call_index(), f.code(), f.reason()});
  }
}

// Adds a derived figure over the accepted runs; inputs stay in run order, paired with run_ids.
Figure Derived(SourceTable* table, const std::string& op, double value, const std::string& unit,
               const std::vector<RunFigure>& runs, const std::vector<std::string>& provenance) {
  std::vector<std::string> ids;
  std::vector<double> inputs;
  for (const auto& rf : runs) {
    ids.push_back(rf.run_id);
    inputs.push_back(rf.figure.value);
  }
  return Figure{value, unit, table->Add(op, ids, provenance, inputs)};
}

Cell BuildCell(const CellKey& key, const std::vector<const v1::RunRecord*>& runs, SourceTable* table) {
  Cell cell;
  cell.key = key;
  std::vector<const v1::RunRecord*> ok;
  for (const auto* r : runs) {
    cell.simulated = cell.simulated || r->simulated();
    if (r->status().code() == v1::RunStatus::CODE_OK) ok.push_back(r);
  }
  cell.metric = SelectMetricName(ok);
  for (const auto* r : ok) {
    if (MetricOf(*r, cell.metric)) {
      cell.unit = UnitOf(*r, cell.metric);
      break;
    }
  }

  std::vector<const v1::RunRecord*> accepted;
  std::vector<std::string> accepted_provenance;
  for (const auto* r : runs) {
    std::optional<double> value = MetricOf(*r, cell.metric);
    std::optional<Figure> figure;
    if (value) {
      figure = Figure{*value, cell.unit, table->Add("value", {r->run_id()}, {ProvenanceOf(*r)}, {*value})};
    }
    if (r->status().code() != v1::RunStatus::CODE_OK) {
      cell.excluded.push_back(ExcludedRun{r->run_id(), r->call_index(),
                                          r->status().code() == v1::RunStatus::CODE_FAILED ? "FAILED" : "NOT_OK",
                                          r->status().message(), figure});
      continue;
    }
    auto flag = std::find_if(r->flags().begin(), r->flags().end(),
                             [](const v1::Flag& f) { return IsExcludingFlag(f.code()); });
    if (flag != r->flags().end()) {
      cell.excluded.push_back(ExcludedRun{r->run_id(), r->call_index(), flag->code(), flag->reason(), figure});
      continue;
    }
    if (!figure) {
      cell.excluded.push_back(
          ExcludedRun{r->run_id(), r->call_index(), "MISSING_METRIC", "no " + cell.metric, std::nullopt});
      continue;
    }
    // The duration chart's figure: the cell's own when its metric is wall time, else the run's own
    // "value" source, added right after its figure's so the ids stay deterministic.
    std::optional<Figure> wall;
    if (cell.metric == "wall_seconds") {
      wall = *figure;
    } else if (std::optional<double> seconds = MetricOf(*r, "wall_seconds")) {
      wall = Figure{*seconds, "s", table->Add("value", {r->run_id()}, {ProvenanceOf(*r)}, {*seconds})};
    }
    cell.runs.push_back(RunFigure{r->run_id(), r->call_index(), *figure, wall});
    accepted.push_back(r);
    accepted_provenance.push_back(ProvenanceOf(*r));
  }

  const size_t n = cell.runs.size();
  if (n >= 1) {
    std::vector<double> sorted;
    for (const auto& rf : cell.runs) sorted.push_back(rf.figure.value);
    std::sort(sorted.begin(), sorted.end());
    cell.min = Derived(table, "min", sorted.front(), cell.unit, cell.runs, accepted_provenance);
    cell.max = Derived(table, "max", sorted.back(), cell.unit, cell.runs, accepted_provenance);
    if (n >= static_cast<size_t>(kMedianMinRuns)) {
      cell.median = Derived(table, "median", Quantile(sorted, 0.5), cell.unit, cell.runs, accepted_provenance);
    }
    if (n > static_cast<size_t>(kDistributionAboveRuns)) {
      cell.q1 = Derived(table, "q1", Quantile(sorted, 0.25), cell.unit, cell.runs, accepted_provenance);
      cell.q3 = Derived(table, "q3", Quantile(sorted, 0.75), cell.unit, cell.runs, accepted_provenance);
      cell.distribution_only = true;
    }
  }

  if (!cell.excluded.empty()) {
    // Each excluded id's provenance is that of the first run (in run order) with the id: one pass
    // over the runs with a hash lookup, not a search of the whole cell per excluded run.
    std::unordered_map<std::string_view, const v1::RunRecord*> first_with_id;
    for (const auto& e : cell.excluded) first_with_id.emplace(e.run_id, nullptr);
    for (const auto* r : runs) {
      auto it = first_with_id.find(r->run_id());
      if (it != first_with_id.end() && it->second == nullptr) it->second = r;
    }
    std::vector<std::string> ids, provenance;
    for (const auto& e : cell.excluded) {
      ids.push_back(e.run_id);
      const v1::RunRecord* r = first_with_id.at(e.run_id);
      provenance.push_back(r != nullptr ? ProvenanceOf(*r) : "unknown");
    }
    cell.excluded_count = Figure{static_cast<double>(ids.size()), "runs", table->AddCount(ids, provenance)};
  }

  // Memory: max per (kind, scope) over accepted runs; the first run (in run order) at the max wins.
  struct Acc {
    uint64_t max = 0;
    std::string source;
    std::vector<std::string> ids, provenance;
    std::vector<double> inputs;
  };
  std::map<std::pair<int, std::string>, Acc> memory;
  for (const auto* r : accepted) {
    for (const auto& m : r->memory()) {
      Acc& acc = memory[{m.kind(), m.scope()}];
      if (acc.ids.empty() || m.bytes() > acc.max) {
        acc.max = m.bytes();
        acc.source = m.source();
      }
      acc.ids.push_back(r->run_id());
      acc.provenance.push_back(ProvenanceOf(*r));
      acc.inputs.push_back(static_cast<double>(m.bytes()));
    }
  }
  for (auto& [kind_scope, acc] : memory) {
    auto kind = static_cast<v1::MemoryKind>(kind_scope.first);
    std::string op = acc.ids.size() == 1 ? "value" : "max";
    cell.memory.push_back(MemoryEntry{
        kind, v1::MemoryKind_Name(kind), kind_scope.second, acc.source,
        Figure{static_cast<double>(acc.max), "bytes", table->Add(op, acc.ids, acc.provenance, acc.inputs)}});
  }
  return cell;
}

}  // namespace

std::string DefaultMachineOf(const v1::RunRecord& record) {
  auto it = record.params().find("machine");
  return it != record.params().end() && !it->second.empty() ? it->second : record.agent_id();
}

std::string SelectMetricName(const std::vector<const v1::RunRecord*>& runs) {
  for (const char* name : kThroughputMetrics) {
    for (const auto* r : runs) {
      for (const auto& m : r->metrics()) {
        if (m.name() == name) return name;
      }
    }
  }
  return "wall_seconds";
}

std::optional<double> MetricOf(const v1::RunRecord& record, const std::string& metric) {
  if (metric == "wall_seconds") {
    if (!record.has_wall_duration()) return std::nullopt;
    return static_cast<double>(record.wall_duration().seconds()) + record.wall_duration().nanos() / 1e9;
  }
  for (const auto& m : record.metrics()) {
    if (m.name() == metric) return m.value();
  }
  return std::nullopt;
}

double Quantile(const std::vector<double>& sorted, double p) {
  const double h = (static_cast<double>(sorted.size()) - 1) * p;
  const size_t lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

Analysis Analyze(const std::vector<v1::RunRecord>& records, const MachineOf& machine_of) {
  Analysis analysis;
  for (const auto& [key, runs] : GroupByCell(records, machine_of)) {
    analysis.cells.push_back(BuildCell(key, runs, &analysis.sources));
    analysis.simulated = analysis.simulated || analysis.cells.back().simulated;
    AppendTraps(key, runs, &analysis.traps);
  }
  return analysis;
}

std::vector<Trap> FindTraps(const std::vector<v1::RunRecord>& records, const MachineOf& machine_of) {
  std::vector<Trap> traps;
  for (const auto& [key, runs] : GroupByCell(records, machine_of)) AppendTraps(key, runs, &traps);
  return traps;
}

}  // namespace benchfleet::synthesis
