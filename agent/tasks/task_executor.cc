#include "agent/tasks/task_executor.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <stop_token>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/runner/figures.h"
#include "common/figures.h"
#include "agent/runner/series_runner.h"
#include "agent/tasks/record_tap_env.h"
#include "common/proto_time.h"
#include "common/record_validation.h"
#include "common/series_folder.h"
#include "common/spec/series_spec.h"
#include "common/spec/spec_limits.h"
#include "common/string_views.h"

namespace benchfleet::agent {
namespace {

// A figure of a FAILED run is its message, cut to this many bytes (a log tail is no figure).
constexpr size_t kMaxFigureBytes = 200;


// "VALIDATION", "COLD", "WARM": the form of TaskProgress.phase.
std::string ProgressPhase(v1::Phase phase) {
  std::string name = v1::Phase_Name(phase);
  constexpr std::string_view kPrefix = "PHASE_";
  if (name.rfind(kPrefix, 0) == 0) name.erase(0, kPrefix.size());
  return name;
}

// Cuts text to at most max bytes on a UTF-8 character boundary.
std::string Cut(std::string text, size_t max) {
  if (text.size() <= max) return text;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return absl::StrCat(text, "...");
}

// Returns the figure of one run as people read it: its main figure ("generation tokens/s 52.9
// tokens/s"), with the flags the run carries, or "FAILED: why".
std::string LastFigure(const v1::RunRecord& record) {
  if (record.status().code() != v1::RunStatus::CODE_OK) {
    return Cut(absl::StrCat("FAILED: ", record.status().message()), kMaxFigureBytes);
  }
  std::string figure = "OK";
  if (const v1::Metric* main = MainFigure(record); main != nullptr) {
    figure = absl::StrCat(FigureLabel(*main), " ", HumanFigure(main->value(), main->unit()));
  }
  for (const v1::Flag& flag : record.flags()) absl::StrAppend(&figure, " ", flag.code());
  if (record.simulated()) absl::StrAppend(&figure, " SIMULATED");
  return figure;
}

v1::TaskUpdate Refused(const std::string& task_id, std::string_view reason, uint32_t attempt = 0) {
  v1::TaskUpdate update;
  update.set_task_id(task_id);
  update.set_attempt(attempt);
  update.mutable_refused()->set_reason(std::string(reason));
  return update;
}

}  // namespace

struct TaskExecutor::Task {
  enum class State { kQueued, kRunning, kEnded };
  v1::TaskAssignment assignment;  // not modified while running (its attempt names the series folder)
  State state = State::kQueued;
  // The attempt every update is stamped with: the assignment's, or a later one that took the task
  // over (the coordinator retried it after its lease expired; the work goes on under the new
  // number). Guarded by mu_.
  uint32_t attempt = 0;
  absl::Time arrived;  // by the Env's clock
  // Requested by a cancel or the agent's stop: the runner and the backend see it at once, in the
  // pause between runs and in every wait of the backend (a server coming up, a cooldown).
  std::stop_source stop;
  bool cancelled ABSL_GUARDED_BY(mu_) = false;  // the stop came from a TaskCancel
  std::string cancel_reason ABSL_GUARDED_BY(mu_);
  v1::TaskUpdate latest ABSL_GUARDED_BY(mu_);  // the last accepted/progress sent while running
  v1::TaskUpdate outcome ABSL_GUARDED_BY(mu_);  // refused or finished, once ended
};

TaskExecutor::TaskExecutor(TaskExecutorOptions options) : options_(std::move(options)) {}

TaskExecutor::~TaskExecutor() { Stop(); }

absl::Status TaskExecutor::Start() {
  if (options_.env == nullptr || options_.allow == nullptr || !options_.find_backend || !options_.send_update) {
    return absl::InvalidArgumentError("task executor: env, allow-list, find_backend and send_update are required");
  }
  if (options_.agent_id.empty()) return absl::InvalidArgumentError("task executor: no agent id");
  if (options_.tasks_dir.empty()) return absl::InvalidArgumentError("task executor: no tasks folder");
  std::lock_guard<std::mutex> l(mu_);
  if (started_) return absl::FailedPreconditionError("task executor: already started");
  started_ = true;
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

void TaskExecutor::RequestStop() {
  std::lock_guard<std::mutex> l(mu_);
  if (!started_ || stopping_) {
    stopping_ = true;
  } else {
    stopping_ = true;
    for (auto& [id, task] : tasks_) {
      if (task->state == Task::State::kRunning) task->stop.request_stop();
    }
  }
  cv_.notify_all();
}

void TaskExecutor::Stop() {
  RequestStop();
  std::lock_guard<std::mutex> j(join_mu_);  // Stop() may be called from two threads at once
  if (thread_.joinable()) thread_.join();
}

void TaskExecutor::Log(std::string_view line) {
  if (options_.log) options_.log(line);
}

void TaskExecutor::Send(const v1::TaskUpdate& update) { options_.send_update(update); }

std::string TaskExecutor::TaskDir(const v1::TaskAssignment& assignment) const {
  return JoinPath(JoinPath(options_.tasks_dir, assignment.task_id()), absl::StrCat("attempt-", assignment.attempt()));
}

void TaskExecutor::KeepOutcome(const v1::TaskAssignment& assignment, const v1::TaskUpdate& outcome) {
  // Under the attempt it answers, which is the assignment's unless a later attempt took it over.
  v1::TaskAssignment answered = assignment;
  if (outcome.attempt() != 0) answered.set_attempt(outcome.attempt());
  const std::string dir = TaskDir(answered);
  absl::Status s = options_.env->CreateDirs(dir);
  if (s.ok()) s = options_.env->WriteFileAtomically(JoinPath(dir, kTaskOutcomeFile), outcome.SerializeAsString());
  if (!s.ok()) {
    Log(absl::StrCat("task ", assignment.task_id(), ": could not keep its outcome (", s.message(),
                     "); a re-send after a restart would run it again"));
  }
}

void TaskExecutor::Assign(const v1::TaskAssignment& assignment) {
  const std::string& id = assignment.task_id();
  // Task ids become folder names: a coordinator must not steer them out of tasks_dir.
  if (id.empty() || id.size() > 128 || id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
                                           std::string::npos || id[0] == '.') {
    const v1::TaskUpdate refused = Refused(
        id, absl::StrCat("task id '", Cut(id, 128), "' is not 1 to 128 letters, digits, '.', '_' or '-' (not starting with '.')"),
        assignment.attempt());
    Log(absl::StrCat("task refused: ", refused.refused().reason()));
    if (!id.empty()) Send(refused);
    return;
  }
  // An outcome kept by an earlier process of this agent (read before taking the lock: it is a file).
  std::optional<v1::TaskUpdate> kept;
  if (auto text = options_.env->ReadFile(JoinPath(TaskDir(assignment), kTaskOutcomeFile)); text.ok()) {
    v1::TaskUpdate update;
    if (update.ParseFromString(*text) && update.task_id() == id) kept = std::move(update);
  }
  std::optional<v1::TaskUpdate> resend;
  std::optional<v1::TaskUpdate> keep;  // an outcome answering a new attempt, kept once the lock is released
  std::string note;  // logged once the lock is released
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) return;
    auto it = tasks_.find(id);
    Task* known = it == tasks_.end() ? nullptr : it->second.get();
    const uint32_t offered = assignment.attempt();
    if (known != nullptr && offered < known->attempt) {
      // A late message from an old stream: the task has moved on to a later attempt here.
      note = absl::StrCat("task ", id, ": attempt ", offered, " ignored, this agent holds attempt ", known->attempt);
    } else if (known != nullptr && offered > known->attempt) {
      // The coordinator retried the task (the lease of the attempt held here expired while this
      // agent was cut off). It is the same work: it goes on, or stands, under the new attempt, and
      // no run is made twice.
      const uint32_t held = known->attempt;
      known->attempt = offered;
      switch (known->state) {
        case Task::State::kQueued:
          known->assignment = assignment;
          note = absl::StrCat("task ", id, ": attempt ", offered, " replaces queued attempt ", held);
          break;
        case Task::State::kRunning:
          note = absl::StrCat("task ", id, ": attempt ", offered, " takes over running attempt ", held,
                              " (its lease expired): it goes on, its runs so far are kept");
          if (known->latest.body_case() != v1::TaskUpdate::BODY_NOT_SET) {
            known->latest.set_attempt(offered);
            resend = known->latest;
          }
          break;
        case Task::State::kEnded:
          note = absl::StrCat("task ", id, ": attempt ", offered, " of a task whose attempt ", held,
                              " has ended here: answered with its outcome, nothing runs again");
          known->outcome.set_attempt(offered);
          resend = known->outcome;
          keep = known->outcome;
          break;
      }
    } else if (known != nullptr) {
      switch (known->state) {
        case Task::State::kQueued:
          note = absl::StrCat("task ", id, " sent again: it is queued already");
          break;
        case Task::State::kRunning:
          note = absl::StrCat("task ", id, " sent again: it is running, its progress is sent again");
          if (known->latest.body_case() != v1::TaskUpdate::BODY_NOT_SET) resend = known->latest;
          break;
        case Task::State::kEnded:
          note = absl::StrCat("task ", id, " sent again: it has ended, its last update is sent again");
          resend = known->outcome;
          break;
      }
    } else {
      auto task = std::make_unique<Task>();
      task->assignment = assignment;
      task->attempt = offered;
      task->arrived = options_.env->clock().Now();
      if (kept.has_value()) {
        note = absl::StrCat("task ", id, " sent again after a restart of this agent: its last update is sent again");
        if (kept->attempt() == 0) kept->set_attempt(offered);  // kept by an agent before TaskUpdate.attempt
        task->state = Task::State::kEnded;
        task->outcome = *kept;
        resend = std::move(kept);
      } else {
        const size_t ahead = queue_.size() + (busy_ ? 1 : 0);
        queue_.push_back(task.get());
        note = absl::StrCat("task ", id, " (series ", assignment.series_id(), ", attempt ", assignment.attempt(),
                            ") queued", ahead > 0 ? absl::StrCat(" behind ", ahead, " task(s)") : "");
      }
      tasks_[id] = std::move(task);
      cv_.notify_all();
    }
  }
  if (!note.empty()) Log(note);
  if (keep.has_value()) KeepOutcome(assignment, *keep);
  if (resend.has_value()) Send(*resend);
}

