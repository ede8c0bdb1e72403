#include "synthesis/analysis/output_groups.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <tuple>

#include "common/matrix_order.h"
#include "common/run_flags.h"

namespace benchfleet::synthesis {
namespace {

struct InputsKey {
  std::string_view task, backend, mode, matrix, inputs;
  friend bool operator<(const InputsKey& a, const InputsKey& b) {
    if (auto c = std::tie(a.task, a.backend, a.mode) <=> std::tie(b.task, b.backend, b.mode); c != 0) return c < 0;
    if (a.matrix != b.matrix) return MatrixStringLess(a.matrix, b.matrix);
    return a.inputs < b.inputs;
  }
};

bool Compared(const RunRow& row) {
  if (row.status != v1::RunStatus::CODE_OK || row.outputs.empty()) return false;
  std::optional<std::string_view> inputs = row.FindParam(kInputsSha256Param);
  if (!inputs || inputs->empty()) return false;
  return std::none_of(row.flags.begin(), row.flags.end(),
                      [](const RunRow::Flag& f) { return IsExcludingFlag(f.code) || f.code == kInvalidatedCode; });
}

// The run's outputs by content: what two runs must share to have given the same.
std::string Signature(const RunRow& row) {
  std::string out;
  for (const RunRow::Output& o : row.outputs) {
    out.append(o.kind).append(":").append(o.sha256).append(",");
  }
  return out;
}

std::string Shown(const RunRow& row) {
  std::string out;
  for (const RunRow::Output& o : row.outputs) {
    if (!out.empty()) out += "+";
    out += std::string(o.sha256.substr(0, kGuideHashPrefix));
  }
  return out;
}

Figure Count(const std::vector<const RunRow*>& runs, SourceTable* sources) {
  std::vector<std::string> ids, provenance;
  for (const RunRow* r : runs) {
    ids.emplace_back(r->run_id);
    provenance.emplace_back(r->provenance);
  }
  const double n = static_cast<double>(ids.size());
  return Figure{n, "runs", sources->AddCount(std::move(ids), std::move(provenance))};
}

}  // namespace

std::vector<OutputComparison> CompareOutputs(const std::vector<const RunRow*>& rows,
                                             const std::vector<std::string_view>& machines, SourceTable* sources) {
  std::map<InputsKey, std::vector<size_t>> by_inputs;
  for (size_t i = 0; i < rows.size(); ++i) {
    const RunRow& r = *rows[i];
    if (!Compared(r)) continue;
    by_inputs[{r.task, r.backend, r.mode, r.matrix, *r.FindParam(kInputsSha256Param)}].push_back(i);
  }
  std::vector<OutputComparison> out;
  for (auto& [key, indices] : by_inputs) {
    if (indices.size() < 2) continue;
    std::sort(indices.begin(), indices.end(), [&](size_t a, size_t b) { return RunBefore(rows[a], rows[b]); });
    OutputComparison c;
    c.task = std::string(key.task);
    c.backend = std::string(key.backend);
    c.mode = std::string(key.mode);
    c.matrix = std::string(key.matrix);
    c.inputs_sha256 = std::string(key.inputs);
    std::vector<const RunRow*> all;
    for (size_t i : indices) {
      const RunRow& r = *rows[i];
      all.push_back(&r);
      if (std::optional<std::string_view> said = r.FindParam(kOutputsDeterministicParam)) {
        // A word this guide does not know promises nothing.
        c.expected = WeakerDeterminism(c.expected, ParseOutputDeterminism(*said).value_or(OutputDeterminism::kNone));
      }
    }
    auto run_of = [&](size_t i) {
      const RunRow& r = *rows[i];
      return OutputRun{std::string(r.run_id), std::string(machines[i]), r.phase, r.call_index};
    };

    // Groups by content, in order of first appearance; within each, the machines likewise.
    std::map<std::string, size_t> group_of;
    std::vector<std::vector<std::pair<std::string_view, std::vector<const RunRow*>>>> on;
    for (size_t i : indices) {
      auto [it, added] = group_of.try_emplace(Signature(*rows[i]), c.groups.size());
      if (added) {
        c.groups.push_back(OutputGroup{Shown(*rows[i]), run_of(i), {}});
        on.emplace_back();
      }
      auto& list = on[it->second];
      auto m = std::find_if(list.begin(), list.end(), [&](const auto& e) { return e.first == machines[i]; });
      if (m == list.end()) {
        list.emplace_back(machines[i], std::vector<const RunRow*>{});
        m = std::prev(list.end());
      }
      m->second.push_back(rows[i]);
    }

    c.runs = Count(all, sources);
    std::vector<const RunRow*> firsts;
    for (const OutputGroup& g : c.groups) {
      firsts.push_back(
          *std::find_if(all.begin(), all.end(), [&](const RunRow* r) { return r->run_id == g.first.run_id; }));
    }
    c.distinct = Count(firsts, sources);
    for (size_t g = 0; g < c.groups.size(); ++g) {
      for (const auto& [machine, runs] : on[g]) {
        c.groups[g].machines.push_back(OutputGroup::On{std::string(machine), Count(runs, sources)});
      }
    }
    if (c.expected == OutputDeterminism::kEverywhere && c.groups.size() > 1) {
      c.reference = Count({rows[indices.front()]}, sources);
      const std::string reference = Signature(*rows[indices.front()]);
      std::vector<const RunRow*> differing;
      for (size_t i : indices) {
        if (Signature(*rows[i]) == reference) continue;
        differing.push_back(rows[i]);
        c.mismatches.push_back(OutputMismatch{run_of(i), Shown(*rows[i]), Count({rows[i]}, sources)});
      }
      c.mismatched = Count(differing, sources);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace benchfleet::synthesis
