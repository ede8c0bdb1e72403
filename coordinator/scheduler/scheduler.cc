#include "coordinator/scheduler/scheduler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <optional>
#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/hashing.h"
#include "common/run_flags.h"
#include "common/proto_time.h"
#include "common/spec/series_spec.h"
#include "common/spec/spec_limits.h"
#include "common/string_views.h"
#include "common/yaml_error.h"
#include "coordinator/log.h"
#include "coordinator/scheduler/cron.h"
#include "coordinator/scheduler/regression.h"
#include "coordinator/store/fleet_store.h"

namespace benchfleet::coordinator {
namespace {

constexpr char kDefaultSource[] = "spec";


bool IsOpen(v1::TaskStatus::State s) {
  return s == v1::TaskStatus::STATE_PENDING || s == v1::TaskStatus::STATE_RUNNING;
}

v1::TaskAssignment AssignmentOf(const ClaimedTask& task) {
  v1::TaskAssignment assignment;
  assignment.set_task_id(task.task_id);
  assignment.set_series_id(task.series_id);
  assignment.set_attempt(task.attempt);
  assignment.set_spec_yaml(task.spec_yaml);
  if (task.deadline.has_value()) SetTimestamp(*task.deadline, assignment.mutable_deadline());
  return assignment;
}

// "RUNNING", "LOST", ...: a state as the tasks table and `series show` write it.
std::string StateText(v1::TaskStatus::State state) { return v1::TaskStatus::State_Name(state).substr(6); }

const char* UpdateKind(const v1::TaskUpdate& update) {
  switch (update.body_case()) {
    case v1::TaskUpdate::kAccepted:
      return "accepted";
    case v1::TaskUpdate::kRefused:
      return "refused";
    case v1::TaskUpdate::kProgress:
      return "progress";
    case v1::TaskUpdate::kFinished:
      return "finished";
    case v1::TaskUpdate::BODY_NOT_SET:
      break;
  }
  return "empty update";
}

struct ParsedSubmission {
  SeriesSpec spec;
  const FleetFields& fields() const { return spec.fleet; }
};

absl::StatusOr<ParsedSubmission> ParseSubmission(const std::string& yaml, const std::string& source_name) {
  const std::string source = source_name.empty() ? kDefaultSource : source_name;
  // Before parsing: a spec an agent's stream could not take is no spec at all (nothing stored).
  if (absl::Status size = CheckSpecSize(yaml.size(), source); !size.ok()) return size;
  absl::StatusOr<SeriesSpec> spec = ParseSeriesSpec(yaml, source);
  if (!spec.ok()) return spec.status();
  if (!spec->fleet.targets.has_value()) {
    // A spec an agent runs alone needs no targets; a submission does.
    absl::StatusOr<TargetSelector> none = ParseTargets(YAML::Node(), source);
    return none.ok() ? absl::InvalidArgumentError("field targets: missing") : none.status();
  }
  return ParsedSubmission{*std::move(spec)};
}

}  // namespace

// Baselines kept at once (Scheduler::State::baselines): a few hundred bytes each.
constexpr size_t kMaxCachedBaselines = 10000;

struct Scheduler::State {
  FleetStores stores;
  SchedulerOptions options;

  std::mutex mu;
  std::condition_variable changed;
  uint64_t version ABSL_GUARDED_BY(mu) = 1;
  std::map<std::string, std::shared_ptr<TaskSink>> sinks ABSL_GUARDED_BY(mu);  // by agent
  std::map<std::string, RegressionPolicy> task_policy ABSL_GUARDED_BY(mu);  // task id -> its series' policy
  // Task id -> (old attempt, when) of the last answer to an old attempt's update: an agent cut
  // off for a while sends a burst of them, answered once per lease. Guarded by mu.
  std::map<std::string, std::pair<uint32_t, absl::Time>> answered_old;

  // The baseline of each task's point (agent, task, mode, phase, matrix), read at the point's first
  // checked run and kept while the task runs: a task's runs follow its earlier tasks', so its
  // baseline does not change under it, and reading it again per run walked all of the task's own
  // runs of the point each time (10,000 runs of one point took the relay over three minutes).
  // Bounded: emptied past kMaxCachedBaselines.
  std::mutex baselines_mu;
  std::map<std::string, std::vector<BaselineRun>> baselines ABSL_GUARDED_BY(baselines_mu);

  std::mutex tick_mu;  // one Tick at a time
  std::optional<int64_t> last_counter ABSL_GUARDED_BY(tick_mu);
  bool recheck ABSL_GUARDED_BY(tick_mu) = false;

  absl::Time Now() { return options.clock->Now(); }

  void Bump() {
    {
      std::lock_guard<std::mutex> lock(mu);
      ++version;
    }
    changed.notify_all();
  }