void TaskExecutor::Cancel(const v1::TaskCancel& cancel) {
  const std::string& id = cancel.task_id();
  std::optional<v1::TaskUpdate> answer;
  std::optional<v1::TaskAssignment> ended_now;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = tasks_.find(id);
    if (it == tasks_.end()) {
      v1::TaskUpdate update;
      update.set_task_id(id);
      v1::TaskFinished* finished = update.mutable_finished();
      finished->set_ok(true);
      finished->set_cancelled(true);
      finished->set_message(absl::StrCat("cancelled: task ", id, " is not known to this agent; nothing ran"));
      update.set_attempt(cancel.attempt());
      answer = std::move(update);
    } else if (cancel.attempt() != 0 && cancel.attempt() < it->second->attempt) {
      // The cancel of an attempt that a later one took over here: the later one goes on.
      Log(absl::StrCat("task ", id, ": cancel of attempt ", cancel.attempt(), " ignored, this agent holds attempt ",
                       it->second->attempt));
      return;
    } else {
      Task* task = it->second.get();
      switch (task->state) {
        case Task::State::kQueued: {
          std::erase(queue_, task);
          v1::TaskUpdate update;
          update.set_task_id(id);
          v1::TaskFinished* finished = update.mutable_finished();
          finished->set_ok(true);
          finished->set_cancelled(true);
          finished->set_message(absl::StrCat("cancelled before it started", cancel.reason().empty() ? "" : ": ",
                                             cancel.reason()));
          update.set_attempt(task->attempt);
          task->state = Task::State::kEnded;
          task->outcome = update;
          answer = std::move(update);
          ended_now = task->assignment;
          task->assignment.clear_spec_yaml();
          cv_.notify_all();
          break;
        }
        case Task::State::kRunning:
          task->cancelled = true;
          task->cancel_reason = cancel.reason();
          task->stop.request_stop();
          break;
        case Task::State::kEnded:
          answer = task->outcome;
          break;
      }
    }
  }
  Log(absl::StrCat("task ", id, ": cancel received", cancel.reason().empty() ? "" : " (", cancel.reason(),
                   cancel.reason().empty() ? "" : ")"));
  if (ended_now.has_value()) KeepOutcome(*ended_now, *answer);
  if (answer.has_value()) Send(*answer);
}

