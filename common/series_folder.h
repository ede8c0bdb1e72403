// The series folder: what an agent writes for every series it runs, so that a series can be
// read without a coordinator. conditions.json (the MachineConditions, proto JSON), runs.jsonl
// (one RunRecord per line, proto JSON, appended and synced run by run) and runs.csv (one flat
// row per run, rewritten atomically after each run). Not thread-safe: one writer per folder.
#ifndef BENCHFLEET_COMMON_SERIES_FOLDER_H_
#define BENCHFLEET_COMMON_SERIES_FOLDER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "benchfleet/v1/conditions.pb.h"
#include "benchfleet/v1/record.pb.h"
#include "common/env.h"

namespace benchfleet {

inline constexpr char kConditionsFile[] = "conditions.json";
inline constexpr char kRunsJsonlFile[] = "runs.jsonl";
inline constexpr char kRunsCsvFile[] = "runs.csv";

class SeriesFolderWriter {
 public:
  // Creates dir when missing and writes conditions.json. Records already in an existing
  // runs.jsonl are kept (a resumed series appends).
  static absl::StatusOr<std::unique_ptr<SeriesFolderWriter>> Open(
      Env* env, const std::string& dir, const v1::MachineConditions& conditions);

  // Appends the record to runs.jsonl (synced) and rewrites runs.csv.
  absl::Status Add(const v1::RunRecord& record);

  // Appends the records to runs.jsonl with one sync and rewrites runs.csv once: for many runs
  // at a time (Add per run rewrites the CSV each time, quadratic over a long series).
  absl::Status AddBatch(const std::vector<v1::RunRecord>& records);

  const std::string& dir() const { return dir_; }

 private:
  SeriesFolderWriter(Env* env, std::string dir) : env_(env), dir_(std::move(dir)) {}

  Env* env_;
  std::string dir_;
  std::unique_ptr<WritableFile> jsonl_;
  std::vector<v1::RunRecord> records_;
};

// One record read from a file, with where it was read.
struct SourcedRecord {
  v1::RunRecord record;
  std::string file;
  uint32_t line = 0;
};

// Reads records from a series folder (its runs.jsonl) or from a single .jsonl file. A line that
// is not a RunRecord fails the whole read with its file:line, so nothing is half-imported.
absl::StatusOr<std::vector<SourcedRecord>> ReadRecords(Env* env, const std::string& path);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_SERIES_FOLDER_H_
