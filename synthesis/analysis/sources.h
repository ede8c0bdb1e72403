// Provenance of every figure the guide prints: a Figure points at a Source row of sources.csv,
// which names its runs (and file:line for imported ones) and, when derived, the operation and its
// inputs. Part of benchfleet_synthesis_analysis; plain data, thread-compatible.
#ifndef BENCHFLEET_SYNTHESIS_ANALYSIS_SOURCES_H_
#define BENCHFLEET_SYNTHESIS_ANALYSIS_SOURCES_H_

#include <string>
#include <vector>

#include "benchfleet/v1/record.pb.h"

namespace benchfleet::synthesis {

struct Source {
  std::string id;         // "S1", "S2", ... in the order of Analyze's deterministic walk
  std::string operation;  // "value", "min", "max", "median", "q1", "q3"
  std::vector<std::string> run_ids;
  std::vector<std::string> provenance;  // per run: "live", "FILE:LINE" or "unknown"
  std::vector<double> inputs;           // inputs[i] belongs to run_ids[i]
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
  // Returns the source with `id`, or nullptr.
  const Source* Find(const std::string& id) const;
  const std::vector<Source>& sources() const { return sources_; }

 private:
  std::vector<Source> sources_;
};

// Returns "live", "FILE:LINE" or "unknown" for a record's provenance.
std::string ProvenanceOf(const v1::RunRecord& record);

// Formats `v` in the shortest form that reads back to the same double (std::to_chars).
std::string FormatDouble(double v);

// Returns sources.csv: header "source_id,operation,run_ids,provenance,inputs" then one row per
// source, lists joined with ';', fields quoted per RFC 4180 when needed, lines ended by "\r\n".
std::string SourcesCsv(const SourceTable& table);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_ANALYSIS_SOURCES_H_
