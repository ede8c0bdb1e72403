// FleetStore: where the fleet scheduler keeps series, tasks, schedules, slots, run annotations
// and regression verdicts. The Scheduler's only view of the database; PgFleetStore
// (pg_fleet_store.h) is the PostgreSQL one. Every state lives here, so several coordinators on one
// database share the fleet: writes that could race (claiming a task, ending it, claiming a slot)
// are conditional, and every change to series or tasks sends NOTIFY benchfleet_fleet.
// Implementations are thread-safe.
#ifndef BENCHFLEET_COORDINATOR_STORE_FLEET_STORE_H_
#define BENCHFLEET_COORDINATOR_STORE_FLEET_STORE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "benchfleet/v1/admin.pb.h"
#include "benchfleet/v1/conditions.pb.h"
#include "benchfleet/v1/fleet.pb.h"
#include "benchfleet/v1/record.pb.h"
#include "coordinator/store/fleet_snapshot.h"

namespace benchfleet::coordinator {

// The NOTIFY channel of fleet changes.
inline constexpr char kFleetChannel[] = "benchfleet_fleet";

struct SeriesRow {
  std::string id;  // set by the store on CreateSeries
  std::string name;
  std::string task;
  std::string backend;
  std::string spec_yaml;
  std::string source_name;
  absl::Time created;
  std::optional<absl::Time> deadline;
  int retry_max = 1;  // sends of one task at most (retry.max_attempts)
  v1::SeriesStatus::State state = v1::SeriesStatus::STATE_ACTIVE;
  std::string schedule_id;  // "" unless a schedule fired it
  std::optional<absl::Time> slot_time;
};

struct TaskRow {
  v1::TaskStatus status;  // regressions left empty
  std::optional<absl::Time> lease_expiry;
  std::string coordinator_id;
};

// A task this coordinator just took for sending (PENDING -> RUNNING).
struct ClaimedTask {
  std::string task_id;
  std::string series_id;
  std::string agent_id;
  std::string task;  // the series' task name
  uint32_t attempt = 1;
  std::string spec_yaml;
  std::optional<absl::Time> deadline;
};

// A task whose lease expired or whose series' deadline passed, as read (ended by the caller).
struct DueTask {
  TaskRow task;
  int retry_max = 1;
  std::optional<absl::Time> deadline;
};

struct ScheduleRow {
  std::string id;  // set by the store on AddSchedule
  std::string cron;
  std::string spec_yaml;
  std::string source_name;
  std::string series_name;
  std::string task;
  absl::Time created;
  std::optional<absl::Time> last_slot;  // the latest claimed slot
  std::string last_series_id;           // the series it fired ("" when none)
};

// One earlier run of the same task, agent, mode, phase and matrix (regression baseline).
struct BaselineRun {
  std::string run_id;
  std::map<std::string, double> metrics;
  std::optional<double> wall_seconds;
  std::string conditions_fingerprint;
  absl::Time start_time;
};

class FleetStore {
 public:
  virtual ~FleetStore() = default;

  // ---- Machines (the runs store's tables, read only) ----
  virtual absl::StatusOr<std::vector<v1::Machine>> ListMachines() = 0;
  virtual absl::StatusOr<std::vector<v1::MachineConditions>> GetConditions(
      const std::vector<std::string>& fingerprints) = 0;

  // ---- Series and tasks ----
  // Stores the series (id set here) and one PENDING task per agent, attempt 1, in one
  // transaction. When the series came from a schedule slot, the slot's series_id is set too.
  // Returns the series id.
  virtual absl::StatusOr<std::string> CreateSeries(const SeriesRow& series,
                                                   const std::vector<std::string>& agent_ids) = 0;
  // NOT_FOUND for an unknown id (or one that is not a UUID).
  virtual absl::StatusOr<SeriesRow> GetSeries(const std::string& series_id) = 0;
  // Newest first.
  virtual absl::StatusOr<std::vector<SeriesRow>> ListSeries(bool active_only) = 0;
  // Sorted by agent_id.
  virtual absl::StatusOr<std::vector<TaskRow>> ListTasks(const std::string& series_id) = 0;
  // NOT_FOUND for an unknown id.
  virtual absl::StatusOr<TaskRow> GetTask(const std::string& task_id) = 0;

  // Takes the PENDING tasks of `agent_ids` whose series is ACTIVE and whose deadline is after
  // `now`: RUNNING, held by coordinator_id, leased until lease_expiry. One statement, so a task is
  // taken once whoever else tries.
  virtual absl::StatusOr<std::vector<ClaimedTask>> ClaimPendingTasks(
      const std::vector<std::string>& agent_ids, const std::string& coordinator_id, absl::Time now,
      absl::Time lease_expiry) = 0;

  // Takes over the agent's RUNNING tasks for coordinator_id (lease moved to lease_expiry) and
  // returns them: an agent that reconnects may never have received an assignment sent on its old
  // stream, so they are sent again (the agent runs a task id once and answers a repeat with its
  // latest update).
  virtual absl::StatusOr<std::vector<ClaimedTask>> TakeOverRunningTasks(const std::string& agent_id,
                                                                        const std::string& coordinator_id,
                                                                        absl::Time now,
                                                                        absl::Time lease_expiry) = 0;