  std::shared_ptr<TaskSink> SinkOf(const std::string& agent_id) {
    std::lock_guard<std::mutex> lock(mu);
    const auto it = sinks.find(agent_id);
    return it == sinks.end() ? nullptr : it->second;
  }

  // Takes and sends the PENDING tasks of those of `agent_ids` connected here. Returns false when
  // the database could not be read.
  bool Dispatch(const std::vector<std::string>& agent_ids) {
    std::vector<std::string> here;
    {
      std::lock_guard<std::mutex> lock(mu);
      for (const std::string& id : agent_ids) {
        if (sinks.count(id) > 0) here.push_back(id);
      }
    }
    if (here.empty()) return true;
    const absl::Time now = Now();
    absl::StatusOr<std::vector<ClaimedTask>> claimed =
        stores.tasks->ClaimPendingTasks(here, options.coordinator_id, now, now + options.lease);
    if (!claimed.ok()) {
      Log(absl::StrCat("scheduler: cannot take pending tasks: ", claimed.status().message()));
      return false;
    }
    for (const ClaimedTask& task : *claimed) {
      options.metrics->TaskKnown(task.agent_id, task.task);
      if (FailIfTooLarge(task)) continue;
      std::shared_ptr<TaskSink> sink = SinkOf(task.agent_id);
      if (sink != nullptr && sink->SendAssignment(AssignmentOf(task))) continue;
      // The stream went away between the claim and the send: the task waits for the agent again.
      absl::StatusOr<TaskRow> row = stores.tasks->GetTask(task.task_id);
      if (!row.ok()) continue;
      TaskRow back = *row;
      back.status.set_state(v1::TaskStatus::STATE_PENDING);
      back.lease_expiry.reset();
      back.coordinator_id.clear();
      absl::StatusOr<bool> written =
          stores.tasks->UpdateTask(back, v1::TaskStatus::STATE_RUNNING, task.attempt, Now());
      if (!written.ok()) Log(absl::StrCat("scheduler: task ", task.task_id, ": ", written.status().message()));
    }
    if (!claimed->empty()) Bump();
    return true;
  }

  // Sends again the RUNNING tasks of an agent that (re)connected here: one sent on a stream that
  // died may never have arrived. The agent runs a task id once and answers a repeat with its
  // latest update, so a task it has is not run twice.
  void Resend(const std::string& agent_id) {
    const absl::Time now = Now();
    absl::StatusOr<std::vector<ClaimedTask>> running =
        stores.tasks->TakeOverRunningTasks(agent_id, options.coordinator_id, now, now + options.lease);
    if (!running.ok()) {
      Log(absl::StrCat("scheduler: cannot take over the running tasks of agent ", agent_id, ": ",
                       running.status().message()));
      return;
    }
    std::shared_ptr<TaskSink> sink = SinkOf(agent_id);
    if (sink == nullptr) return;
    for (const ClaimedTask& task : *running) {
      options.metrics->TaskKnown(task.agent_id, task.task);
      if (FailIfTooLarge(task)) continue;
      sink->SendAssignment(AssignmentOf(task));
    }
  }

  // Ends FAILED (and returns true) a just-taken task whose spec is over kMaxSpecBytes: one stored
  // before the limit existed. Sent, it would exceed what the agent's stream receives and cut the
  // agent off (RESOURCE_EXHAUSTED, reconnect, the same message again).
  bool FailIfTooLarge(const ClaimedTask& task) {
    const absl::Status size = CheckSpecSize(task.spec_yaml.size(), absl::StrCat("series ", task.series_id));
    if (size.ok()) return false;
    absl::StatusOr<TaskRow> row = stores.tasks->GetTask(task.task_id);
    if (!row.ok()) return true;
    TaskRow failed = *row;
    failed.status.set_state(v1::TaskStatus::STATE_FAILED);
    failed.status.set_message(absl::StrCat("not sent to the agent: ", size.message()));
    failed.lease_expiry.reset();
    absl::StatusOr<bool> written = stores.tasks->UpdateTask(failed, row->status.state(), task.attempt, Now());
    Log(absl::StrCat("scheduler: task ", task.task_id, " of agent ", task.agent_id, " FAILED: ",
                     failed.status.message(), written.ok() ? "" : absl::StrCat(" (not written: ",
                                                                                written.status().message(), ")")));
    if (written.ok() && *written) {
      Bump();
      FinishSeries();
    }
    return true;
  }

