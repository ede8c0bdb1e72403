// A run as the guide reads it: the fields of a v1::RunRecord that the analysis, the series summary
// and the machine labels use, flat, as views of strings kept by the RunRowStore that made it.
// Decoded protobuf records took about 3 kB each in memory (a string object per field, a hash map
// per map field, a message per metric), most of it the same few task, backend, machine and
// metric names again; a row takes about 300 bytes, those names stored once per store. At a
// million runs that was gigabytes of fresh pages, and the page faults were a third of the guide's
// time. Part of benchfleet_synthesis_run_row; plain data, thread-compatible.
#ifndef BENCHFLEET_SYNTHESIS_ANALYSIS_RUN_ROW_H_
#define BENCHFLEET_SYNTHESIS_ANALYSIS_RUN_ROW_H_

#include <cstdint>
#include <memory>
#include <memory_resource>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "benchfleet/v1/record.pb.h"

namespace benchfleet::synthesis {

struct RunRow {
  struct Param {
    std::string_view key, value;
  };
  struct Metric {
    std::string_view name, unit;
    double value = 0;
    // The backend's declaration, as stamped on the record (common/figures.h).
    std::string_view label;
    uint32_t headline = 0;
    v1::Better better = v1::BETTER_UNSPECIFIED;
  };
  struct Memory {
    v1::MemoryKind kind = v1::MEMORY_KIND_UNSPECIFIED;
    std::string_view scope, source;
    uint64_t bytes = 0;
  };
  struct Flag {
    std::string_view code, reason;
  };
  // An output by its content (RunRecord.outputs without name and size: ComfyUI numbers its file
  // names, so only kind and hash say whether two runs gave the same).
  struct Output {
    std::string_view kind, sha256;
  };

  std::string_view run_id, series_id, task, agent_id, conditions_fingerprint, backend, mode;
  std::string_view matrix;  // the record's matrix as "k=v;k=v" sorted by key; "" when it has none
  std::string_view status_message;
  std::string_view provenance;       // "live", "FILE:LINE" or "unknown" (ProvenanceOf)
  std::string_view provenance_file;  // the file of a KIND_FILE provenance, else ""
  v1::Provenance::Kind provenance_kind = v1::Provenance::KIND_UNSPECIFIED;
  v1::RunStatus::Code status = v1::RunStatus::CODE_UNSPECIFIED;
  v1::Phase phase = v1::PHASE_UNSPECIFIED;
  uint32_t call_index = 0;
  bool simulated = false;
  bool has_start_time = false;
  bool has_wall_duration = false;
  int32_t start_nanos = 0;
  int64_t start_seconds = 0;
  double wall_seconds = 0;  // wall_duration in seconds, when has_wall_duration
  std::span<const Param> params;  // sorted by key
  std::span<const Metric> metrics;  // in the record's order
  std::span<const Memory> memory;   // in the record's order
  std::span<const Flag> flags;      // in the record's order
  std::span<const Output> outputs;  // in the record's order

  // The value of params[key], if the record has it.
  std::optional<std::string_view> FindParam(std::string_view key) const;
};

// Makes rows from records and keeps them and what they view, in one pool: each distinct name once
// (most fields of a million runs take a few dozen values), each run id and message once per run.
// Rows never move, so their addresses can be handed out. One thread at a time.
class RunRowStore {
 public:
  RunRowStore() = default;
  RunRowStore(const RunRowStore&) = delete;
  RunRowStore& operator=(const RunRowStore&) = delete;

  // Adds the row of `record` and returns it; it stays valid as long as the store.
  RunRow* Add(const v1::RunRecord& record);
  // Appends a flag to `row`, one of this store's.
  void AddFlag(RunRow* row, std::string_view code, std::string_view reason);
  size_t size() const { return size_; }

 private:
  // A copy of `s` in the pool, shared with every equal string interned before.
  std::string_view Intern(std::string_view s);
  // A copy of `s` in the pool of its own (a run id, a message).
  std::string_view Copy(std::string_view s);
  // `s` from the previous row when equal (consecutive runs mostly share their names), else Intern.
  std::string_view Same(std::string_view previous, std::string_view s);
  template <typename T>
  T* Allocate(size_t n) {
    return static_cast<T*>(pool_.allocate(n * sizeof(T), alignof(T)));
  }

  std::pmr::monotonic_buffer_resource pool_{64 << 10};
  std::unordered_set<std::string_view> interned_;
  size_t size_ = 0;
  const RunRow* last_ = nullptr;  // the row added last
  std::vector<RunRow::Param> scratch_params_;
};

// Run order, the same in every table and list of the guide: start_time, then call_index, then
// run_id (unique), so any input permutation sorts alike.
bool RunBefore(const RunRow* a, const RunRow* b);

// Rows to read, wherever they were made, and the stores that keep them: the database reader's
// (a store per batch of rows, made on its threads) and the guide's own for records given whole.
// A copy shares the stores.
struct RunRows {
  std::vector<std::shared_ptr<const RunRowStore>> stores;
  std::vector<const RunRow*> rows;
};

// Appends a row of each record to `rows`, in order, made by one new store.
void AddRows(const std::vector<v1::RunRecord>& records, RunRows* rows);

// Every field of `row`, one "name=value" per line (metrics, memory and flags one per line each):
// for tests and their failure messages.
std::string DebugString(const RunRow& row);

// The record's matrix as "k=v;k=v" sorted by key, "" when it has none (the cells' and series' key).
std::string MatrixString(const v1::RunRecord& record);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_ANALYSIS_RUN_ROW_H_