bool TaskExecutor::WaitUntilIdle(absl::Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
  std::unique_lock<std::mutex> l(mu_);
  return cv_.wait_until(l, deadline, [&] { return queue_.empty() && !busy_; });
}

void TaskExecutor::Loop() {
  while (true) {
    Task* task = nullptr;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) break;
      task = queue_.front();
      queue_.pop_front();
      task->state = Task::State::kRunning;
      busy_ = true;
    }
    v1::TaskUpdate outcome = RunTask(task);
    {
      // A later attempt may have taken the task over while it ran: the outcome answers that one.
      std::lock_guard<std::mutex> l(mu_);
      outcome.set_attempt(task->attempt);
    }
    KeepOutcome(task->assignment, outcome);
    bool keep_again = false;
    v1::TaskAssignment ended;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (outcome.attempt() != task->attempt) {  // taken over between the two locks: it is still that outcome
        outcome.set_attempt(task->attempt);
        keep_again = true;
      }
      task->state = Task::State::kEnded;
      task->outcome = outcome;
      task->latest.Clear();
      // Only its id and attempt matter from now on; the spec is in its series folder.
      task->assignment.clear_spec_yaml();
      ended = task->assignment;
      busy_ = false;
      cv_.notify_all();
    }
    if (keep_again) KeepOutcome(ended, outcome);
    Send(outcome);
  }
  std::lock_guard<std::mutex> l(mu_);
  busy_ = false;
  cv_.notify_all();
}