  // Answers an update that changes nothing: one of an attempt that is not the task's current one
  // (`stale`: logged and counted), or one of a LOST task's last attempt. A running agent still
  // holding an old attempt gets the current assignment again, which it carries its work on under,
  // or a TaskCancel of its attempt when the task has ended: it stops as soon as it hears.
  void AnswerLostLease(const std::string& agent_id, const TaskRow& task, const v1::TaskUpdate& update, bool stale) {
    const v1::TaskStatus& ts = task.status;
    if (stale) {
      options.metrics->StaleTaskUpdate();
      Log(absl::StrCat("scheduler: agent ", agent_id, " sent ", UpdateKind(update), " of task ", ts.task_id(),
                       " attempt ", update.attempt(), ", but the task is at attempt ", ts.attempt(), " (",
                       StateText(ts.state()), "); ignored"));
    } else if (ts.state() != v1::TaskStatus::STATE_LOST) {
      return;  // cancelled, refused, ...: the agent was told or has ended it itself
    }
    const bool agent_runs_it = update.has_accepted() || update.has_progress();
    const uint32_t attempt = update.attempt() != 0 ? update.attempt() : ts.attempt();
    if (!agent_runs_it || attempt > ts.attempt()) return;
    std::shared_ptr<TaskSink> sink = SinkOf(agent_id);
    if (sink == nullptr) return;
    {
      const absl::Time now = Now();
      std::lock_guard<std::mutex> lock(mu);
      auto [it, added] = answered_old.try_emplace(ts.task_id(), attempt, now);
      if (!added) {
        if (it->second.first == attempt && now - it->second.second < options.lease) return;
        it->second = {attempt, now};
      }
      if (answered_old.size() > 100000) answered_old.clear();
    }
    if (!IsOpen(ts.state())) {
      v1::TaskCancel cancel;
      cancel.set_task_id(ts.task_id());
      cancel.set_attempt(attempt);
      cancel.set_reason(absl::StrCat("attempt ", attempt, " lost its lease; the task is ",
                                     StateText(ts.state()), " at attempt ", ts.attempt()));
      sink->SendCancel(cancel);
      return;
    }
    // PENDING: Dispatch sends the new attempt on this stream; RUNNING here: send it again now,
    // the one sent on the agent's old stream may never have arrived.
    if (ts.state() != v1::TaskStatus::STATE_RUNNING || task.coordinator_id != options.coordinator_id) return;
    absl::StatusOr<SeriesRow> series = stores.tasks->GetSeries(ts.series_id());
    if (!series.ok()) return;
    ClaimedTask current;
    current.task_id = ts.task_id();
    current.series_id = ts.series_id();
    current.agent_id = agent_id;
    current.attempt = ts.attempt();
    current.spec_yaml = series->spec_yaml;
    current.deadline = series->deadline;
    if (CheckSpecSize(current.spec_yaml.size(), "").ok()) sink->SendAssignment(AssignmentOf(current));
  }

  // Sends the TaskCancels of tasks cancelled (here or by another coordinator) whose agents are
  // connected here. Returns false when the database could not be read.
  bool SendCancels(const std::vector<std::string>& agent_ids) {
    if (agent_ids.empty()) return true;
    absl::StatusOr<std::vector<TaskRow>> cancels = stores.tasks->TakeCancels(agent_ids);
    if (!cancels.ok()) {
      Log(absl::StrCat("scheduler: cannot take task cancellations: ", cancels.status().message()));
      return false;
    }
    for (const TaskRow& t : *cancels) {
      std::shared_ptr<TaskSink> sink = SinkOf(t.status.agent_id());
      if (sink == nullptr) continue;
      v1::TaskCancel cancel;
      cancel.set_task_id(t.status.task_id());
      cancel.set_reason("the series was cancelled by an operator");
      sink->SendCancel(cancel);
    }
    return true;
  }

  std::vector<std::string> ConnectedAgents() {
    std::vector<std::string> connected;
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& [agent, sink] : sinks) connected.push_back(agent);
    return connected;
  }

  // Returns false when the database could not be written.
  bool FinishSeries() {
    absl::StatusOr<std::vector<std::string>> done = stores.tasks->FinishDoneSeries();
    if (!done.ok()) {
      Log(absl::StrCat("scheduler: cannot end finished series: ", done.status().message()));
      return false;
    }
    if (!done->empty()) Bump();
    return true;
  }

