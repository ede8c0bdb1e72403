// Reads run records from files: benchfleet series folders (runs.jsonl) and the measurement files
// users already have (llama-bench -o json/jsonl/csv, ComfyUI and llama-server logs, the generic CSV
// of README.md). Part of the synthesis library; stateless and thread-compatible.
#ifndef BENCHFLEET_SYNTHESIS_READERS_MEASUREMENT_FILES_H_
#define BENCHFLEET_SYNTHESIS_READERS_MEASUREMENT_FILES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "benchfleet/v1/conditions.pb.h"
#include "benchfleet/v1/fleet.pb.h"
#include "benchfleet/v1/record.pb.h"
#include "common/env.h"

namespace benchfleet::synthesis {

struct RunRows;  // synthesis/analysis/run_row.h

// A file, or a line of one, that gave no record.
struct Skipped {
  std::string path;
  uint32_t line = 0;  // 1-based; 0 when the whole file was skipped
  std::string reason;
};

// A regression verdict the coordinator stored (fleet.proto RegressionVerdict, the `regressions`
// table), with what the guide names it by: its run's agent, task and conditions.
struct StoredVerdict {
  std::string agent_id;
  std::string task;
  std::string conditions_fingerprint;
  v1::RegressionVerdict verdict;
};

struct ReadResult {
  std::vector<v1::RunRecord> records;
  // The database reader's only: the newest verdict of each agent, task, mode, phase and matrix
  // point, by agent, task, mode, phase, matrix (ReadRecordsFromDatabase). Files have none.
  std::vector<StoredVerdict> verdicts;
  std::vector<Skipped> skipped;
  // The conditions.json of every series folder read, by fingerprint: who measured (hostname,
  // labels, accelerators) for the records whose conditions_fingerprint names them.
  std::map<std::string, v1::MachineConditions> conditions;
};

// The reason a record past a record bound (common/record_validation.h CheckRecordBounds) is
// skipped with: "outside the record bounds: " and the bound's message. Every reader (files and
// database) skips such a record and lists it with this reason in the guide's "Inputs skipped".
std::string OutOfBoundsReason(const absl::Status& bounds);

// Reads every path (a file or a series folder), detecting each file's format. A missing,
// unreadable or malformed file or line, or a record past a record bound (OutOfBoundsReason), is
// added to skipped and the rest is kept. Returns
// INVALID_ARGUMENT "no records in PATHS" when no record at all could be read.
// With `as_rows`, the records of runs.jsonl files (a fleet's bulk) become rows (run_row.h) as they
// are parsed, on up to one thread per core, and only the rows are kept, appended to *as_rows in
// file and line order; the other formats' records still come in ReadResult::records. What is
// skipped, and why, is the same either way. (`benchfleet guide --files` reads so: at a million
// records the messages took five times the memory and most of the guide's time.)
absl::StatusOr<ReadResult> ReadMeasurementFiles(Env* env, const std::vector<std::string>& paths,
                                                RunRows* as_rows = nullptr);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_READERS_MEASUREMENT_FILES_H_
