// TaskStore: where the fleet scheduler keeps series and their tasks (one per agent), with the
// conditional writes that let several coordinators on one database share them: a task is claimed
// once whoever else tries, and ended only from the state and attempt its writer read. Every change
// to series or tasks moves ChangeCounter() (and, on PostgreSQL, sends NOTIFY benchfleet_fleet).
// Used by the Scheduler; implemented by PgFleetStore (pg_fleet_store.h) and, for tests,
// MemoryFleetStore (tests/support/memory_fleet_store.h). Implementations are thread-safe.
#ifndef BENCHFLEET_COORDINATOR_STORE_TASK_STORE_H_
#define BENCHFLEET_COORDINATOR_STORE_TASK_STORE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "benchfleet/v1/fleet.pb.h"

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

class TaskStore {
 public:
  virtual ~TaskStore() = default;

  // Stores the series (id, a new UUID, set here; state ACTIVE) and one PENDING task per agent,
  // attempt 1, updated at `created`, in one transaction. When the series came from a schedule
  // slot (schedule_id and slot_time set), that slot's series id is set too (ScheduleStore). Returns
  // the series id.
  virtual absl::StatusOr<std::string> CreateSeries(const SeriesRow& series,
                                                   const std::vector<std::string>& agent_ids) = 0;
  // NOT_FOUND "no series ID" for an unknown id (or one that is not a UUID).
  virtual absl::StatusOr<SeriesRow> GetSeries(const std::string& series_id) = 0;
  // Newest first (by created, then id, both descending).
  virtual absl::StatusOr<std::vector<SeriesRow>> ListSeries(bool active_only) = 0;
  // Sorted by agent_id (then task id); empty for an unknown series.
  virtual absl::StatusOr<std::vector<TaskRow>> ListTasks(const std::string& series_id) = 0;
  // NOT_FOUND "no task ID" for an unknown id (or one that is not a UUID).
  virtual absl::StatusOr<TaskRow> GetTask(const std::string& task_id) = 0;

  // Takes the PENDING tasks of `agent_ids` whose series is ACTIVE and whose deadline is after
  // `now`: RUNNING, held by coordinator_id, leased until lease_expiry, updated at `now`. One
  // statement, so a task is taken once whoever else tries. In no particular order.
  virtual absl::StatusOr<std::vector<ClaimedTask>> ClaimPendingTasks(
      const std::vector<std::string>& agent_ids, const std::string& coordinator_id, absl::Time now,
      absl::Time lease_expiry) = 0;

  // Takes over the agent's RUNNING tasks for coordinator_id (lease moved to lease_expiry) and
  // returns them, sorted by task id: an agent that reconnects may never have received an
  // assignment sent on its old stream, so they are sent again (the agent runs a task id once and
  // answers a repeat with its latest update). Not a change (ChangeCounter stays).
  virtual absl::StatusOr<std::vector<ClaimedTask>> TakeOverRunningTasks(const std::string& agent_id,
                                                                        const std::string& coordinator_id,
                                                                        absl::Time now,
                                                                        absl::Time lease_expiry) = 0;

  // Writes the task's fields (state, attempt, runs, progress, message, lease, coordinator_id;
  // not its flag counts) and updated = `now` if it is still in `expected_state` with
  // `expected_attempt`. Returns whether it was written (false for an unknown id).
  virtual absl::StatusOr<bool> UpdateTask(const TaskRow& task, v1::TaskStatus::State expected_state,
                                          uint32_t expected_attempt, absl::Time now) = 0;

  // Moves the lease of the agent's RUNNING tasks to lease_expiry, never earlier than it was.
  virtual absl::Status RenewLeases(const std::string& agent_id, absl::Time lease_expiry) = 0;

  // RUNNING tasks whose lease expired at or before `now`, and PENDING tasks whose series'
  // deadline is at or before `now`, sorted by series id then agent.
  virtual absl::StatusOr<std::vector<DueTask>> ListDueTasks(absl::Time now) = 0;

  // Ends every task of the series that has not ended (CANCELLED, with `message`, no lease) and the
  // series (CANCELLED when ACTIVE). Returns the tasks that were RUNNING, as written (CANCELLED);
  // those are marked for TakeCancels (their agents are told by whichever coordinator holds their
  // stream). NOT_FOUND "no series ID" for an unknown series.
  virtual absl::StatusOr<std::vector<TaskRow>> CancelSeries(const std::string& series_id,
                                                            const std::string& message,
                                                            absl::Time now) = 0;

  // Clears and returns the tasks of `agent_ids` cancelled while RUNNING whose agent was not told
  // yet (CancelSeries marks them), so that the coordinator holding the stream sends the TaskCancel.
  // Each such task is returned once.
  virtual absl::StatusOr<std::vector<TaskRow>> TakeCancels(const std::vector<std::string>& agent_ids) = 0;

  // Sets DONE on ACTIVE series none of whose tasks is PENDING or RUNNING. Returns their ids.
  virtual absl::StatusOr<std::vector<std::string>> FinishDoneSeries() = 0;

  // Adds `counts` ({task id: {flag code: runs}}) to the tasks' flag_counts. Unknown task ids
  // (runs made outside the scheduler) are skipped.
  virtual absl::Status AddFlagCounts(
      const std::map<std::string, std::map<std::string, int>>& counts) = 0;

  // Returns a number that changes whenever any coordinator changed series or tasks (or
  // schedules), read after the change.
  virtual absl::StatusOr<int64_t> ChangeCounter() = 0;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_TASK_STORE_H_