  absl::StatusOr<v1::SubmitSeriesResponse> Submit(const std::string& yaml, const std::string& source_name,
                                                  bool dry_run, const std::string& schedule_id,
                                                  std::optional<absl::Time> slot) {
    absl::StatusOr<ParsedSubmission> parsed = ParseSubmission(yaml, source_name);
    if (!parsed.ok()) return parsed.status();
    absl::StatusOr<std::vector<v1::Machine>> machines = stores.machines->ListMachines();
    if (!machines.ok()) return machines.status();
    v1::SubmitSeriesResponse response;
    std::vector<std::string> agents;
    for (const v1::Machine& m : *machines) {
      if (parsed->fields().targets->Matches(m.agent_id(), m.conditions())) agents.push_back(m.agent_id());
    }
    std::sort(agents.begin(), agents.end());
    if (agents.empty()) {
      return absl::FailedPreconditionError(absl::StrCat("no agent matches targets ",
                                                        parsed->fields().targets->Describe(), " (",
                                                        machines->size(), " agents known)"));
    }
    for (const std::string& a : agents) response.add_agent_ids(a);
    if (dry_run) return response;

    const absl::Time now = Now();
    SeriesRow row;
    row.name = parsed->spec.series;
    row.task = parsed->spec.task;
    row.backend = parsed->spec.backend;
    row.spec_yaml = yaml;
    row.source_name = source_name.empty() ? kDefaultSource : source_name;
    row.created = now;
    row.deadline = parsed->fields().DeadlineFor(now);
    row.retry_max = parsed->fields().retry_max;
    row.schedule_id = schedule_id;
    row.slot_time = slot;
    absl::StatusOr<std::string> id = stores.tasks->CreateSeries(row, agents);
    if (!id.ok()) return id.status();
    for (const std::string& agent : agents) options.metrics->TaskKnown(agent, row.task);
    response.set_series_id(*id);
    Bump();
    Dispatch(agents);
    return response;
  }

  absl::StatusOr<v1::SeriesStatus> Status(const SeriesRow& row) {
    v1::SeriesStatus s;
    s.set_series_id(row.id);
    s.set_name(row.name);
    s.set_task(row.task);
    s.set_backend(row.backend);
    s.set_state(row.state);
    SetTimestamp(row.created, s.mutable_create_time());
    if (row.deadline.has_value()) SetTimestamp(*row.deadline, s.mutable_deadline());
    s.set_schedule_id(row.schedule_id);
    absl::StatusOr<std::vector<TaskRow>> tasks = stores.tasks->ListTasks(row.id);
    if (!tasks.ok()) return tasks.status();
    absl::StatusOr<std::map<std::string, std::vector<v1::RegressionVerdict>>> verdicts =
        stores.annotations->ListVerdicts(row.id);
    if (!verdicts.ok()) return verdicts.status();
    bool all_succeeded = !tasks->empty();
    for (const TaskRow& t : *tasks) {
      v1::TaskStatus* ts = s.add_tasks();
      *ts = t.status;
      if (verdicts.ok()) {
        const auto it = verdicts->find(t.status.task_id());
        if (it != verdicts->end()) {
          for (const auto& v : it->second) *ts->add_regressions() = v;
        }
      }
      if (t.status.state() != v1::TaskStatus::STATE_SUCCEEDED) all_succeeded = false;
    }
    s.set_all_succeeded(all_succeeded);
    return s;
  }

  // Ends (or retries) the tasks whose lease expired and expires those past their deadline.
  // Returns false when a database operation failed.
  bool ReapDueTasks(absl::Time now) {
    absl::StatusOr<std::vector<DueTask>> due = stores.tasks->ListDueTasks(now);
    if (!due.ok()) {
      Log(absl::StrCat("scheduler: cannot list due tasks: ", due.status().message()));
      return false;
    }
    bool any = false;
    bool reached = true;
    for (const DueTask& d : *due) {
      TaskRow t = d.task;
      const v1::TaskStatus::State was = t.status.state();
      const uint32_t attempt = t.status.attempt();
      if (was == v1::TaskStatus::STATE_RUNNING) {
        const std::string expired = FormatUtcSeconds(t.lease_expiry.value_or(now));
        if (static_cast<int>(attempt) < d.retry_max) {
          t.status.set_state(v1::TaskStatus::STATE_PENDING);
          t.status.set_attempt(attempt + 1);
          t.status.set_message(absl::StrCat("attempt ", attempt, ": lease expired at ", expired,
                                            ": the agent stopped sending heartbeats; retrying"));
        } else {
          t.status.set_state(v1::TaskStatus::STATE_LOST);
          t.status.set_message(
              absl::StrCat("lease expired at ", expired, ": the agent stopped sending heartbeats"));
        }
        t.coordinator_id.clear();
      } else {
        t.status.set_state(v1::TaskStatus::STATE_EXPIRED);
        t.status.set_message(absl::StrCat("the series' deadline ", FormatUtcSeconds(d.deadline.value_or(now)),
                                          " passed before the agent got the task"));
      }
      t.lease_expiry.reset();
      absl::StatusOr<bool> written = stores.tasks->UpdateTask(t, was, attempt, now);
      if (!written.ok()) {
        reached = false;
        Log(absl::StrCat("scheduler: task ", t.status.task_id(), ": ", written.status().message()));
      } else if (*written) {
        any = true;
        Log(absl::StrCat("scheduler: task ", t.status.task_id(), " of agent ", t.status.agent_id(), " ",
                         v1::TaskStatus::State_Name(t.status.state()), ": ", t.status.message()));
      }
    }
    if (any) Bump();
    return reached;
  }

