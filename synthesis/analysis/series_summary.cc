// Section 1 of the guide: the conditions of every series (SummarizeSeries in guide_model.h).
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "common/matrix_order.h"
#include "synthesis/analysis/guide_model.h"

namespace benchfleet::synthesis {
namespace {

// RFC 3339 in UTC with "Z", fractional seconds only when non-zero ("2026-03-01T10:00:00Z").
std::string Rfc3339Utc(const RunRow& r) {
  absl::Time time = absl::FromUnixSeconds(r.start_seconds) + absl::Nanoseconds(r.start_nanos);
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ", time, absl::UTCTimeZone());
}

// The series key of a record: its conditions fingerprint, else the imported file's path, else ""
// (a live record without fingerprint: its series is then told apart by machine alone).
std::string_view SeriesKeyOf(const RunRow& r) {
  if (!r.conditions_fingerprint.empty()) return r.conditions_fingerprint;
  if (r.provenance_kind == v1::Provenance::KIND_FILE) return r.provenance_file;
  return "";
}

// Adds one distinct value to a " | "-joined list.
void AddDistinct(std::string* list, std::string_view value) {
  if (value.empty()) return;
  std::string_view rest = *list;
  while (!rest.empty()) {
    const size_t bar = rest.find(" | ");
    if (rest.substr(0, bar) == value) return;
    rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 3);
  }
  if (!list->empty()) *list += " | ";
  *list += value;
}

// Records what the run's mode ran on, as its server reported it (params devices and
// offloaded_layers; the llama-server backend and log reader set them).
void AddRanOn(const RunRow& r, std::map<std::string, SeriesConditions::RanOn>* ran_on) {
  const std::optional<std::string_view> devices = r.FindParam("devices");
  const std::optional<std::string_view> offloaded = r.FindParam("offloaded_layers");
  if (!devices.has_value() && !offloaded.has_value()) return;
  SeriesConditions::RanOn& entry = (*ran_on)[std::string(r.mode)];
  if (devices.has_value()) AddDistinct(&entry.devices, *devices);
  if (offloaded.has_value()) AddDistinct(&entry.offloaded_layers, *offloaded);
}

// Orders (series key, machine) pairs of strings or of views alike, so a map of strings is searched
// with views.
struct PairLess {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return std::tie(a.first, a.second) < std::tie(b.first, b.second);
  }
};

SeriesDraft Summarize(const std::string& key, const std::string& machine, std::vector<const RunRow*> runs,
                      const GuideContext& context) {
  // Usually in run order already (the database reader sorts the records): check first.
  if (!std::is_sorted(runs.begin(), runs.end(), RunBefore)) std::sort(runs.begin(), runs.end(), RunBefore);
  SeriesDraft draft;
  SeriesConditions& s = draft.conditions;
  s.key = key;
  s.fingerprint = runs.front()->conditions_fingerprint;
  s.machine = machine;
  auto cls = context.class_of_machine.find(machine);
  s.machine_class = cls != context.class_of_machine.end() ? cls->second : machine;
  if (!s.fingerprint.empty()) {
    auto c = context.conditions.find(s.fingerprint);
    if (c != context.conditions.end()) s.conditions = c->second;
  }

  std::vector<std::string>& ids = draft.run_ids;
  std::vector<std::string>& provenance = draft.provenance;
  std::vector<std::string>& ok_ids = draft.ok_run_ids;
  std::vector<std::string>& ok_provenance = draft.ok_provenance;
  ids.reserve(runs.size());
  provenance.reserve(runs.size());
  const RunRow* first = nullptr;
  const RunRow* last = nullptr;
  auto earlier = [](const RunRow& a, const RunRow& b) {
    return std::tie(a.start_seconds, a.start_nanos) < std::tie(b.start_seconds, b.start_nanos);
  };
  // A set lookup only when a field differs from the previous run's: consecutive runs mostly share
  // them, and a million lookups per field showed in the profile.
  auto insert_new = [](auto& set, std::string_view value, std::string_view& previous) {
    if (value.empty() || previous == value) return;
    if (!set.contains(value)) set.emplace(value);
    previous = value;
  };
  std::set<std::string, std::less<>> series_ids, tasks, backends;
  // Matrix values that are numbers sort as numbers (batch_size=4 before 16), as in the tables.
  std::set<std::string, MatrixStringOrder> matrices;
  std::string_view previous_series, previous_task, previous_backend, previous_matrix;
  const RunRow::Param* previous_params = nullptr;  // the params last narrowed by (rows share arrays)
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunRow& r = *runs[i];
    insert_new(series_ids, r.series_id, previous_series);
    insert_new(tasks, r.task, previous_task);
    insert_new(backends, r.backend, previous_backend);
    insert_new(matrices, r.matrix, previous_matrix);
    ids.emplace_back(r.run_id);
    provenance.emplace_back(r.provenance);
    if (r.status == v1::RunStatus::CODE_OK) {
      ok_ids.emplace_back(r.run_id);
      ok_provenance.emplace_back(r.provenance);
    }
    s.simulated = s.simulated || r.simulated;
    if (r.has_start_time) {
      if (first == nullptr || earlier(r, *first)) first = &r;
      if (last == nullptr || earlier(*last, r)) last = &r;
    }
    // What the mode ran on: looked up only when the params differ from the previous run's.
    if (i == 0 || r.params.data() != previous_params || r.params.empty()) AddRanOn(r, &s.ran_on);
    // Settings: the params of the first record, narrowed to those every later record repeats.
    if (i == 0) {
      for (const RunRow::Param& p : r.params) s.settings.emplace(p.key, p.value);
      previous_params = r.params.data();
    } else if (r.params.data() != previous_params || r.params.empty()) {
      std::erase_if(s.settings, [&r](const auto& kv) {
        std::optional<std::string_view> value = r.FindParam(kv.first);
        return !value || *value != kv.second;
      });
      previous_params = r.params.data();
    }
  }
  s.series_ids.assign(series_ids.begin(), series_ids.end());
  s.tasks.assign(tasks.begin(), tasks.end());
  s.backends.assign(backends.begin(), backends.end());
  s.matrix_values.assign(matrices.begin(), matrices.end());
  if (first != nullptr) s.first_start = Rfc3339Utc(*first);
  if (last != nullptr) s.last_start = Rfc3339Utc(*last);
  return draft;
}

}  // namespace