v1::TaskUpdate TaskExecutor::RunTask(Task* task) {
  const v1::TaskAssignment& assignment = task->assignment;
  const std::string& id = assignment.task_id();
  Env* env = options_.env;
  auto refuse = [&](absl::string_view reason) {
    Log(absl::StrCat("task ", id, " refused: ", reason));
    return Refused(id, ToStd(reason));
  };
  auto fail = [&](absl::string_view message) {
    Log(absl::StrCat("task ", id, " failed: ", message));
    v1::TaskUpdate update;
    update.set_task_id(id);
    update.mutable_finished()->set_ok(false);
    update.mutable_finished()->set_message(std::string(message));
    return update;
  };

  // 1. The deadline is the time by which the agent must have received the task (the coordinator
  // expires it otherwise): one that arrived late is not run; one that arrived in time and waited
  // here behind another task is.
  if (assignment.has_deadline()) {
    const absl::Time deadline = ToTime(assignment.deadline());
    if (task->arrived > deadline) {
      return refuse(absl::StrCat("the task's deadline ", FormatUtcSeconds(deadline), " had passed when it arrived (at ",
                                 FormatUtcSeconds(task->arrived), ")"));
    }
  }

  // 2. The spec, as `benchfleet-agent run` would read it. One this agent cannot take (over the
  // size limit, which a coordinator of this version never sends, or unreadable) ends FAILED
  // with the reason; the stream goes on.
  const std::string source = absl::StrCat("task ", id);
  if (absl::Status s = CheckSpecSize(assignment.spec_yaml().size(), source); !s.ok()) return fail(s.message());
  absl::StatusOr<SeriesSpec> spec = ParseSeriesSpec(assignment.spec_yaml(), source);
  if (!spec.ok()) return fail(spec.status().message());

  // 3. The agent's own say: the backend, then the backend's section (binary, model, URL...).
  if (absl::Status s = options_.allow->CheckBackend(spec->backend); !s.ok()) {
    return refuse(options_.allow->WithAllowed(s).message());
  }
  absl::StatusOr<BackendFactory> factory = options_.find_backend(spec->backend);
  if (!factory.ok()) return refuse(absl::StrCat(source, ": ", factory.status().message()));

  const std::string dir = TaskDir(assignment);
  const std::string out_dir = JoinPath(dir, "series");
  if (env->FileExists(JoinPath(out_dir, kRunsJsonlFile))) {
    // This process never ran it (its outcome would be known), so an earlier one did and stopped
    // before its end: say so rather than mix two runs of the series in one folder.
    return fail(absl::StrCat("this agent was stopped while running the task (series folder ", out_dir,
                             " holds its runs so far, sent as usual); send a new attempt to run it again"));
  }
  if (absl::Status s = env->CreateDirs(out_dir); !s.ok()) {
    return fail(absl::StrCat("series folder ", out_dir, ": ", s.message()));
  }

  // Progress after every run, from the records as the runner writes them to the folder.
  uint32_t runs_total = 0;
  uint32_t runs_done = 0;
  uint32_t runs_failed = 0;
  uint32_t warm_not_needed = 0;  // runs.warm.until: warm calls a stable combination did not need
  auto on_record = [&](const v1::RunRecord& record) {
    ++runs_done;
    if (record.status().code() != v1::RunStatus::CODE_OK) ++runs_failed;
    // runs_total counted runs.warm.until.max warm calls: it falls by the calls not needed.
    if (const v1::WarmStop& stop = record.warm_stop();
        stop.reason() == v1::WarmStop::REASON_STABLE && stop.max_calls() > record.call_index()) {
      const uint32_t left = runs_total - std::min(runs_total, runs_done);
      const uint32_t saved = std::min(stop.max_calls() - record.call_index(), left);
      runs_total -= saved;
      warm_not_needed += saved;
    }
    v1::TaskUpdate update;
    update.set_task_id(id);
    v1::TaskProgress* progress = update.mutable_progress();
    progress->set_runs_done(runs_done);
    progress->set_runs_total(std::max(runs_total, runs_done));
    progress->set_runs_failed(runs_failed);
    progress->set_phase(ProgressPhase(record.phase()));
    progress->set_call_index(record.call_index());
    progress->set_last_figure(LastFigure(record));
    progress->set_last_run_id(record.run_id());
    {
      std::lock_guard<std::mutex> l(mu_);
      update.set_attempt(task->attempt);
      task->latest = update;
    }
    Send(update);
  };
  RecordTapEnv tap(env, JoinPath(out_dir, kRunsJsonlFile), on_record);

  BackendContext context;
  context.env = &tap;
  context.allow = options_.allow;
  context.spec_author = SpecAuthor::kCoordinator;
  context.services = options_.services;
  context.work_dir = out_dir;
  context.labels = {options_.conditions.labels().begin(), options_.conditions.labels().end()};
  context.log = [this, &id](std::string_view line) { Log(absl::StrCat("task ", id, ": ", ToAbsl(line))); };
  context.stop = task->stop.get_token();
  absl::StatusOr<std::unique_ptr<Backend>> backend = (*factory)(spec->backend_section, context);
  if (!backend.ok()) {
    return refuse(absl::StrCat(source, ": ", options_.allow->WithAllowed(backend.status()).message()));
  }

  // The records carry the coordinator's series id, so its runs and its task meet in its store.
  if (!assignment.series_id().empty()) spec->series = assignment.series_id();
  RunnerOptions runner_options;
  runner_options.env = &tap;
  runner_options.allow = options_.allow;
  runner_options.agent_id = options_.agent_id;
  runner_options.task_id = id;
  runner_options.task_attempt = assignment.attempt();
  runner_options.conditions = options_.conditions;
  runner_options.out_dir = out_dir;
  runner_options.outbox = options_.outbox;
  runner_options.on_timed_window = options_.on_timed_window;
  if (options_.announce_conditions) {
    runner_options.on_conditions = [announce = options_.announce_conditions](const v1::MachineConditions& c) {
      announce(c);
      return absl::OkStatus();
    };
  }
  runner_options.run_watcher = options_.run_watcher;
  runner_options.progress = context.log;
  runner_options.stop = task->stop.get_token();
  absl::StatusOr<std::unique_ptr<SeriesRunner>> runner =
      SeriesRunner::Create(*spec, backend->get(), std::move(runner_options));
  if (!runner.ok()) return refuse(options_.allow->WithAllowed(runner.status()).message());

  const RunsSpec& runs = spec->runs;
  runs_total = static_cast<uint32_t>((*runner)->combinations().size() * runs.repetitions *
                                     (runs.validation + runs.cold + runs.warm));
  {
    v1::TaskUpdate accepted;
    accepted.set_task_id(id);
    accepted.mutable_accepted()->set_runs_total(runs_total);
    {
      std::lock_guard<std::mutex> l(mu_);
      accepted.set_attempt(task->attempt);
      task->latest = accepted;
    }
    Log(absl::StrCat("task ", id, " accepted: series ", spec->series, ", ", runs.warm_until ? "at most " : "",
                     runs_total, " runs", runs.warm_until ? " (warm calls until stable)" : "", ", folder ", out_dir));
    Send(accepted);
  }

  // The task runs from here until the runner returns (by its spec's task name: a bounded label).
  AgentMetrics* metrics = options_.metrics != nullptr ? options_.metrics : NullAgentMetrics::Get();
  metrics->TaskStarted(spec->task);
  absl::StatusOr<SeriesResult> result = (*runner)->Run();
  metrics->TaskEnded();
  v1::TaskUpdate update;
  update.set_task_id(id);
  v1::TaskFinished* finished = update.mutable_finished();
  finished->set_runs_done(runs_done);
  finished->set_runs_failed(runs_failed);
  if (!result.ok()) {
    finished->set_ok(false);
    finished->set_message(std::string(result.status().message()));
    Log(absl::StrCat("task ", id, " failed: ", result.status().message()));
    return update;
  }
  bool cancelled = false;
  std::string cancel_reason;
  {
    std::lock_guard<std::mutex> l(mu_);
    cancelled = task->cancelled;
    cancel_reason = task->cancel_reason;
  }
  std::string message = absl::StrCat(runs_done, " of ", runs_total, " runs made, ", runs_failed, " FAILED");
  if (warm_not_needed > 0) {
    absl::StrAppend(&message, "; ", warm_not_needed, " warm call(s) not needed: stable before runs.warm.until.max");
  }
  if (result->stopped_early > 0) {
    absl::StrAppend(&message, "; ", result->stopped_early, " combination(s) stopped early");
  }
  for (const std::string& note : result->notes) absl::StrAppend(&message, "; ", note);
  if (!result->delivery_status.ok()) absl::StrAppend(&message, "; ", result->delivery_status.message());
  if (result->interrupted && cancelled) {
    finished->set_ok(true);
    finished->set_cancelled(true);
    message = absl::StrCat("cancelled", cancel_reason.empty() ? "" : ": ", cancel_reason, "; ", message);
  } else if (result->interrupted) {
    finished->set_ok(false);
    message = absl::StrCat("the agent stopped during the task; ", message);
  } else {
    finished->set_ok(result->delivery_status.ok());
  }
  finished->set_message(Cut(message, 4096));
  Log(absl::StrCat("task ", id, " finished: ", finished->message()));
  return update;
}

}  // namespace benchfleet::agent