  // Returns false when a database operation failed.
  bool FireSchedules(absl::Time now) {
    absl::StatusOr<std::vector<ScheduleRow>> schedules = stores.schedules->ListSchedules();
    if (!schedules.ok()) {
      Log(absl::StrCat("scheduler: cannot list schedules: ", schedules.status().message()));
      return false;
    }
    bool reached = true;
    for (const ScheduleRow& s : *schedules) {
      absl::StatusOr<CronExpression> cron = CronExpression::Parse(s.cron);
      if (!cron.ok()) continue;  // refused by AddSchedule; cannot happen
      const absl::Time after = s.last_slot.has_value() ? std::max(*s.last_slot, s.created) : s.created;
      // Only the latest due slot fires: slots missed while every coordinator was down fire once.
      const std::optional<absl::Time> slot = cron->LatestIn(after, now);
      if (!slot.has_value()) continue;
      absl::StatusOr<bool> won = stores.schedules->ClaimSlot(s.id, *slot, options.coordinator_id, now);
      if (!won.ok()) {
        reached = false;
        Log(absl::StrCat("scheduler: schedule ", s.id, ": ", won.status().message()));
        continue;
      }
      if (!*won) continue;
      absl::StatusOr<v1::SubmitSeriesResponse> submitted =
          Submit(s.spec_yaml, s.source_name, /*dry_run=*/false, s.id, slot);
      Log(absl::StrCat("scheduler: schedule ", s.id, " (", s.cron, ") fired for slot ", FormatUtcSeconds(*slot), ": ",
                       submitted.ok() ? absl::StrCat("series ", submitted->series_id(), " to ",
                                                     submitted->agent_ids_size(), " agents")
                                      : std::string(submitted.status().message())));
    }
    return reached;
  }

  // Returns the regression policy of the task's series: its spec's `regression` keys, else the
  // options' defaults (also for a task or spec that cannot be read: the check still runs).
  RegressionPolicy PolicyOfTask(const std::string& task_id) {
    {
      std::lock_guard<std::mutex> lock(mu);
      const auto it = task_policy.find(task_id);
      if (it != task_policy.end()) return it->second;
    }
    RegressionPolicy policy;
    policy.baseline_runs = options.baseline_runs;
    policy.threshold = options.regression_threshold;
    absl::StatusOr<TaskRow> task = stores.tasks->GetTask(task_id);
    if (!task.ok()) return policy;
    absl::StatusOr<SeriesRow> series = stores.tasks->GetSeries(task->status.series_id());
    if (!series.ok()) return policy;
    absl::StatusOr<ParsedSubmission> parsed = ParseSubmission(series->spec_yaml, series->source_name);
    if (parsed.ok()) {
      policy.baseline_runs = parsed->fields().baseline_runs.value_or(policy.baseline_runs);
      policy.threshold = parsed->fields().regression_threshold.value_or(policy.threshold);
    }
    std::lock_guard<std::mutex> lock(mu);
    if (task_policy.size() > 100000) task_policy.clear();
    task_policy[task_id] = policy;
    return policy;
  }

  // The point's baseline for `record`'s task (Baseline, cached in `baselines`).
  absl::StatusOr<std::vector<BaselineRun>> BaselineOf(const v1::RunRecord& record, int limit) {
    const std::map<std::string, std::string> matrix(record.matrix().begin(), record.matrix().end());
    std::string key = absl::StrCat(record.task_id(), "\n", record.agent_id(), "\n", record.task(), "\n",
                                   record.mode(), "\n", record.phase(), "\n", limit);
    for (const auto& [k, v] : matrix) absl::StrAppend(&key, "\n", k, "=", v);
    std::lock_guard<std::mutex> lock(baselines_mu);
    if (auto it = baselines.find(key); it != baselines.end()) return it->second;
    absl::StatusOr<std::vector<BaselineRun>> read = stores.annotations->Baseline(record, limit);
    if (!read.ok()) return read;
    if (baselines.size() >= kMaxCachedBaselines) baselines.clear();
    baselines.emplace(std::move(key), *read);
    return read;
  }

