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
#include "benchfleet/v1/record.pb.h"
#include "common/env.h"
#include "google/protobuf/arena.h"

namespace benchfleet::synthesis {

// A file, or a line of one, that gave no record.
struct Skipped {
  std::string path;
  uint32_t line = 0;  // 1-based; 0 when the whole file was skipped
  std::string reason;
};

struct ReadResult {
  std::vector<v1::RunRecord> records;
  std::vector<Skipped> skipped;
  // The conditions.json of every series folder read, by fingerprint: who measured (hostname,
  // labels, accelerators) for the records whose conditions_fingerprint names them.
  std::map<std::string, v1::MachineConditions> conditions;
};

// Records decoded onto protobuf arenas (the database reader's, one arena per batch of rows), and
// the arenas that own them: decoding a million records one heap allocation per message, map entry
// and repeated field was most of the time spent reading them, and freeing them as long again.
// `records` point into `arenas` and live as long as any copy does (a copy shares them: they are
// read-only once read).
struct ArenaRecords {
  std::vector<std::shared_ptr<const google::protobuf::Arena>> arenas;
  std::vector<const v1::RunRecord*> records;
};

// Reads every path (a file or a series folder), detecting each file's format. A missing,
// unreadable or malformed file or line is added to skipped and the rest is kept. Returns
// INVALID_ARGUMENT "no records in PATHS" when no record at all could be read.
absl::StatusOr<ReadResult> ReadMeasurementFiles(Env* env, const std::vector<std::string>& paths);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_READERS_MEASUREMENT_FILES_H_
