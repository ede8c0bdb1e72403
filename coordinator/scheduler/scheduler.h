// Scheduler: the fleet's scheduler inside one coordinator. It fans a series out as one task per
// matching agent, hands each task to its agent when that agent has a Connect stream to this
// coordinator, leases running tasks (renewed by the agent's heartbeats), ends tasks whose lease
// expired (LOST, or PENDING again for a retry) or whose series' deadline passed (EXPIRED), fires
// cron schedules exactly once across coordinators, and checks each run of every series against
// its baseline (regression.h: a Mann-Whitney U test of the task's runs so far against earlier
// ones). Every state lives in the stores (FleetStores: machines, tasks, schedules, annotations;
// PostgreSQL in production): two coordinators on one database share the fleet; a NOTIFY from the
// other one (or the 1 s poll) makes Tick() look again. Owned by CoordinatorServer; thread-safe.
// Time comes only from the Clock, so tests drive leases, deadlines and cron with a SimulatedClock
// and call Tick() themselves, on MemoryFleetStore (tests/support) or PostgreSQL.
#ifndef BENCHFLEET_COORDINATOR_SCHEDULER_SCHEDULER_H_
#define BENCHFLEET_COORDINATOR_SCHEDULER_SCHEDULER_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "benchfleet/v1/conditions.pb.h"
#include "benchfleet/v1/fleet.pb.h"
#include "benchfleet/v1/record.pb.h"
#include "common/clock.h"
#include "coordinator/metrics/coordinator_metrics.h"
#include "coordinator/store/fleet_store.h"

namespace benchfleet::coordinator {

// Where the scheduler writes to one agent's Connect stream. Implemented by the gateway's stream;
// Send* never block for long (they queue) and return false once the stream is gone.
class TaskSink {
 public:
  virtual ~TaskSink() = default;
  virtual bool SendAssignment(const v1::TaskAssignment& assignment) = 0;
  virtual bool SendCancel(const v1::TaskCancel& cancel) = 0;
};

struct SchedulerOptions {
  Clock* clock = &SystemClock();
  // A RUNNING task whose agent sent no heartbeat (nor update) for this long is LOST / retried.
  absl::Duration lease = absl::Seconds(30);
  // Baseline size for the regression check (last K accepted runs) and the threshold, where the
  // series' spec sets no `regression.baseline_runs` / `regression.threshold`.
  int baseline_runs = 5;
  double regression_threshold = 0.10;
  // This coordinator's name in the store (which coordinator holds which agent's stream).
  std::string coordinator_id;
  // Told of every regression verdict stored, of every task given to an agent (TaskKnown) and of
  // every Tick in which a database operation failed (DatabaseError "scheduler_tick"). Not owned;
  // null: nothing is counted.
  CoordinatorMetrics* metrics = nullptr;
};

class Scheduler {
 public:
  // Every store of `stores` must be set and outlive the scheduler.
  Scheduler(FleetStores stores, SchedulerOptions options);
  ~Scheduler();

  // ---- Fleet service (operator) ----
  // Validates spec_yaml (ParseSeriesSpec + `targets`, `deadline`, `retry`), selects the agents
  // (every known machine whose latest conditions match), stores the series and its tasks
  // (PENDING), then dispatches to those connected here. INVALID_ARGUMENT "SOURCE: the spec is N
  // bytes, over the limit ..." for a spec over kMaxSpecBytes (common/spec/spec_limits.h),
  // INVALID_ARGUMENT "SOURCE:LINE: ..." for a bad spec and FAILED_PRECONDITION "no agent matches targets ..." when no machine matches;
  // nothing is stored then. dry_run: only selects.
  absl::StatusOr<v1::SubmitSeriesResponse> Submit(const v1::SubmitSeriesRequest& request);
  absl::StatusOr<v1::SeriesStatus> Cancel(const std::string& series_id);
  absl::StatusOr<std::vector<v1::SeriesStatus>> ListSeries(bool active_only);
  absl::StatusOr<v1::SeriesStatus> GetSeries(const std::string& series_id);
  // Blocks until the series' status may have changed since `version` (or `timeout`), and returns
  // the current version; WatchSeries loops on it. Versions increase on every local change and on
  // every Tick() that saw a change from elsewhere.
  uint64_t WaitForChange(uint64_t version, absl::Duration timeout);

  absl::StatusOr<v1::Schedule> AddSchedule(const v1::AddScheduleRequest& request);
  absl::StatusOr<std::vector<v1::Schedule>> ListSchedules();
  absl::Status RemoveSchedule(const std::string& schedule_id);

  // Marks runs invalid with a reason (NOT_FOUND for an unknown run or series; INVALID_ARGUMENT
  // without a reason).
  absl::StatusOr<std::vector<std::string>> InvalidateRuns(const v1::InvalidateRunsRequest& request);

  // ---- Gateway (agents' streams) ----
  // An agent's stream is open here: its PENDING tasks (deadline not passed) are sent at once.
  void AgentConnected(const std::string& agent_id, std::shared_ptr<TaskSink> sink);
  void AgentDisconnected(const std::string& agent_id, const TaskSink* sink);
  // Renews the leases of the agent's RUNNING tasks.
  void Heartbeat(const std::string& agent_id);
  // Applies an agent's update (accepted / refused / progress / finished) to its task; an update
  // for a task that is not the agent's is ignored (and logged), and so is one of an attempt that
  // is not the task's current one (logged, counted: StaleTaskUpdate). To a running agent's update
  // of an old attempt it answers, once per lease, with the current assignment (RUNNING here) or
  // a TaskCancel of that attempt (the task has ended; also for a LOST task's last attempt).
  void TaskUpdated(const std::string& agent_id, const v1::TaskUpdate& update);
  // Called with the records of a committed group: counts flags per task and runs the regression
  // check on each accepted run of a task (every series, scheduled or not). The baseline of a task's
  // point is read at its first checked run and kept while the task runs.
  void RunsStored(const std::vector<v1::RunRecord>& records);

  // ---- Time ----
  // Reaps expired leases, expires tasks past their series' deadline, fires due schedules (one
  // series per slot, whichever coordinator claims the slot; missed slots fire once), dispatches
  // PENDING tasks of agents connected here, and ends series whose tasks all ended. Called every
  // second by the coordinator's scheduler thread (and at once on a NOTIFY), or by tests.
  void Tick();

 private:
  // Private state (implementation's choice).
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_SCHEDULER_SCHEDULER_H_
