#include "synthesis/analysis/run_row.h"
#include "common/proto_time.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <new>
#include <type_traits>
#include <sstream>
#include <tuple>

namespace benchfleet::synthesis {

std::optional<std::string_view> RunRow::FindParam(std::string_view key) const {
  auto it = std::lower_bound(params.begin(), params.end(), key,
                             [](const Param& p, std::string_view k) { return p.key < k; });
  if (it == params.end() || it->key != key) return std::nullopt;
  return it->value;
}

bool RunBefore(const RunRow* a, const RunRow* b) {
  return std::tie(a->start_seconds, a->start_nanos, a->call_index, a->run_id) <
         std::tie(b->start_seconds, b->start_nanos, b->call_index, b->run_id);
}

std::string MatrixString(const v1::RunRecord& record) {
  if (record.matrix().empty()) return "";  // most runs: no sorted copy of an empty map
  std::map<std::string, std::string> sorted(record.matrix().begin(), record.matrix().end());
  std::string out;
  for (const auto& [k, v] : sorted) out += (out.empty() ? "" : ";") + k + "=" + v;
  return out;
}

std::string_view RunRowStore::Copy(std::string_view s) {
  if (s.empty()) return {};
  char* bytes = Allocate<char>(s.size());
  std::memcpy(bytes, s.data(), s.size());
  return {bytes, s.size()};
}

std::string_view RunRowStore::Intern(std::string_view s) {
  if (s.empty()) return {};
  auto it = interned_.find(s);
  if (it != interned_.end()) return *it;
  return *interned_.insert(Copy(s)).first;
}

std::string_view RunRowStore::Same(std::string_view previous, std::string_view s) {
  return previous == s ? previous : Intern(s);
}

RunRow* RunRowStore::Add(const v1::RunRecord& r) {
  // In the pool with what it views (a row is plain data: nothing to destroy).
  static_assert(std::is_trivially_destructible_v<RunRow>);
  const RunRow* previous = last_;
  RunRow& row = *new (Allocate<RunRow>(1)) RunRow();
  last_ = &row;
  ++size_;
  auto same = [&](std::string_view RunRow::*field, std::string_view s) {
    return previous != nullptr ? Same(previous->*field, s) : Intern(s);
  };
  row.run_id = Copy(r.run_id());
  row.series_id = same(&RunRow::series_id, r.series_id());
  row.task = same(&RunRow::task, r.task());
  row.agent_id = same(&RunRow::agent_id, r.agent_id());
  row.conditions_fingerprint = same(&RunRow::conditions_fingerprint, r.conditions_fingerprint());
  row.backend = same(&RunRow::backend, r.backend());
  row.mode = same(&RunRow::mode, r.mode());
  if (!r.matrix().empty()) row.matrix = Intern(MatrixString(r));
  row.status = r.status().code();
  row.status_message = Intern(r.status().message());
  row.provenance_kind = r.provenance().kind();
  switch (row.provenance_kind) {
    case v1::Provenance::KIND_LIVE:
      row.provenance = "live";
      break;
    case v1::Provenance::KIND_FILE:
      row.provenance_file = same(&RunRow::provenance_file, r.provenance().file());
      row.provenance = Copy(r.provenance().file() + ":" + std::to_string(r.provenance().line()));
      break;
    default:
      row.provenance = "unknown";
  }
  row.phase = r.phase();
  row.call_index = r.call_index();
  row.simulated = r.simulated();
  row.has_start_time = r.has_start_time();
  row.start_seconds = r.start_time().seconds();
  row.start_nanos = r.start_time().nanos();
  row.has_wall_duration = r.has_wall_duration();
  row.wall_seconds = ToSeconds(r.wall_duration());

  // Params, sorted by key; the previous row's array when they are the same (a series' runs share them).
  if (!r.params().empty()) {
    std::vector<RunRow::Param>& params = scratch_params_;  // views of the record's strings until stored
    params.clear();
    for (const auto& [k, v] : r.params()) params.push_back({k, v});
    std::sort(params.begin(), params.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
    const bool as_before = previous != nullptr && std::equal(params.begin(), params.end(), previous->params.begin(),
                                                             previous->params.end(), [](const auto& a, const auto& b) {
                                                               return a.key == b.key && a.value == b.value;
                                                             });
    if (as_before) {
      row.params = previous->params;
    } else {
      auto* stored = Allocate<RunRow::Param>(params.size());
      for (size_t i = 0; i < params.size(); ++i) stored[i] = {Intern(params[i].key), Intern(params[i].value)};
      row.params = {stored, params.size()};
    }
  }
  if (r.metrics_size() > 0) {
    auto* metrics = Allocate<RunRow::Metric>(r.metrics_size());
    for (int i = 0; i < r.metrics_size(); ++i) {
      const v1::Metric& m = r.metrics(i);
      metrics[i] = {Intern(m.name()), Intern(m.unit()), m.value(), Intern(m.label()), m.headline(), m.better()};
    }
    row.metrics = {metrics, static_cast<size_t>(r.metrics_size())};
  }
  if (r.memory_size() > 0) {
    auto* memory = Allocate<RunRow::Memory>(r.memory_size());
    for (int i = 0; i < r.memory_size(); ++i) {
      const v1::MemoryFigure& m = r.memory(i);
      memory[i] = {m.kind(), Intern(m.scope()), Intern(m.source()), m.bytes()};
    }
    row.memory = {memory, static_cast<size_t>(r.memory_size())};
  }
  if (r.flags_size() > 0) {
    auto* flags = Allocate<RunRow::Flag>(r.flags_size());
    for (int i = 0; i < r.flags_size(); ++i) flags[i] = {Intern(r.flags(i).code()), Intern(r.flags(i).reason())};
    row.flags = {flags, static_cast<size_t>(r.flags_size())};
  }
  if (r.outputs_size() > 0) {
    // Hashes are copied, not interned: outputs that differ on every run would fill the set.
    auto* outputs = Allocate<RunRow::Output>(r.outputs_size());
    for (int i = 0; i < r.outputs_size(); ++i) outputs[i] = {Intern(r.outputs(i).kind()), Copy(r.outputs(i).sha256())};
    row.outputs = {outputs, static_cast<size_t>(r.outputs_size())};
  }
  return &row;
}

void RunRowStore::AddFlag(RunRow* row, std::string_view code, std::string_view reason) {
  auto* flags = Allocate<RunRow::Flag>(row->flags.size() + 1);
  std::copy(row->flags.begin(), row->flags.end(), flags);
  flags[row->flags.size()] = {Intern(code), Intern(reason)};
  row->flags = {flags, row->flags.size() + 1};
}

std::string DebugString(const RunRow& r) {
  std::ostringstream out;
  out << "run_id=" << r.run_id << "\nseries_id=" << r.series_id << "\ntask=" << r.task << "\nagent_id=" << r.agent_id
      << "\nconditions_fingerprint=" << r.conditions_fingerprint << "\nbackend=" << r.backend << "\nmode=" << r.mode
      << "\nmatrix=" << r.matrix << "\nstatus=" << r.status << " " << r.status_message << "\nprovenance=" << r.provenance
      << " kind=" << r.provenance_kind << " file=" << r.provenance_file << "\nphase=" << r.phase
      << "\ncall_index=" << r.call_index << "\nsimulated=" << r.simulated << "\nstart=";
  if (r.has_start_time) out << r.start_seconds << "." << r.start_nanos;
  out << "\nwall_seconds=";
  if (r.has_wall_duration) out << r.wall_seconds;
  out << "\nparams=";
  for (const auto& p : r.params) out << p.key << "=" << p.value << ";";
  for (const auto& m : r.metrics) {
    out << "\nmetric " << m.name << "=" << m.value << " " << m.unit;
    if (m.headline > 0) out << " headline " << m.headline << " \"" << m.label << "\"";
  }
  for (const auto& m : r.memory) out << "\nmemory " << m.kind << " " << m.scope << " " << m.bytes << " " << m.source;
  for (const auto& f : r.flags) out << "\nflag " << f.code << " " << f.reason;
  for (const auto& o : r.outputs) out << "\noutput " << o.kind << " " << o.sha256;
  out << "\n";
  return out.str();
}

void AddRows(const std::vector<v1::RunRecord>& records, RunRows* rows) {
  if (records.empty()) return;
  auto store = std::make_shared<RunRowStore>();
  rows->rows.reserve(rows->rows.size() + records.size());
  for (const v1::RunRecord& r : records) rows->rows.push_back(store->Add(r));
  rows->stores.push_back(std::move(store));
}

}  // namespace benchfleet::synthesis