  void CheckRegressionOf(const v1::RunRecord& record) {
    const RegressionPolicy policy = PolicyOfTask(record.task_id());
    absl::StatusOr<std::vector<BaselineRun>> baseline = BaselineOf(record, policy.baseline_runs);
    if (!baseline.ok()) {
      Log(absl::StrCat("scheduler: baseline of run ", record.run_id(), ": ", baseline.status().message()));
      return;
    }
    absl::StatusOr<std::vector<BaselineRun>> sample = stores.annotations->Sample(record, kMaxSampleRuns);
    if (!sample.ok()) {
      Log(absl::StrCat("scheduler: sample of run ", record.run_id(), ": ", sample.status().message()));
      return;
    }
    std::map<std::string, v1::MachineConditions> conditions;
    if (!baseline->empty() && baseline->front().conditions_fingerprint != record.conditions_fingerprint()) {
      absl::StatusOr<std::vector<v1::MachineConditions>> found =
          stores.machines->GetConditions({baseline->front().conditions_fingerprint, record.conditions_fingerprint()});
      if (found.ok()) {
        for (const auto& c : *found) conditions[c.fingerprint()] = c;
      }
    }
    std::optional<v1::RegressionVerdict> verdict = CheckRegression(record, *sample, *baseline, policy, conditions);
    if (!verdict.has_value()) return;
    const std::string reason = RegressionReason(*verdict);
    absl::Status stored = stores.annotations->StoreVerdict(record.task_id(), *verdict, reason, Now());
    if (!stored.ok()) {
      Log(absl::StrCat("scheduler: verdict of run ", record.run_id(), ": ", stored.message()));
      return;
    }
    options.metrics->RegressionChecked(record.agent_id(), record.task(),
                                       absl::AsciiStrToLower(KindName(verdict->kind())));
    if (verdict->regression()) {
      Log(absl::StrCat("scheduler: REGRESSION run ", record.run_id(), " of agent ", record.agent_id(), ": ",
                       reason));
    }
    Bump();
  }
};

Scheduler::Scheduler(FleetStores stores, SchedulerOptions options) : state_(std::make_unique<State>()) {
  state_->stores = stores;
  state_->options = std::move(options);
  if (state_->options.clock == nullptr) state_->options.clock = &SystemClock();
  if (state_->options.metrics == nullptr) {
    static NullMetrics* const null_metrics = new NullMetrics();
    state_->options.metrics = null_metrics;
  }
}

Scheduler::~Scheduler() = default;

absl::StatusOr<v1::SubmitSeriesResponse> Scheduler::Submit(const v1::SubmitSeriesRequest& request) {
  return state_->Submit(request.spec_yaml(), request.source_name(), request.dry_run(), "", std::nullopt);
}

absl::StatusOr<v1::SeriesStatus> Scheduler::Cancel(const std::string& series_id) {
  absl::StatusOr<std::vector<TaskRow>> running =
      state_->stores.tasks->CancelSeries(series_id, "cancelled by an operator", state_->Now());
  if (!running.ok()) return running.status();
  // Agents connected to other coordinators are told by those, on their next Tick (or NOTIFY).
  std::vector<std::string> agents;
  for (const TaskRow& t : *running) agents.push_back(t.status.agent_id());
  std::vector<std::string> here;
  for (const std::string& a : agents) {
    if (state_->SinkOf(a) != nullptr) here.push_back(a);
  }
  state_->SendCancels(here);
  state_->Bump();
  return GetSeries(series_id);
}

absl::StatusOr<std::vector<v1::SeriesStatus>> Scheduler::ListSeries(bool active_only) {
  absl::StatusOr<std::vector<SeriesRow>> rows = state_->stores.tasks->ListSeries(active_only);
  if (!rows.ok()) return rows.status();
  std::vector<v1::SeriesStatus> out;
  for (const SeriesRow& row : *rows) {
    absl::StatusOr<v1::SeriesStatus> s = state_->Status(row);
    if (!s.ok()) return s.status();
    out.push_back(*std::move(s));
  }
  return out;
}

absl::StatusOr<v1::SeriesStatus> Scheduler::GetSeries(const std::string& series_id) {
  absl::StatusOr<SeriesRow> row = state_->stores.tasks->GetSeries(series_id);
  if (!row.ok()) return row.status();
  return state_->Status(*row);
}

uint64_t Scheduler::WaitForChange(uint64_t version, absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(state_->mu);
  // Real time on purpose: this bounds how long an RPC thread waits, it decides nothing.
  // An infinite (or huge) timeout would overflow std::chrono: a day is as good as forever here.
  timeout = std::clamp(timeout, absl::ZeroDuration(), absl::Hours(24));
  state_->changed.wait_for(lock, absl::ToChronoMilliseconds(timeout),
                           [&] { return state_->version != version; });
  return state_->version;
}

absl::StatusOr<v1::Schedule> Scheduler::AddSchedule(const v1::AddScheduleRequest& request) {
  absl::StatusOr<CronExpression> cron = CronExpression::Parse(request.cron());
  if (!cron.ok()) return cron.status();
  absl::StatusOr<ParsedSubmission> parsed = ParseSubmission(request.spec_yaml(), request.source_name());
  if (!parsed.ok()) return parsed.status();
  const absl::Time now = state_->Now();
  ScheduleRow row;
  row.cron = cron->text();
  row.spec_yaml = request.spec_yaml();
  row.source_name = request.source_name().empty() ? kDefaultSource : request.source_name();
  row.series_name = parsed->spec.series;
  row.task = parsed->spec.task;
  row.created = now;
  absl::StatusOr<std::string> id = state_->stores.schedules->AddSchedule(row);
  if (!id.ok()) return id.status();
  v1::Schedule s;
  s.set_schedule_id(*id);
  s.set_cron(row.cron);
  s.set_series_name(row.series_name);
  s.set_task(row.task);
  SetTimestamp(now, s.mutable_create_time());
  if (auto next = cron->NextAfter(now)) SetTimestamp(*next, s.mutable_next_fire_time());
  return s;
}

