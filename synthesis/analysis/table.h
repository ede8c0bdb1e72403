// The synthesis table's analysis core: per cell (task x machine x backend x mode x matrix x phase)
// each run's figure, min/max, median (>= 5 accepted runs), quartiles (> 20), memory per kind, the
// traps the records' flags name, and the provenance (sources.csv) of every figure. Pure functions,
// no I/O; part of benchfleet_synthesis_analysis; thread-compatible.
#ifndef BENCHFLEET_SYNTHESIS_ANALYSIS_TABLE_H_
#define BENCHFLEET_SYNTHESIS_ANALYSIS_TABLE_H_

#include <compare>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "benchfleet/v1/record.pb.h"
#include "common/matrix_order.h"
#include "synthesis/analysis/run_row.h"
#include "synthesis/analysis/sources.h"
#include "synthesis/analysis/spread_figures.h"

namespace benchfleet::synthesis {

// Gives the machine label of a record. Default (DefaultMachineOf): params["machine"] when set
// (imported files), else agent_id.
using MachineOf = std::function<std::string(const v1::RunRecord&)>;
std::string DefaultMachineOf(const v1::RunRecord& record);
// The same for a row.
std::string_view DefaultMachineOfRow(const RunRow& row);

struct CellKey {
  std::string task;
  std::string machine;
  std::string backend;
  std::string mode;
  std::string matrix;  // "k=v;k=v" sorted by key
  v1::Phase phase = v1::PHASE_UNSPECIFIED;
  friend bool operator==(const CellKey&, const CellKey&) = default;
  // Field by field; matrices by MatrixStringLess (common/matrix_order.h): batch_size=4 before 16.
  friend std::strong_ordering operator<=>(const CellKey& a, const CellKey& b) {
    if (auto c = std::tie(a.task, a.machine, a.backend, a.mode) <=> std::tie(b.task, b.machine, b.backend, b.mode);
        c != 0) {
      return c;
    }
    if (a.matrix != b.matrix) {
      return MatrixStringLess(a.matrix, b.matrix) ? std::strong_ordering::less : std::strong_ordering::greater;
    }
    return a.phase <=> b.phase;
  }
};

struct RunFigure {
  std::string run_id;
  uint32_t call_index = 0;
  Figure figure;
  // The run's wall duration in seconds, for the duration chart: the same Figure as `figure` when the
  // cell's metric is wall_seconds, else its own "value" source (when the record has wall_duration).
  std::optional<Figure> wall_seconds;
  // In a cell of at most kDistributionAboveRuns runs only (a repetition table lists them; a larger
  // cell keeps its sources lean): the run's own value of each further figure, parallel to
  // Cell::further ("value" sources; nullopt where the run lacks it), and its largest memory figure
  // of the cell's largest kind (memory_kind), in bytes ("value" source).
  std::vector<std::optional<Figure>> further;
  std::optional<Figure> memory_bytes;
  v1::MemoryKind memory_kind = v1::MEMORY_KIND_UNSPECIFIED;
};

// A run kept out of every aggregate: an excluding flag (code and reason verbatim), FAILED (status
// message), or MISSING_METRIC (the run lacks the cell's metric). `figure` is its value when it has one.
struct ExcludedRun {
  std::string run_id;
  uint32_t call_index = 0;
  std::string code;
  std::string reason;
  std::optional<Figure> figure;
};

// Max bytes per (kind, scope) over the cell's accepted runs; kinds are never merged.
struct MemoryEntry {
  v1::MemoryKind kind = v1::MEMORY_KIND_UNSPECIFIED;
  std::string label;   // MemoryKind name, e.g. "MEMORY_KIND_PROCESS_PEAK_RSS"
  std::string scope;
  std::string source;  // the record's MemoryFigure.source of the run holding the max
  Figure bytes;
  // The same for people: a formula source over `bytes`, in MiB below one GiB, else GiB.
  Figure human;
};

// A headline figure of the cell's runs besides its main one (Metric.headline > 1, e.g. a
// llama-server's time to first token, a workflow's mean latency): its median over the accepted runs
// that carry it (>= 5 of them), else their range; each one source naming every run it covers.
struct FurtherFigure {
  std::string name;   // the metric's name
  std::string label;  // its label ("mean latency"), else its name
  std::string unit;
  uint32_t headline = 0;
  std::optional<Figure> median;    // >= 5 runs
  std::optional<Spread> spread;    // beside the median (spread_figures.h)
  std::optional<Figure> min, max;  // 1 to 4 runs
  // The same for people when the figure is in seconds and under one: in ms (formula "x1 * 1000"),
  // set exactly where median / min / max are; empty otherwise (the figures above are shown).
  std::optional<Figure> median_ms, min_ms, max_ms;
  std::optional<Spread> spread_ms;  // the spread with its interval in ms, where median_ms is
};

struct Cell {
  CellKey key;
  std::string metric;  // chosen by SelectMetricName
  std::string label;   // the main figure's label for people ("generation tokens/s"), else metric
  std::string unit;
  // Which way the cell's figure is better: the declaration's, or lower for the wall-time fallback.
  v1::Better better = v1::BETTER_LOWER;
  std::vector<FurtherFigure> further;  // by headline rank
  std::vector<RunFigure> runs;  // accepted runs, run order (start_time, call_index, run_id)
  std::vector<ExcludedRun> excluded;
  std::optional<Figure> excluded_count;  // a "count" source, when any run is excluded
  std::optional<Figure> min, max;    // >= 1 accepted run
  std::optional<Figure> median;      // >= 5 accepted runs
  std::optional<Spread> spread;      // beside the median: CV and the interval of the median
  std::optional<Figure> q1, q3;      // > 20 accepted runs
  bool distribution_only = false;    // > 20: show min/q1/median/q3/max instead of the list
  bool simulated = false;            // any record of the cell is simulated
  std::vector<MemoryEntry> memory;   // sorted by (kind, scope)
};

// One trap, straight from a record: every flag (code and reason verbatim) and every FAILED run
// (code "FAILED", reason = status message). Never recomputed.
struct Trap {
  CellKey key;
  std::string run_id;
  uint32_t call_index = 0;
  std::string code;
  std::string reason;
  // For a THROUGHPUT_DROP: what the same record's own flags point to, "THROTTLED" (the device
  // slowed down: the agent's sampler saw throttle reasons or a clock fall), else "CONTENDED" (the
  // host was busy), else "" (unexplained). Empty for every other code.
  std::string cause;
};

struct Analysis {
  std::vector<Cell> cells;  // sorted by key
  std::vector<Trap> traps;  // sorted by key, run order, then flag order
  SourceTable sources;
  bool simulated = false;   // any record simulated: the guide's title says SIMULATED
};

inline constexpr int kMedianMinRuns = 5;
inline constexpr int kDistributionAboveRuns = 20;

// Returns the name of the figure shown for a set of runs: their main figure as their backend declares
// it (Metric.headline 1; the most common name when they differ, the first in run order on a tie),
// else "wall_seconds" (records without a declaration: the run's wall time).
std::string SelectMetricName(const std::vector<const RunRow*>& runs);

// The cell of `key` in `analysis.cells` (sorted by key), or nullptr.
const Cell* FindCell(const Analysis& analysis, const CellKey& key);

// Whether a memory kind is accelerator memory (DEVICE_USED, DEVICE_BUFFER) rather than the host's.
inline bool IsDeviceMemory(v1::MemoryKind kind) {
  return kind == v1::MEMORY_KIND_DEVICE_USED || kind == v1::MEMORY_KIND_DEVICE_BUFFER;
}

// Returns the value of `metric` in `row` ("wall_seconds" reads wall_duration), if present.
std::optional<double> MetricOf(const RunRow& row, std::string_view metric);

// Returns the p-quantile (0..1) of `sorted` (non-empty, ascending) by linear interpolation
// between order statistics (Hyndman-Fan type 7, R's default): h = (n-1)p.
double Quantile(const std::vector<double>& sorted, double p);

// Builds the table, traps and sources. Output is independent of the order of `records`. From
// 50,000 records on, the cells are built on a few threads of its own (which read `records` only;
// `machine_of` is called on the caller's thread), with the same result.
Analysis Analyze(const std::vector<v1::RunRecord>& records, const MachineOf& machine_of = DefaultMachineOf);

// Analyze over the rows of the records (run_row.h), machines[i] being the machine label of
// rows[i]: what BuildGuideFiles calls, with every label worked out once.
Analysis AnalyzeLabelled(const std::vector<const RunRow*>& rows, const std::vector<std::string_view>& machines);

// Returns the traps of `records` alone (same as Analyze(...).traps).
std::vector<Trap> FindTraps(const std::vector<v1::RunRecord>& records,
                            const MachineOf& machine_of = DefaultMachineOf);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_ANALYSIS_TABLE_H_
