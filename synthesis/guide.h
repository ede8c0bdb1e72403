// The sizing guide in one call: records (and what is known of their machines) in, the guide's files
// out (guide.<lang>.md, guide.<lang>.html, the charts, sources.csv), as bytes by file name. No I/O,
// no clock: the same input gives the same bytes. Used by `benchfleet guide`, the guide benchmark
// and the browser test. Part of benchfleet_synthesis; thread-compatible.
#ifndef BENCHFLEET_SYNTHESIS_GUIDE_H_
#define BENCHFLEET_SYNTHESIS_GUIDE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "benchfleet/v1/conditions.pb.h"
#include "benchfleet/v1/record.pb.h"
#include "synthesis/analysis/guide_model.h"
#include "synthesis/analysis/run_row.h"
#include "synthesis/readers/measurement_files.h"
#include "synthesis/render/render.h"

namespace benchfleet::synthesis {

struct GuideInput {
  // The records: `records` (files, coordinator) and the rows of `rows` (the database's, made as
  // they were decoded), both read by the guide; the order does not matter.
  std::vector<v1::RunRecord> records;
  RunRows rows;
  // MachineConditions by fingerprint (series folders' conditions.json, or the coordinator's table).
  std::map<std::string, v1::MachineConditions> conditions;
  // What could not be read (listed in the guide).
  std::vector<Skipped> skipped;
  // The coordinator's regression verdicts (ReadResult::verdicts): the guide's "Regression checks".
  std::vector<StoredVerdict> verdicts;
  // The targets file's content; nullopt: DefaultTargets().
  std::optional<Targets> targets;
};

// A machine's label in the guide: "hostname (class)" from its conditions when the run's
// fingerprint is known and it has no params["machine"] (imported files), else DefaultMachineOfRow,
// else (an imported file that names no machine) the file's path.
std::string MachineLabel(const RunRow& run, const std::map<std::string, v1::MachineConditions>& conditions);
// The class of a machine: its conditions' "class" label, else params["class"], else the label.
std::string MachineClass(const RunRow& run, const std::map<std::string, v1::MachineConditions>& conditions);

// Builds every file of the guide for `langs`, by file name.
std::map<std::string, std::string> BuildGuideFiles(const GuideInput& input, const std::vector<Lang>& langs);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_GUIDE_H_
