// Provenance of every figure the guide prints: a Figure points at a Source row of sources.csv,
// which names its runs (and file:line for imported ones) and, when derived, the operation and its
// inputs. Part of benchfleet_synthesis_analysis; plain data, thread-compatible.
#ifndef BENCHFLEET_SYNTHESIS_ANALYSIS_SOURCES_H_
#define BENCHFLEET_SYNTHESIS_ANALYSIS_SOURCES_H_

#include <string>
#include <string_view>
#include <vector>

#include "benchfleet/v1/record.pb.h"

namespace benchfleet::synthesis {

// Operations (README.md, "sources.csv"):
//   value: inputs[0], the figure of the one run run_ids[0];
//   min, max, median, q1, q3, cv, median_ci_low, median_ci_high (spread_figures.h): either over the
//     figures of the sources input_refs (a cell's accepted
//     runs, each cited by its "value" source, which names the run, its provenance and its figure;
//     run_ids, provenance and inputs stay empty), or, without input_refs, over `inputs`, inputs[i]
//     belonging to run_ids[i] (a memory maximum, whose runs have no value source of their own);
//   count: the number of run_ids (inputs empty);
//   target: a figure the user set in a targets file: inputs[0], from input_refs[0] ("FILE:LINE");
//   formula: `formula` over x1..xn = inputs[0..n-1], each taken from the source input_refs[i]
//     ("S12"; a user's target is a "target" source); run_ids and provenance stay empty: the runs are
//     those of the sources it names, followed through input_refs. Formulas use + - * / ( ), decimal literals
//     (unit conversions such as 3600 or 1000000) and x1..xn only.
struct Source {
  std::string id;         // "S1", "S2", ... in the order of the deterministic walk
  std::string operation;  // see above
  std::vector<std::string> run_ids;
  std::vector<std::string> provenance;  // per run: "live", "FILE:LINE" or "unknown"
  std::vector<double> inputs;
  std::string formula;                  // operation "formula" only, e.g. "x1 / x2"
  std::vector<std::string> input_refs;  // operations "target" and "formula"
};

struct Figure {
  double value = 0;
  std::string unit;
  std::string source_id;
};

class SourceTable {
 public:
  // Appends a source, giving it the next id, and returns that id.
  std::string Add(std::string operation, std::vector<std::string> run_ids, std::vector<std::string> provenance,
                  std::vector<double> inputs);
  // Appends a "value" source: `value`, the figure of the one run `run_id` of `provenance`.
  std::string AddValue(std::string_view run_id, std::string_view provenance, double value);
  // Appends an aggregate (min, max, median, q1, q3, cv, median_ci_low, median_ci_high) over the
  // figures of the sources `input_refs`.
  std::string AddAggregate(std::string operation, std::vector<std::string> input_refs);
  // Appends a "count" source over `run_ids`.
  std::string AddCount(std::vector<std::string> run_ids, std::vector<std::string> provenance);
  // Appends a "target" source: `value` set by the user at `file_line` ("targets.yaml:12").
  std::string AddTarget(double value, std::string file_line);
  // Appends a "formula" source. `value` is computed by the caller with C++ arithmetic; the test of
  // the guide recomputes it from `formula` and `inputs` by its own evaluator.
  Figure AddFormula(std::string formula, std::vector<double> inputs, std::vector<std::string> input_refs,
                    double value, std::string unit);
  // Appends the sources of `other`, a table built on its own (a cell's, on another thread), with
  // their ids, and the ids that they cite, shifted by this table's size before: as if they had
  // been added here. Returns that shift, to apply to the figures citing them (ShiftSourceId).
  size_t AppendShifted(SourceTable other);
  // Makes room for `count` sources in all, so that appending a million of them moves none.
  void Reserve(size_t count) { sources_.reserve(count); }
  // Returns the source with `id`, or nullptr.
  const Source* Find(const std::string& id) const;
  const std::vector<Source>& sources() const { return sources_; }

 private:
  std::vector<Source> sources_;
};

// Turns the id "S<n>" into "S<n + shift>"; leaves anything else alone.
void ShiftSourceId(size_t shift, std::string* id);

// Returns "live", "FILE:LINE" or "unknown" for a record's provenance.
std::string ProvenanceOf(const v1::RunRecord& record);

// Formats `v` in the shortest form that reads back to the same double (std::to_chars).
std::string FormatDouble(double v);

// Returns sources.csv: header "source_id,operation,run_ids,provenance,inputs,formula,input_refs" then one row per
// source, lists joined with ';', fields quoted per RFC 4180 when needed, lines ended by "\r\n".
std::string SourcesCsv(const SourceTable& table);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_ANALYSIS_SOURCES_H_