  // Writes the task's fields (state, attempt, runs, progress, message, lease, coordinator_id)
  // if it is still in `expected_state` with `expected_attempt`. Returns whether it was written.
  virtual absl::StatusOr<bool> UpdateTask(const TaskRow& task, v1::TaskStatus::State expected_state,
                                          uint32_t expected_attempt, absl::Time now) = 0;

  // Moves the lease of the agent's RUNNING tasks to lease_expiry.
  virtual absl::Status RenewLeases(const std::string& agent_id, absl::Time lease_expiry) = 0;

  // RUNNING tasks whose lease expired at or before `now`, and PENDING tasks whose series'
  // deadline is at or before `now`.
  virtual absl::StatusOr<std::vector<DueTask>> ListDueTasks(absl::Time now) = 0;

  // Ends every task of the series that has not ended (CANCELLED, with `message`) and the series
  // (CANCELLED when ACTIVE). Returns the tasks that were RUNNING; those are marked for
  // TakeCancels (their agents are told by whichever coordinator holds their stream).
  // NOT_FOUND for an unknown series.
  virtual absl::StatusOr<std::vector<TaskRow>> CancelSeries(const std::string& series_id,
                                                            const std::string& message,
                                                            absl::Time now) = 0;

  // Clears and returns the tasks of `agent_ids` cancelled while RUNNING whose agent was not told
  // yet (CancelSeries marks them), so that the coordinator holding the stream sends the TaskCancel.
  virtual absl::StatusOr<std::vector<TaskRow>> TakeCancels(const std::vector<std::string>& agent_ids) = 0;

  // Sets DONE on ACTIVE series whose tasks have all ended. Returns their ids.
  virtual absl::StatusOr<std::vector<std::string>> FinishDoneSeries() = 0;

  // Adds `counts` ({task id: {flag code: runs}}) to the tasks' flag_counts. Unknown task ids
  // (runs made outside the scheduler) are skipped.
  virtual absl::Status AddFlagCounts(
      const std::map<std::string, std::map<std::string, int>>& counts) = 0;

  // Returns a number that changes whenever any coordinator changed series or tasks.
  virtual absl::StatusOr<int64_t> ChangeCounter() = 0;

  // ---- Schedules ----
  virtual absl::StatusOr<std::string> AddSchedule(const ScheduleRow& schedule) = 0;
  // Live schedules by creation time, with their latest claimed slot.
  virtual absl::StatusOr<std::vector<ScheduleRow>> ListSchedules() = 0;
  // NOT_FOUND for an unknown or already removed schedule.
  virtual absl::Status RemoveSchedule(const std::string& schedule_id, absl::Time now) = 0;
  // INSERT ... ON CONFLICT DO NOTHING: true for exactly one caller per (schedule, slot).
  virtual absl::StatusOr<bool> ClaimSlot(const std::string& schedule_id, absl::Time slot,
                                         const std::string& coordinator_id, absl::Time now) = 0;

  // ---- Runs: annotations and regressions ----
  // Annotates each run (`code`, `reason`); an existing annotation with the same code is
  // replaced. NOT_FOUND naming the first run id that is not stored.
  virtual absl::Status AnnotateRuns(const std::vector<std::string>& run_ids, const std::string& code,
                                    const std::string& reason, absl::Time now) = 0;
  // The ids of the stored runs of a series, sorted.
  virtual absl::StatusOr<std::vector<std::string>> RunsOfSeries(const std::string& series_id) = 0;

  // The last `limit` accepted runs (status ok, no excluding flag, no INVALIDATED or REGRESSION
  // annotation) of the record's task, agent, mode, phase and matrix that started before it and
  // belong to another task (task_id) than the record's, newest first.
  virtual absl::StatusOr<std::vector<BaselineRun>> Baseline(const v1::RunRecord& record,
                                                            int limit) = 0;
  // The last `limit` accepted runs (status ok, no excluding flag, not INVALIDATED; a REGRESSION
  // annotation does not exclude) of the record's own task_id, mode, phase and matrix that started
  // no later than it, the record included once it is stored, newest first: a verdict's sample.
  virtual absl::StatusOr<std::vector<BaselineRun>> Sample(const v1::RunRecord& record, int limit) = 0;
  // Stores the verdict of a run of task_id (once per run); a REGRESSION verdict also annotates
  // the runs of its sample (REGRESSION, `reason`; a run annotated already keeps its reason) and
  // counts a REGRESSION flag on the task for each run it newly annotates.
  virtual absl::Status StoreVerdict(const std::string& task_id, const v1::RegressionVerdict& verdict,
                                    const std::string& reason, absl::Time now) = 0;
  // The verdicts of the series' tasks, {task id: verdicts by their runs' start}: of each task, the newest
  // verdict of each point (mode, phase, matrix); every verdict stored before `kind` existed.
  virtual absl::StatusOr<std::map<std::string, std::vector<v1::RegressionVerdict>>> ListVerdicts(
      const std::string& series_id) = 0;

  // ---- Metrics ----
  // Reads the fleet-wide gauges in one statement: machines known, the agents whose last_seen is
  // at or after `seen_since`, tasks by state (every state of v1::TaskStatus, lower case, 0 when
  // none) and the (agent, series' task name) of every PENDING or RUNNING task, sorted.
  virtual absl::StatusOr<FleetSnapshot> ReadFleetSnapshot(absl::Time seen_since) = 0;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_FLEET_STORE_H_