absl::StatusOr<std::vector<v1::Schedule>> Scheduler::ListSchedules() {
  absl::StatusOr<std::vector<ScheduleRow>> rows = state_->stores.schedules->ListSchedules();
  if (!rows.ok()) return rows.status();
  const absl::Time now = state_->Now();
  std::vector<v1::Schedule> out;
  for (const ScheduleRow& row : *rows) {
    v1::Schedule s;
    s.set_schedule_id(row.id);
    s.set_cron(row.cron);
    s.set_series_name(row.series_name);
    s.set_task(row.task);
    SetTimestamp(row.created, s.mutable_create_time());
    if (absl::StatusOr<CronExpression> cron = CronExpression::Parse(row.cron); cron.ok()) {
      if (auto next = cron->NextAfter(std::max(now, row.created))) SetTimestamp(*next, s.mutable_next_fire_time());
    }
    if (row.last_slot.has_value()) SetTimestamp(*row.last_slot, s.mutable_last_fire_time());
    s.set_last_series_id(row.last_series_id);
    out.push_back(std::move(s));
  }
  return out;
}

absl::Status Scheduler::RemoveSchedule(const std::string& schedule_id) {
  return state_->stores.schedules->RemoveSchedule(schedule_id, state_->Now());
}

absl::StatusOr<std::vector<std::string>> Scheduler::InvalidateRuns(const v1::InvalidateRunsRequest& request) {
  if (request.reason().empty()) {
    return absl::InvalidArgumentError("reason is required: say why the runs are invalid");
  }
  if (request.run_ids().empty() && request.series_id().empty()) {
    return absl::InvalidArgumentError("name runs (run ids) or a series (series_id)");
  }
  std::set<std::string> ids(request.run_ids().begin(), request.run_ids().end());
  if (!request.series_id().empty()) {
    absl::StatusOr<std::vector<std::string>> runs =
        state_->stores.annotations->RunsOfSeries(request.series_id());
    if (!runs.ok()) return runs.status();
    if (runs->empty()) {
      absl::StatusOr<SeriesRow> series = state_->stores.tasks->GetSeries(request.series_id());
      if (!series.ok()) return series.status();  // NOT_FOUND: neither a series nor runs of one
    }
    ids.insert(runs->begin(), runs->end());
  }
  std::vector<std::string> sorted(ids.begin(), ids.end());
  if (sorted.empty()) return sorted;
  absl::Status status =
      state_->stores.annotations->AnnotateRuns(sorted, "INVALIDATED", request.reason(), state_->Now());
  if (!status.ok()) return status;
  state_->Bump();
  return sorted;
}

void Scheduler::AgentConnected(const std::string& agent_id, std::shared_ptr<TaskSink> sink) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->sinks[agent_id] = std::move(sink);
  }
  state_->SendCancels({agent_id});
  state_->Resend(agent_id);
  state_->Dispatch({agent_id});
}

void Scheduler::AgentDisconnected(const std::string& agent_id, const TaskSink* sink) {
  std::lock_guard<std::mutex> lock(state_->mu);
  const auto it = state_->sinks.find(agent_id);
  // A newer stream of the same agent may have replaced this one already.
  if (it != state_->sinks.end() && it->second.get() == sink) state_->sinks.erase(it);
}

void Scheduler::Heartbeat(const std::string& agent_id) {
  absl::Status status = state_->stores.tasks->RenewLeases(agent_id, state_->Now() + state_->options.lease);
  if (!status.ok()) Log(absl::StrCat("scheduler: heartbeat of agent ", agent_id, ": ", status.message()));
}