std::vector<SeriesConditions> SummarizeSeries(const std::vector<v1::RunRecord>& records,
                                              const GuideContext& context, const MachineOf& machine_of,
                                              Analysis* analysis) {
  return AddSeriesSources(DraftSeries(records, context, machine_of), analysis);
}

std::vector<SeriesConditions> AddSeriesSources(std::vector<SeriesDraft> drafts, Analysis* analysis) {
  std::vector<SeriesConditions> out;
  out.reserve(drafts.size());
  for (SeriesDraft& d : drafts) {
    SeriesConditions& s = d.conditions;
    const double n = static_cast<double>(d.run_ids.size());
    const double n_ok = static_cast<double>(d.ok_run_ids.size());
    s.runs = Figure{n, "runs", analysis->sources.AddCount(std::move(d.run_ids), std::move(d.provenance))};
    s.ok_runs = Figure{n_ok, "runs", analysis->sources.AddCount(std::move(d.ok_run_ids), std::move(d.ok_provenance))};
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<SeriesDraft> DraftSeries(const std::vector<v1::RunRecord>& records, const GuideContext& context,
                                     const MachineOf& machine_of) {
  RunRows rows;
  AddRows(records, &rows);
  std::vector<std::string> machines;
  machines.reserve(records.size());
  for (const v1::RunRecord& r : records) machines.push_back(machine_of(r));
  return DraftSeriesLabelled(rows.rows, std::vector<std::string_view>(machines.begin(), machines.end()), context);
}

std::vector<SeriesDraft> DraftSeriesLabelled(const std::vector<const RunRow*>& records,
                                             const std::vector<std::string_view>& machines,
                                             const GuideContext& context) {
  // One series per (key, machine): an imported file may hold the runs of several machines (a
  // generic CSV's "machine" column), and a series names one machine.
  // Found by views of the record's own strings, the key copied once per series.
  std::map<std::pair<std::string, std::string>, std::vector<const RunRow*>, PairLess> groups;
  for (size_t i = 0; i < records.size(); ++i) {
    const std::pair<std::string_view, std::string_view> key{SeriesKeyOf(*records[i]), machines[i]};
    auto it = groups.find(key);
    if (it == groups.end()) it = groups.emplace(std::pair<std::string, std::string>(key), std::vector<const RunRow*>{}).first;
    it->second.push_back(records[i]);
  }

  struct Pending {
    std::string machine;
    std::pair<int64_t, int32_t> first_start;  // numeric: RFC 3339 text with fractions does not sort
    std::string key;
    const std::vector<const RunRow*>* runs;
  };
  std::vector<Pending> order;
  for (const auto& [key_machine, runs] : groups) {
    const RunRow* first = *std::min_element(runs.begin(), runs.end(), RunBefore);
    order.push_back(Pending{key_machine.second, {first->start_seconds, first->start_nanos},
                            key_machine.first, &runs});
  }
  // By machine, then first start, then key; the sources are added in this order (deterministic ids).
  std::sort(order.begin(), order.end(), [](const Pending& a, const Pending& b) {
    return std::tie(a.machine, a.first_start, a.key) < std::tie(b.machine, b.first_start, b.key);
  });

  std::vector<SeriesDraft> out;
  for (const Pending& p : order) out.push_back(Summarize(p.key, p.machine, *p.runs, context));
  return out;
}

}  // namespace benchfleet::synthesis
