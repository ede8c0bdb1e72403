// TaskExecutor: runs the series a coordinator assigns to this agent (TaskAssignment, on the
// Connect stream), one task at a time, in the order they arrive, and reports each one's
// TaskUpdates: accepted{runs_total} or refused{reason}, progress after every run, finished.
//
// The agent has its own say: before anything runs, a task's spec is read (one over
// kMaxSpecBytes, common/spec/spec_limits.h, or one that does not parse ends FAILED with the
// reason, the parser's "LINE: ..." message), its backend must be in allow.backends and its
// backend section must pass the backend's own allow-list checks (executables, model folders,
// URLs; refused with what the setting lists), its matrix must suit the backend, and it must
// have arrived before its deadline. The coordinator chooses nothing else: the series folder is
// tasks_dir/TASK_ID/attempt-N, the records go to the agent's own outbox.
//
// A task id seen before (the same task re-sent after a reconnect) never runs twice: queued, it
// waits; running, its latest progress is sent again; ended, its last update (refused or
// finished) is sent again, also after an agent restart (it is kept in the task's folder).
//
// Every update carries the task's attempt (TaskUpdate.attempt). A higher attempt of a task held
// here (the coordinator retried it after its lease expired while this agent was cut off) takes it
// over: a queued one waits under the new attempt, a running one goes on under it (its runs so far
// are kept, none is made again), an ended one's outcome answers it (kept in the new attempt's
// folder). A lower attempt, or a TaskCancel of a lower attempt, is ignored (logged). Records
// carry the attempt whose runner made them (RunRecord.task_attempt). A task id this process has
// not seen runs in full: after an agent restart mid-attempt, a later attempt runs again in a new
// folder. A TaskCancel stops the task (finished{cancelled}): the pause between runs and every
// wait of its backend end at once, the run in progress (if any) finishes, and the session's
// server is stopped; a queued task is
// cancelled before it starts.
//
// Time and files come through the injected Env. Owned by `benchfleet-agent serve` (or a test);
// thread-safe: Assign and Cancel are called from the uplink's reading thread and return at once.
#ifndef BENCHFLEET_AGENT_TASKS_TASK_EXECUTOR_H_
#define BENCHFLEET_AGENT_TASKS_TASK_EXECUTOR_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/backends/backend.h"
#include "agent/config/allow_list.h"
#include "agent/metrics/agent_metrics.h"
#include "agent/outbox/outbox.h"
#include "agent/probes/device_sampler.h"
#include "benchfleet/v1/conditions.pb.h"
#include "benchfleet/v1/fleet.pb.h"
#include "common/env.h"

namespace benchfleet::agent {

// The file of a task's folder that keeps its last update (refused or finished), serialized.
inline constexpr char kTaskOutcomeFile[] = "outcome.binpb";

struct TaskExecutorOptions {
  // Clock (deadlines, pauses) and files. Required.
  Env* env = nullptr;
  // The agent's allow-list, from its agent.yaml. Required.
  const AllowList* allow = nullptr;
  // What the backends measure with (agent/backends/services.h); must outlive the executor.
  BackendServices services;
  std::string agent_id;  // required
  // This machine's conditions, captured once by the caller.
  v1::MachineConditions conditions;
  // Where each task's folder goes (state_dir/tasks). Required.
  std::string tasks_dir;
  // Where the records are queued for the coordinator; nullptr keeps them in the series folder.
  Outbox* outbox = nullptr;
  // Finds a backend by the spec's name (FindBackend in the agent; a fake in tests). Required.
  std::function<absl::StatusOr<BackendFactory>(const std::string& name)> find_backend;
  // Sends an update to the coordinator (Uplink::SendTaskUpdate). Called without the executor's
  // lock, from the executor's thread or from Assign/Cancel. Required.
  std::function<void(const v1::TaskUpdate&)> send_update;
  // Called with true right before each timed run and false right after (the uplink is paused).
  std::function<void(bool timed)> on_timed_window;
  // Called with each series' finished conditions (the backend's version and attributes added:
  // the fingerprint its records carry) before its first record is queued, so the coordinator can
  // store them (serve: Uplink::AnnounceConditions). Must return at once; the series does not
  // wait for delivery. Unset: the coordinator knows only the conditions of the uplink's Hello.
  std::function<void(const v1::MachineConditions&)> announce_conditions;
  // Watches every timed run of every task (serve's DeviceSampler, see StartDeviceSampling);
  // nullptr watches nothing. Tasks run one at a time, so one watcher serves them all. Outlives
  // the executor.
  RunWatcher* run_watcher = nullptr;
  // One line per event for the operator; unset is silent.
  std::function<void(std::string_view)> log;
  // Told when an accepted task starts running and when it ends (serve's /metrics); nullptr
  // counts nothing. Must outlive the executor.
  AgentMetrics* metrics = nullptr;
};

class TaskExecutor {
 public:
  explicit TaskExecutor(TaskExecutorOptions options);
  ~TaskExecutor();  // Stop()s
  TaskExecutor(const TaskExecutor&) = delete;
  TaskExecutor& operator=(const TaskExecutor&) = delete;

  // Starts the thread that runs the tasks. INVALID_ARGUMENT for missing options;
  // FAILED_PRECONDITION when already started.
  absl::Status Start();

  // Stops the task in progress as a cancel does (its pause and its backend's waits end at once, a
  // run in progress finishes, its server is stopped; it finishes with ok=false, "the agent
  // stopped"), leaves queued tasks unanswered (the coordinator sends them again) and joins the
  // thread. Idempotent; callable from any thread but the executor's own (from send_update).
  void Stop();

  // Stop() without the join: returns at once, also on the executor's own thread. Stop() still
  // has to be called to join.
  void RequestStop();

  // Queues a task (or answers a duplicate). Returns at once.
  void Assign(const v1::TaskAssignment& assignment);

  // Cancels a task: stopped at once when running (a pause or a backend's wait ends; a run in
  // progress finishes first), ended before it starts when queued; an
  // ended or unknown task's answer is sent again (or a finished{cancelled} saying it is unknown).
  void Cancel(const v1::TaskCancel& cancel);

  // Blocks until no task is queued or running, or timeout of real time passed (false).
  bool WaitUntilIdle(absl::Duration timeout);

 private:
  struct Task;

  void Loop();
  // Runs one task to its end and returns its last update (refused or finished).
  v1::TaskUpdate RunTask(Task* task);
  void Send(const v1::TaskUpdate& update);
  void Log(std::string_view line);
  std::string TaskDir(const v1::TaskAssignment& assignment) const;
  // Keeps a task's last update in its folder, for a re-send after an agent restart.
  void KeepOutcome(const v1::TaskAssignment& assignment, const v1::TaskUpdate& outcome);

  const TaskExecutorOptions options_;
  std::mutex join_mu_;  // held while joining thread_
  std::thread thread_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool busy_ ABSL_GUARDED_BY(mu_) = false;  // a task is running
  std::map<std::string, std::unique_ptr<Task>> tasks_ ABSL_GUARDED_BY(mu_);  // by task_id
  std::deque<Task*> queue_ ABSL_GUARDED_BY(mu_);
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_TASKS_TASK_EXECUTOR_H_