void Scheduler::TaskUpdated(const std::string& agent_id, const v1::TaskUpdate& update) {
  State& s = *state_;
  absl::StatusOr<TaskRow> row = s.stores.tasks->GetTask(update.task_id());
  if (!row.ok()) {
    Log(absl::StrCat("scheduler: agent ", agent_id, " sent an update for task ", update.task_id(), ": ",
                     row.status().message(), "; ignored"));
    return;
  }
  if (row->status.agent_id() != agent_id) {
    Log(absl::StrCat("scheduler: agent ", agent_id, " sent an update for task ", update.task_id(),
                     " of agent ", row->status.agent_id(), "; ignored"));
    return;
  }
  TaskRow t = *row;
  const v1::TaskStatus::State was = t.status.state();
  // The attempt is the lease: only the current attempt's word counts (0: an agent that predates
  // TaskUpdate.attempt, taken as the current one).
  const bool stale = update.attempt() != 0 && update.attempt() != t.status.attempt();
  // Ended already (cancelled, lost, ...): the agent's late word changes nothing.
  if (stale || !IsOpen(was)) {
    s.AnswerLostLease(agent_id, t, update, stale);
    return;
  }
  const absl::Time now = s.Now();
  v1::TaskStatus& ts = t.status;
  switch (update.body_case()) {
    case v1::TaskUpdate::kAccepted:
      ts.set_state(v1::TaskStatus::STATE_RUNNING);
      ts.set_runs_total(update.accepted().runs_total());
      ts.clear_message();
      t.lease_expiry = now + s.options.lease;
      break;
    case v1::TaskUpdate::kRefused:
      ts.set_state(v1::TaskStatus::STATE_REFUSED);
      ts.set_message(update.refused().reason());
      t.lease_expiry.reset();
      break;
    case v1::TaskUpdate::kProgress: {
      const v1::TaskProgress& p = update.progress();
      ts.set_state(v1::TaskStatus::STATE_RUNNING);
      ts.set_runs_done(p.runs_done());
      if (p.runs_total() > 0) ts.set_runs_total(p.runs_total());
      ts.set_runs_failed(p.runs_failed());
      ts.set_phase(p.phase());
      ts.set_call_index(p.call_index());
      ts.set_last_figure(p.last_figure());
      t.lease_expiry = now + s.options.lease;
      break;
    }
    case v1::TaskUpdate::kFinished: {
      const v1::TaskFinished& f = update.finished();
      ts.set_state(f.cancelled() ? v1::TaskStatus::STATE_CANCELLED
                   : f.ok()      ? v1::TaskStatus::STATE_SUCCEEDED
                                 : v1::TaskStatus::STATE_FAILED);
      ts.set_message(f.message());
      ts.set_runs_done(f.runs_done());
      ts.set_runs_failed(f.runs_failed());
      t.lease_expiry.reset();
      break;
    }
    case v1::TaskUpdate::BODY_NOT_SET:
      return;
  }
  if (ts.state() == v1::TaskStatus::STATE_RUNNING && t.coordinator_id.empty()) {
    t.coordinator_id = s.options.coordinator_id;
  }
  absl::StatusOr<bool> written = s.stores.tasks->UpdateTask(t, was, ts.attempt(), now);
  if (!written.ok()) {
    Log(absl::StrCat("scheduler: task ", ts.task_id(), ": ", written.status().message()));
    return;
  }
  if (!*written) return;  // changed meanwhile (cancelled, reaped): that state stands
  s.Bump();
  if (!IsOpen(ts.state())) s.FinishSeries();
}

void Scheduler::RunsStored(const std::vector<v1::RunRecord>& records) {
  State& s = *state_;
  std::map<std::string, std::map<std::string, int>> counts;
  for (const v1::RunRecord& r : records) {
    if (r.task_id().empty()) continue;
    std::set<std::string> codes;
    for (const auto& f : r.flags()) codes.insert(f.code());
    for (const std::string& code : codes) ++counts[r.task_id()][code];
  }
  absl::Status counted = s.stores.tasks->AddFlagCounts(counts);
  if (!counted.ok()) Log(absl::StrCat("scheduler: counting flags: ", counted.message()));
  else if (!counts.empty()) s.Bump();

  for (const v1::RunRecord& r : records) {
    if (IsUuid(r.task_id()) && IsAcceptedRun(r)) s.CheckRegressionOf(r);
  }
}

void Scheduler::Tick() {
  State& s = *state_;
  std::lock_guard<std::mutex> tick(s.tick_mu);
  // Changes made by other coordinators (or committed after our last look) wake the watchers. A
  // counter read before a change commits would hide it, so a change is followed by one more bump.
  absl::StatusOr<int64_t> counter = s.stores.tasks->ChangeCounter();
  if (counter.ok()) {
    const bool moved = s.last_counter.has_value() && *s.last_counter != *counter;
    if (moved || s.recheck) s.Bump();
    s.recheck = moved;
    s.last_counter = *counter;
  }
  const absl::Time now = s.Now();
  // Every step runs even when an earlier one failed (each is retried on the next tick anyway); a
  // tick with any failure counts once.
  const bool reaped = s.ReapDueTasks(now);
  const bool fired = s.FireSchedules(now);
  const std::vector<std::string> connected = s.ConnectedAgents();
  const bool cancels_sent = s.SendCancels(connected);
  const bool dispatched = s.Dispatch(connected);
  const bool finished = s.FinishSeries();
  if (!(counter.ok() && reaped && fired && cancels_sent && dispatched && finished)) {
    s.options.metrics->DatabaseError("scheduler_tick");
  }
}

}  // namespace benchfleet::coordinator
