// RunAnnotationStore: what the fleet says about stored runs (the runs themselves are never
// modified): operators' and the regression check's annotations, the runs a verdict compares
// (Baseline, Sample) and the verdicts. Used by the Scheduler (InvalidateRuns, the regression check
// of regression.h); implemented by PgFleetStore (pg_fleet_store.h) and, for tests,
// MemoryFleetStore (tests/support/memory_fleet_store.h). Implementations are thread-safe.
#ifndef BENCHFLEET_COORDINATOR_STORE_RUN_ANNOTATION_STORE_H_
#define BENCHFLEET_COORDINATOR_STORE_RUN_ANNOTATION_STORE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "benchfleet/v1/fleet.pb.h"
#include "benchfleet/v1/record.pb.h"

namespace benchfleet::coordinator {

// One earlier run of the same task, agent, mode, phase and matrix (regression baseline).
struct BaselineRun {
  std::string run_id;
  std::map<std::string, double> metrics;
  std::optional<double> wall_seconds;
  std::string conditions_fingerprint;
  absl::Time start_time;
};

class RunAnnotationStore {
 public:
  virtual ~RunAnnotationStore() = default;

  // Annotates each run (`code`, `reason`); an existing annotation with the same code is
  // replaced. NOT_FOUND "no run ID" naming the first run id that is not a UUID, else the first
  // that is not stored; nothing is written then.
  virtual absl::Status AnnotateRuns(const std::vector<std::string>& run_ids, const std::string& code,
                                    const std::string& reason, absl::Time now) = 0;
  // The ids of the stored runs of a series, sorted.
  virtual absl::StatusOr<std::vector<std::string>> RunsOfSeries(const std::string& series_id) = 0;

  // The last `limit` accepted runs (status ok, no excluding flag, no INVALIDATED or REGRESSION
  // annotation) of the record's task, agent, mode, phase and matrix that started before it and
  // belong to another task (task_id) than the record's, newest first (by start, then run id).
  // Empty for a record without a start time or whose run id is not a UUID.
  virtual absl::StatusOr<std::vector<BaselineRun>> Baseline(const v1::RunRecord& record,
                                                            int limit) = 0;
  // The last `limit` accepted runs (status ok, no excluding flag, not INVALIDATED; a REGRESSION
  // annotation does not exclude) of the record's own task_id, agent, task, mode, phase and matrix
  // that started no later than it, the record included once it is stored, newest first: a
  // verdict's sample.
  virtual absl::StatusOr<std::vector<BaselineRun>> Sample(const v1::RunRecord& record, int limit) = 0;
  // Stores the verdict of a run of task_id (once per run: a second verdict of the run is
  // dropped); a REGRESSION verdict also annotates the runs of its sample (REGRESSION, `reason`; a
  // run annotated already keeps its reason; a verdict without a sample annotates its run) and
  // counts a REGRESSION flag on the task for each run it newly annotates. INVALID_ARGUMENT when
  // task_id or the run id is not a UUID.
  virtual absl::Status StoreVerdict(const std::string& task_id, const v1::RegressionVerdict& verdict,
                                    const std::string& reason, absl::Time now) = 0;
  // The verdicts of the series' tasks, {task id: verdicts by their runs' start}: of each task, the newest
  // verdict of each point (mode, phase, matrix); every verdict stored before `kind` existed.
  virtual absl::StatusOr<std::map<std::string, std::vector<v1::RegressionVerdict>>> ListVerdicts(
      const std::string& series_id) = 0;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_RUN_ANNOTATION_STORE_H_
