// Where `benchfleet guide` reads from: measurement files (--files), a coordinator's Admin service
// (--coordinator) or its PostgreSQL database (--database-url), narrowed by --task and --since,
// with the targets of --targets; and how it writes the guide's files. Part of benchfleet_cli_lib; stateless, thread-compatible.
#ifndef BENCHFLEET_CLI_GUIDE_INPUT_H_
#define BENCHFLEET_CLI_GUIDE_INPUT_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/env.h"
#include "synthesis/guide.h"

namespace benchfleet::cli {

struct GuideSource {
  std::vector<std::string> files;  // --files
  std::string coordinator;         // --coordinator (set only when given explicitly for guide)
  std::string database_url;        // --database-url
  // $BENCHFLEET_DATABASE_URL: the database read when none of the three options above is given.
  std::string database_url_from_env;
  std::vector<std::string> tasks;  // --task (repeatable): only these tasks
  std::optional<absl::Time> since; // --since: only runs that started at or after
  std::string targets_path;        // --targets
};

// Reads the records and conditions from exactly one of files / coordinator / database (else
// INVALID_ARGUMENT naming the options), applies the task and time filters (to the files after
// reading them; the coordinator and the database select with them), and reads the targets file
// first (its errors name PATH:LINE). Skipped files and lines are in the result; the conditions are
// those the selected records name. INVALID_ARGUMENT "no records match ..." naming the filters
// when nothing is left.
absl::StatusOr<synthesis::GuideInput> LoadGuideInput(Env* env, const GuideSource& source);

// Writes BuildGuideFiles' files into out_dir (made if missing), each atomically (Env's
// WriteFileAtomically: a temporary file, fsync, rename). The largest (sources.csv, hundreds of MB
// at a million runs) is written on a thread of its own while the caller's thread writes the rest.
// Returns the first error; a file that failed is not left behind half written.
absl::Status WriteGuideFiles(Env* env, const std::string& out_dir, const std::map<std::string, std::string>& files);

}  // namespace benchfleet::cli

#endif  // BENCHFLEET_CLI_GUIDE_INPUT_H_
