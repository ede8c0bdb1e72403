// What the sizing guide says beyond the synthesis table: the conditions of every series, the
// verdicts against the user's targets, the thresholds for moving to a dedicated GPU, the cost, and
// the rules drawn from the measurements. Every figure is a Figure whose source (count, target or
// formula over other sources) is added to the Analysis' SourceTable, so sources.csv explains it.
// Pure functions, no I/O; part of benchfleet_synthesis_analysis; thread-compatible.
#ifndef BENCHFLEET_SYNTHESIS_ANALYSIS_GUIDE_MODEL_H_
#define BENCHFLEET_SYNTHESIS_ANALYSIS_GUIDE_MODEL_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "benchfleet/v1/conditions.pb.h"
#include "benchfleet/v1/fleet.pb.h"
#include "benchfleet/v1/record.pb.h"
#include "synthesis/analysis/output_groups.h"
#include "synthesis/analysis/sources.h"
#include "synthesis/analysis/table.h"

namespace benchfleet::synthesis {

// ---------------------------------------------------------------------------------------------
// Targets (targets.yaml; the built-in default is synthesis/analysis/default-targets.yaml, compiled
// in). Every number in it keeps its "FILE:LINE".
//
//   hours_per_day: 24              # how many hours a machine works per day (thresholds)
//   tasks:
//     - match: "sd15*"             # fnmatch glob over task ids; the first matching entry applies
//       item: image                # what one unit of work is: image | token | request
//       uses:
//         - name: iteration        # shown verbatim ("fine for iteration")
//           max_seconds_per_item: 10
//         - name: batch
//           max_seconds_per_item: 2
//     - match: "*"
//       item: token
//       uses:
//         - name: interactive
//           min_items_per_second: 10
//           interactive: true      # this use defines one "concurrent user" for the thresholds
//   classes:                       # machine classes (the agents' "class" label), all optional
//     - name: a100
//       dedicated_gpu: true        # the reference in the thresholds
//       price_per_hour: 3.67
//       currency: USD
// ---------------------------------------------------------------------------------------------

struct TargetNumber {
  double value = 0;
  std::string where;  // "FILE:LINE"
};

struct UseTarget {
  std::string name;
  std::optional<TargetNumber> max_seconds_per_item;
  std::optional<TargetNumber> min_items_per_second;
  bool interactive = false;
};

struct TaskTargets {
  std::string match;
  std::string item;  // "image", "token", "request"
  std::vector<UseTarget> uses;
  std::string where;  // "FILE:LINE" of the entry
};

struct ClassTargets {
  std::string name;
  bool dedicated_gpu = false;
  std::optional<TargetNumber> price_per_hour;
  std::string currency;  // verbatim, e.g. "USD"; empty when no price
};

struct Targets {
  std::string path;  // the file name as given (or "default-targets.yaml")
  TargetNumber hours_per_day{24, ""};
  std::vector<TaskTargets> tasks;
  std::vector<ClassTargets> classes;
};

// Parses a targets file. INVALID_ARGUMENT naming "PATH:LINE" and the field for anything wrong
// (unknown key, a negative or non-numeric figure, a use with neither max nor min, no tasks).
absl::StatusOr<Targets> ParseTargets(std::string_view yaml_text, const std::string& path);
// The built-in targets (default-targets.yaml compiled into the binary).
const Targets& DefaultTargets();
// The first TaskTargets whose `match` globs `task`, or nullptr.
const TaskTargets* TargetsFor(const Targets& targets, const std::string& task);

// ---------------------------------------------------------------------------------------------
// Inputs beyond the records.
// ---------------------------------------------------------------------------------------------

struct GuideContext {
  // conditions.json of every series (files) or the conditions table (database), by fingerprint.
  std::map<std::string, v1::MachineConditions> conditions;
  // The class of each machine label of the cells (CellKey.machine): the agent's "class" label, else
  // the machine label itself.
  std::map<std::string, std::string> class_of_machine;
  Targets targets;
};

// Section 1. One series = the records sharing a conditions fingerprint (live records) or an
// imported file (provenance file); ordered by machine label, then first start time, then key.
struct SeriesConditions {
  std::string key;           // the fingerprint, or the imported file's path
  std::string fingerprint;   // empty for imported files without one
  std::string machine;       // CellKey.machine of its records
  std::string machine_class;
  std::optional<v1::MachineConditions> conditions;  // when known
  std::vector<std::string> series_ids;              // distinct, sorted
  std::vector<std::string> tasks;                   // distinct, sorted
  std::vector<std::string> backends;                // distinct, sorted
  // Settings shared by every record of the series: params that are identical in all of them
  // (model_path, graph_sha256, comfyui_version, seed, temperature, ...), sorted by key.
  std::map<std::string, std::string> settings;
  // What each mode ran on, as the measured server reported it (the records' params "devices"
  // and "offloaded_layers", from llama-server's own log): mode -> {devices, offloaded layers},
  // distinct values joined by " | ". Modes whose records carry neither are absent.
  struct RanOn {
    std::string devices;
    std::string offloaded_layers;
  };
  std::map<std::string, RanOn> ran_on;
  std::vector<std::string> matrix_values;           // distinct "k=v;k=v" combinations, MatrixStringLess order
  std::string first_start;                          // RFC 3339 UTC of the earliest start_time ("" if none)
  std::string last_start;
  Figure runs;       // count source over every run of the series
  Figure ok_runs;    // count of CODE_OK runs
  bool simulated = false;
};

// Section 4. Per task and per machine class, every WARM cell (PHASE_WARM) judged against each use;
// a cell's figure is its median when it has one (>= 5 accepted runs), else its worst accepted run
// (the lowest rate, the highest seconds) — the rule is stated in the guide.
struct UseVerdict {
  std::string use;
  bool ok = false;
  Figure target;  // a "target" source
};

struct CellVerdict {
  CellKey key;
  std::string machine_class;
  std::string basis;             // "median" or "worst_run"
  Figure figure;                 // the cell's figure in the cell's own metric (median or value source)
  std::optional<Spread> spread;  // the cell's, beside a median
  Figure seconds_per_item;       // formula source ("x1" for wall_seconds, "1 / x1" for a rate)
  Figure items_per_second;       // formula source ("1 / x1" for wall_seconds, "x1" for a rate)
  std::vector<UseVerdict> uses;  // in the targets' order
  bool best_of_class = false;    // the class' best setting (highest items_per_second) for the task
};

struct TaskVerdicts {
  std::string task;
  const TaskTargets* targets = nullptr;  // nullptr: no targets entry matched (the guide says so)
  std::string item;                      // "image", "token", "request" (from targets; "run" when none)
  std::vector<CellVerdict> cells;        // by machine class, then key
};

// Section 5. Capacity of every best-of-class setting per task: items per day = items_per_second *
// 3600 * hours_per_day; concurrent users = items_per_second / the interactive use's
// min_items_per_second (when the targets define one). The reference is the best setting among the
// dedicated-GPU classes (targets), else the fastest setting of the task. Every other setting no
// longer keeps up above its own capacity; `ratio` = reference / it.
struct Capacity {
  CellKey key;
  std::string machine_class;
  Figure items_per_second;
  Figure items_per_day;                    // formula "x1 * 3600 * x2"
  std::optional<Figure> concurrent_users;  // formula "x1 / x2"
};

struct TaskThreshold {
  std::string task;
  std::string item;
  bool reference_is_dedicated_gpu = false;  // false: the fastest setting stands in (the guide says so)
  // The formulas' x2, cited in the arithmetic: hours_per_day (target source, once per task) and the
  // interactive use's min_items_per_second (the verdicts' target source) when there is one.
  Figure hours_per_day;
  std::optional<Figure> per_user;
  Capacity reference;
  struct Other {
    Capacity capacity;
    Figure ratio;  // formula "x1 / x2": reference items_per_second / this one
  };
  std::vector<Other> others;  // slowest first
};

// Section 6. Per best-of-class setting whose class has a price: cost per item = price / 3600 *
// seconds_per_item ("x1 / 3600 * x2"); for tokens also per million ("x1 / 3600 * x2 * 1000000").
struct TaskCost {
  std::string task;
  std::string item;
  CellKey key;
  std::string machine_class;
  Figure price_per_hour;  // target source
  std::string currency;
  Figure cost_per_item;
  std::optional<Figure> cost_per_million;  // item == "token" only
};

// Section 7. A rule is printed only when the data supports it; each cites its figures.
// Codes and their conditions (all figures over accepted runs, the cell figure as in verdicts):
//   GPU_OVER_CPU      same task and machine measured in modes "gpu" and "cpu" (WARM): ratio
//                     gpu/cpu of items_per_second > 1 -> "run on the GPU: xR"; words: task, machine.
//   COLD_START        a COLD cell and the WARM cell of the same setting: ratio of cold
//                     seconds_per_item to warm seconds_per_item > 1.5 -> keep cold runs apart.
//   CACHE_HITS        any CACHE_HIT trap (the server's execution cache): count of such runs -> give
//                     every run an input of its own (a new seed); they are excluded.
//   PROMPT_CACHE_HITS any PROMPT_CACHE_USED trap: count of such runs -> turn the prompt cache off;
//                     they are excluded.
//   THROUGHPUT_DROP   any THROUGHPUT_DROP trap: count of runs -> publish every run, never a median
//                     over few calls.
//   FASTEST_CLASS     a task measured on >= 2 classes: ratio best / second best items_per_second.
//   BEST_SETTING      a class with >= 2 matrix combinations of one task: the best combination and
//                     its ratio to the worst.
//   FAILED_SETTING    a setting whose runs all failed: count and the first error message.
//   CHEAPEST          >= 2 priced classes whose best setting meets every use, same currency:
//                     the cheapest per item (per million tokens) and its ratio to the next.
//   MEMORY_NEED       a task with a DEVICE_USED or DEVICE_BUFFER (or PROCESS_PEAK_RSS on CPU
//                     mode) peak: the largest, labelled by its kind, against the machine's
//                     capacity of that memory when its conditions give it (words "capacity_bytes").
//   FASTEST_CLASS also names a class whose best setting has a burst level (a THROUGHPUT_DROP):
//                     words "drop_class", "drop_call", figure "burst".
struct Rule {
  std::string code;
  std::string task;
  // Named words inserted by the renderer's template for `code` (machine, class, mode, setting,
  // message, kind, ...); verbatim record text.
  std::map<std::string, std::string> words;
  // Named figures inserted by the template (ratio, count, bytes, ...).
  std::map<std::string, Figure> figures;
};

// The answer's part (decision.cc), after the cost. Per task, one row per machine class: its best
// setting's verdict and what the reader needs beside it.
//
// A level of a figure over some accepted runs of a cell: the median from kMedianMinRuns runs on,
// else the one run's value (min alone) or the range (min and max).
struct Level {
  size_t runs = 0;
  uint32_t first_call = 0, last_call = 0;
  std::optional<Figure> median, min, max;
  std::optional<Spread> spread;  // beside the median
};

struct DecisionRow {
  CellVerdict verdict;  // the class' best setting (a copy of the one in `verdicts`)
  // When a record of the cell is flagged THROUGHPUT_DROP: the accepted runs before the first
  // flagged call (burst) and from it on (sustained). The verdict's figure (the worst run, or the
  // median) lies in the sustained level; the guide says so.
  std::optional<Level> burst, sustained;
  uint32_t drop_call = 0;
  Figure runs;                        // count of the cell's accepted runs
  std::optional<Figure> excluded;     // the cell's excluded_count
  std::optional<MemoryEntry> memory;  // the cell's largest device memory figure, else its largest
};

struct TaskDecision {
  std::string task;
  std::string item;
  std::vector<DecisionRow> rows;  // by class
};

// "What to watch": the traps of one cell and code, counted (a "count" source naming the runs).
struct Watch {
  CellKey key;
  std::string code;
  // For THROUGHPUT_DROP: Trap::cause ("THROTTLED", "CONTENDED" or "" unexplained), one Watch each.
  std::string cause;
  std::vector<std::string> run_ids;  // run order
  std::vector<uint32_t> calls;       // parallel to run_ids
  Figure count;
  std::string reason;  // the first run's, verbatim
};

// The Workflow v6 method's own table (every cell of a task whose backend is "workflow"): per
// platform (machine and mode) and point of its numeric matrix axis, every repetition's mean
// latency (ms), rate and peak memory (GiB), and their medians from kMedianMinRuns repetitions on.
struct RepetitionRow {
  CellKey key;
  std::string axis_value;                // "8"
  std::vector<Figure> rate;              // each repetition, run order
  std::vector<std::optional<Figure>> latency_ms;  // formula "x1 * 1000" per repetition
  std::vector<std::optional<Figure>> memory_gib;  // formula "x1 / 1073741824" per repetition
  std::optional<Figure> rate_median, latency_median_ms;
  std::optional<Spread> rate_spread, latency_spread_ms;  // beside the medians (the cell's own)
  std::optional<Figure> memory_max_gib;
  v1::MemoryKind memory_kind = v1::MEMORY_KIND_UNSPECIFIED;
};

struct RepetitionTable {
  std::string task;
  std::string axis;          // "batch_size"
  std::string rate_label;    // the main figure's label ("tokens/s")
  std::string rate_unit;
  std::string latency_label; // the first further figure in seconds ("mean latency"), "" when none
  std::vector<RepetitionRow> rows;  // by machine, mode, axis value
};

// "Regression checks": the newest verdict the coordinator stored for one machine, task, mode,
// phase and matrix point (fleet.proto RegressionVerdict), read from its database. A verdict stored
// before kinds has its kind set here: REGRESSION when it found one, else NO_CHANGE.
struct RegressionCheck {
  v1::RegressionVerdict verdict;
  std::string machine;  // as the guide names its run's machine (MachineLabel), else the agent id
  std::string task;
  std::string matrix;   // "k=v, k=v" in key order, "" when none
  Figure sample_runs;   // a "count" source naming the sample's runs (sources.csv)
  Figure baseline_runs; // a "count" source naming the baseline's runs
};

// How many checks of one kind the guide shows: a "count" source naming the checked runs.
struct RegressionCount {
  v1::RegressionVerdict::Kind kind = v1::RegressionVerdict::KIND_UNSPECIFIED;
  Figure count;
};

struct GuideModel {
  std::vector<SeriesConditions> series;
  std::vector<TaskVerdicts> verdicts;      // by task (TasksOf order)
  std::vector<TaskThreshold> thresholds;   // tasks with >= 2 best-of-class settings
  std::vector<TaskCost> costs;
  std::vector<TaskDecision> decisions;     // by task (TasksOf order)
  std::vector<Watch> watches;              // by task, cell key, then code order of first appearance
  std::vector<RepetitionTable> repetition_tables;
  std::vector<Rule> rules;                 // by code order above, then task
  // The outputs of the same inputs across machines (output_groups.h): filled by BuildGuideFiles
  // from the rows, after everything above (its count sources come last).
  std::vector<OutputComparison> outputs;
  // REGRESSION and IMPROVEMENT first, then NOT_SIGNIFICANT, SAMPLE_TOO_SMALL, BASELINE_TOO_SMALL,
  // NO_CHANGE; within a kind by machine, task, mode, phase, matrix. Empty without a database.
  std::vector<RegressionCheck> regression_checks;
  std::vector<RegressionCount> regression_counts;  // one per kind present, in that order
  const Targets* targets = nullptr;        // the targets used (points into the context)
};

// Whether the verdicts judge `cell`: a warm cell, or a cold one of a setting that has no warm cell
// (a Workflow v6 series restarts its container for every repetition: every run is cold).
bool IsJudgedCell(const Cell& cell, const Analysis& analysis);

// The capacity of the memory `kind` lives in on `machine`, as the first of its series whose
// conditions record it says: the largest accelerator's memory for device kinds, the host's memory
// for the others; 0 when none does.
uint64_t MemoryCapacityBytes(const std::vector<SeriesConditions>& series, const std::string& machine,
                             v1::MemoryKind kind);

// Section 1 only. Adds count sources to analysis->sources. Same as AddSeriesSources(DraftSeries(...)).
std::vector<SeriesConditions> SummarizeSeries(const std::vector<v1::RunRecord>& records,
                                              const GuideContext& context, const MachineOf& machine_of,
                                              Analysis* analysis);

// SummarizeSeries in two steps. The first, which reads every record, needs no sources, so it can
// run alongside Analyze (at a million runs each takes about a second); the second adds the count
// sources after the analysis' own, so the ids stay those of SummarizeSeries.
struct SeriesDraft {
  SeriesConditions conditions;  // without the runs / ok_runs sources
  std::vector<std::string> run_ids, provenance;        // every run, run order
  std::vector<std::string> ok_run_ids, ok_provenance;  // the CODE_OK ones
};
// Reads `records` only; thread-safe as long as `machine_of` is.
std::vector<SeriesDraft> DraftSeries(const std::vector<v1::RunRecord>& records, const GuideContext& context,
                                     const MachineOf& machine_of);
// DraftSeries over the rows of the records (run_row.h), machines[i] being the machine label of rows[i].
std::vector<SeriesDraft> DraftSeriesLabelled(const std::vector<const RunRow*>& records,
                                             const std::vector<std::string_view>& machines,
                                             const GuideContext& context);
// Adds each series' two count sources, in order, and returns the series.
std::vector<SeriesConditions> AddSeriesSources(std::vector<SeriesDraft> drafts, Analysis* analysis);

// Sections 4 to 6. Adds target and formula sources to analysis->sources.
void DeriveVerdicts(const GuideContext& context, Analysis* analysis, GuideModel* model);

// The decision tables, what to watch and the repetition tables, after DeriveVerdicts (decision.cc).
// Adds aggregate, count and formula sources.
void DeriveDecisions(Analysis* analysis, GuideModel* model);

// Section 7, after DeriveVerdicts (it reuses the verdicts' figures). Adds formula and count sources.
void DeriveRules(const GuideContext& context, Analysis* analysis, GuideModel* model);

// All of it, in the order above (sources ids are thus deterministic).
GuideModel BuildGuideModel(const std::vector<v1::RunRecord>& records, const GuideContext& context,
                           const MachineOf& machine_of, Analysis* analysis);
// The same from the series drafted already (DraftSeries).
GuideModel BuildGuideModel(std::vector<SeriesDraft> series, const GuideContext& context, Analysis* analysis);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_ANALYSIS_GUIDE_MODEL_H_
