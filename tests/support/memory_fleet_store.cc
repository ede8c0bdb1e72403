#include "tests/support/memory_fleet_store.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/hashing.h"
#include "common/proto_time.h"
#include "common/run_flags.h"

namespace benchfleet::testing {
namespace {

using coordinator::BaselineRun;
using coordinator::ClaimedTask;
using coordinator::DueTask;
using coordinator::FleetSnapshot;
using coordinator::ScheduleRow;
using coordinator::SeriesRow;
using coordinator::TaskRow;

// PostgreSQL keeps timestamptz to the microsecond, and the store's literals truncate to it.
absl::Time Micros(absl::Time t) { return absl::FromUnixMicros(absl::ToUnixMicros(t)); }
std::optional<absl::Time> Micros(const std::optional<absl::Time>& t) {
  if (!t.has_value()) return std::nullopt;
  return Micros(*t);
}

// A uuid column's text: lower case whatever the caller wrote.
std::string Key(const std::string& id) { return absl::AsciiStrToLower(id); }

bool IsOpen(v1::TaskStatus::State s) {
  return s == v1::TaskStatus::STATE_PENDING || s == v1::TaskStatus::STATE_RUNNING;
}

bool Contains(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// The runs row's start_time: NULL for a record without one (or at the epoch, as AppendRunRow writes).
std::optional<absl::Time> StartOf(const v1::RunRecord& record) {
  if (!record.has_start_time()) return std::nullopt;
  if (record.start_time().seconds() == 0 && record.start_time().nanos() == 0) return std::nullopt;
  return Micros(ToTime(record.start_time()));
}

}  // namespace

void MemoryFleetStore::UpsertMachine(const coordinator::MachineUpdate& update) {
  std::lock_guard<std::mutex> lock(mu_);
  const absl::Time seen = Micros(update.seen);
  auto [it, added] = machines_.try_emplace(update.agent_id, Machine{update.conditions, seen, seen});
  if (!added) {
    it->second.conditions = update.conditions;
    it->second.last_seen = std::max(it->second.last_seen, seen);
  }
  conditions_.try_emplace(update.conditions.fingerprint(), update.conditions);
}

absl::Status MemoryFleetStore::AddRun(const v1::RunRecord& record) {
  if (!IsUuid(record.run_id())) return absl::InvalidArgumentError(absl::StrCat("run id ", record.run_id()));
  std::lock_guard<std::mutex> lock(mu_);
  runs_.try_emplace(Key(record.run_id()), Run{record, StartOf(record)});
  return absl::OkStatus();
}

void MemoryFleetStore::SetDown(bool down) {
  std::lock_guard<std::mutex> lock(mu_);
  down_ = down;
}

absl::Status MemoryFleetStore::SetSeriesSpec(const std::string& series_id, const std::string& spec_yaml) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = series_.find(Key(series_id));
  if (it == series_.end()) return absl::NotFoundError(absl::StrCat("no series ", series_id));
  it->second.spec_yaml = spec_yaml;
  return absl::OkStatus();
}

std::map<std::string, std::string> MemoryFleetStore::AnnotationsOf(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, std::string> out;
  for (const auto& [key, reason] : annotations_) {
    if (key.first == Key(run_id)) out[key.second] = reason;
  }
  return out;
}

std::vector<v1::RegressionVerdict> MemoryFleetStore::VerdictsOfTask(const std::string& task_id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<absl::Time, v1::RegressionVerdict>> found;
  for (const auto& [run_id, v] : verdicts_) {
    if (v.task_id != Key(task_id)) continue;
    const auto run = runs_.find(run_id);
    const absl::Time start =
        run != runs_.end() && run->second.start.has_value() ? *run->second.start : absl::InfinitePast();
    found.emplace_back(start, v.verdict);
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<v1::RegressionVerdict> out;
  for (auto& [start, verdict] : found) out.push_back(std::move(verdict));
  return out;
}

absl::Status MemoryFleetStore::CheckUp() const {
  if (down_) return absl::UnavailableError("the in-memory fleet store is down (SetDown)");
  return absl::OkStatus();
}

// ---- MachineStore ----

absl::StatusOr<std::vector<v1::Machine>> MemoryFleetStore::ListMachines() {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  std::vector<v1::Machine> out;
  for (const auto& [agent_id, m] : machines_) {
    v1::Machine machine;
    machine.set_agent_id(agent_id);
    *machine.mutable_conditions() = m.conditions;
    SetTimestamp(m.first_seen, machine.mutable_first_seen_time());
    SetTimestamp(m.last_seen, machine.mutable_last_seen_time());
    uint64_t runs = 0;
    for (const auto& [id, run] : runs_) runs += run.record.agent_id() == agent_id ? 1 : 0;
    machine.set_run_count(runs);
    out.push_back(std::move(machine));
  }
  return out;
}

absl::StatusOr<std::vector<v1::MachineConditions>> MemoryFleetStore::GetConditions(
    const std::vector<std::string>& fingerprints) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  std::vector<v1::MachineConditions> out;
  for (const auto& [fingerprint, c] : conditions_) {
    if (Contains(fingerprints, fingerprint)) out.push_back(c);
  }
  return out;
}

// ---- TaskStore ----

absl::StatusOr<std::string> MemoryFleetStore::CreateSeries(const SeriesRow& series,
                                                           const std::vector<std::string>& agent_ids) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  SeriesRow row = series;
  row.id = NewUuid();
  row.created = Micros(series.created);
  row.deadline = Micros(series.deadline);
  row.slot_time = Micros(series.slot_time);
  row.state = v1::SeriesStatus::STATE_ACTIVE;
  row.schedule_id = Key(series.schedule_id);
  for (const std::string& agent : agent_ids) {
    Task task;
    v1::TaskStatus& s = task.row.status;
    s.set_task_id(NewUuid());
    s.set_series_id(row.id);
    s.set_agent_id(agent);
    s.set_state(v1::TaskStatus::STATE_PENDING);
    s.set_attempt(1);
    SetTimestamp(row.created, s.mutable_update_time());
    tasks_.emplace(s.task_id(), std::move(task));
  }
  if (!row.schedule_id.empty() && row.slot_time.has_value()) {
    const auto slot = slots_.find({row.schedule_id, *row.slot_time});
    if (slot != slots_.end()) slot->second.series_id = row.id;
  }
  series_.emplace(row.id, row);
  Bump();
  return row.id;
}

absl::StatusOr<SeriesRow> MemoryFleetStore::GetSeries(const std::string& series_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  const auto it = series_.find(Key(series_id));
  if (!IsUuid(series_id) || it == series_.end()) return absl::NotFoundError(absl::StrCat("no series ", series_id));
  return it->second;
}

absl::StatusOr<std::vector<SeriesRow>> MemoryFleetStore::ListSeries(bool active_only) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  std::vector<SeriesRow> out;
  for (const auto& [id, s] : series_) {
    if (!active_only || s.state == v1::SeriesStatus::STATE_ACTIVE) out.push_back(s);
  }
  std::sort(out.begin(), out.end(), [](const SeriesRow& a, const SeriesRow& b) {
    return std::tie(a.created, a.id) > std::tie(b.created, b.id);
  });
  return out;
}

absl::StatusOr<std::vector<TaskRow>> MemoryFleetStore::ListTasks(const std::string& series_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  std::vector<TaskRow> out;
  for (const auto& [id, t] : tasks_) {
    if (t.row.status.series_id() == Key(series_id)) out.push_back(t.row);
  }
  std::sort(out.begin(), out.end(), [](const TaskRow& a, const TaskRow& b) {
    return std::tie(a.status.agent_id(), a.status.task_id()) < std::tie(b.status.agent_id(), b.status.task_id());
  });
  return out;
}

absl::StatusOr<TaskRow> MemoryFleetStore::GetTask(const std::string& task_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  const auto it = tasks_.find(Key(task_id));
  if (!IsUuid(task_id) || it == tasks_.end()) return absl::NotFoundError(absl::StrCat("no task ", task_id));
  return it->second.row;
}

ClaimedTask MemoryFleetStore::ClaimedOf(const Task& task) const {
  const SeriesRow& series = series_.at(task.row.status.series_id());
  ClaimedTask t;
  t.task_id = task.row.status.task_id();
  t.series_id = series.id;
  t.agent_id = task.row.status.agent_id();
  t.task = series.task;
  t.attempt = task.row.status.attempt();
  t.spec_yaml = series.spec_yaml;
  t.deadline = series.deadline;
  return t;
}

absl::StatusOr<std::vector<ClaimedTask>> MemoryFleetStore::ClaimPendingTasks(const std::vector<std::string>& agent_ids,
                                                                             const std::string& coordinator_id,
                                                                             absl::Time now,
                                                                             absl::Time lease_expiry) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  now = Micros(now);
  std::vector<ClaimedTask> out;
  std::set<std::string> changed;
  for (auto& [id, t] : tasks_) {
    v1::TaskStatus& s = t.row.status;
    if (s.state() != v1::TaskStatus::STATE_PENDING || !Contains(agent_ids, s.agent_id())) continue;
    const SeriesRow& series = series_.at(s.series_id());
    if (series.state != v1::SeriesStatus::STATE_ACTIVE) continue;
    if (series.deadline.has_value() && *series.deadline <= now) continue;
    s.set_state(v1::TaskStatus::STATE_RUNNING);
    t.row.coordinator_id = coordinator_id;
    t.row.lease_expiry = Micros(lease_expiry);
    SetTimestamp(now, s.mutable_update_time());
    changed.insert(s.series_id());
    out.push_back(ClaimedOf(t));
  }
  for (size_t i = 0; i < changed.size(); ++i) Bump();
  return out;
}

absl::StatusOr<std::vector<ClaimedTask>> MemoryFleetStore::TakeOverRunningTasks(const std::string& agent_id,
                                                                                const std::string& coordinator_id,
                                                                                absl::Time now,
                                                                                absl::Time lease_expiry) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  std::vector<ClaimedTask> out;  // tasks_ is by id: sorted as the interface says
  for (auto& [id, t] : tasks_) {
    v1::TaskStatus& s = t.row.status;
    if (s.agent_id() != agent_id || s.state() != v1::TaskStatus::STATE_RUNNING) continue;
    t.row.coordinator_id = coordinator_id;
    t.row.lease_expiry = Micros(lease_expiry);
    SetTimestamp(Micros(now), s.mutable_update_time());
    out.push_back(ClaimedOf(t));
  }
  return out;
}

absl::StatusOr<bool> MemoryFleetStore::UpdateTask(const TaskRow& task, v1::TaskStatus::State expected_state,
                                                  uint32_t expected_attempt, absl::Time now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  const v1::TaskStatus& in = task.status;
  if (!IsUuid(in.task_id())) return false;
  const auto it = tasks_.find(Key(in.task_id()));
  if (it == tasks_.end()) return false;
  TaskRow& row = it->second.row;
  v1::TaskStatus& s = row.status;
  if (s.state() != expected_state || s.attempt() != expected_attempt) return false;
  s.set_state(in.state());
  s.set_attempt(in.attempt());
  s.set_runs_done(in.runs_done());
  s.set_runs_total(in.runs_total());
  s.set_runs_failed(in.runs_failed());
  s.set_phase(in.phase());
  s.set_call_index(in.call_index());
  s.set_last_figure(in.last_figure());
  s.set_message(in.message());
  SetTimestamp(Micros(now), s.mutable_update_time());
  row.lease_expiry = Micros(task.lease_expiry);
  row.coordinator_id = task.coordinator_id;
  Bump();
  return true;
}

absl::Status MemoryFleetStore::RenewLeases(const std::string& agent_id, absl::Time lease_expiry) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  lease_expiry = Micros(lease_expiry);
  for (auto& [id, t] : tasks_) {
    if (t.row.status.agent_id() != agent_id || t.row.status.state() != v1::TaskStatus::STATE_RUNNING) continue;
    // GREATEST ignores a NULL lease.
    t.row.lease_expiry = t.row.lease_expiry.has_value() ? std::max(*t.row.lease_expiry, lease_expiry) : lease_expiry;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<DueTask>> MemoryFleetStore::ListDueTasks(absl::Time now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  now = Micros(now);
  std::vector<DueTask> out;
  for (const auto& [id, t] : tasks_) {
    const SeriesRow& series = series_.at(t.row.status.series_id());
    const v1::TaskStatus::State state = t.row.status.state();
    const bool lease_expired = state == v1::TaskStatus::STATE_RUNNING && t.row.lease_expiry.has_value() &&
                               *t.row.lease_expiry <= now;
    const bool past_deadline =
        state == v1::TaskStatus::STATE_PENDING && series.deadline.has_value() && *series.deadline <= now;
    if (!lease_expired && !past_deadline) continue;
    out.push_back(DueTask{t.row, series.retry_max, series.deadline});
  }
  std::sort(out.begin(), out.end(), [](const DueTask& a, const DueTask& b) {
    return std::tie(a.task.status.series_id(), a.task.status.agent_id()) <
           std::tie(b.task.status.series_id(), b.task.status.agent_id());
  });
  return out;
}

absl::StatusOr<std::vector<TaskRow>> MemoryFleetStore::CancelSeries(const std::string& series_id,
                                                                    const std::string& message, absl::Time now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  const auto series = series_.find(Key(series_id));
  if (!IsUuid(series_id) || series == series_.end()) {
    return absl::NotFoundError(absl::StrCat("no series ", series_id));
  }
  std::vector<TaskRow> running;
  for (auto& [id, t] : tasks_) {
    v1::TaskStatus& s = t.row.status;
    if (s.series_id() != series->first || !IsOpen(s.state())) continue;
    const bool was_running = s.state() == v1::TaskStatus::STATE_RUNNING;
    s.set_state(v1::TaskStatus::STATE_CANCELLED);
    s.set_message(message);
    SetTimestamp(Micros(now), s.mutable_update_time());
    t.row.lease_expiry.reset();
    t.cancel_pending = was_running;
    if (was_running) running.push_back(t.row);
  }
  if (series->second.state == v1::SeriesStatus::STATE_ACTIVE) series->second.state = v1::SeriesStatus::STATE_CANCELLED;
  Bump();
  return running;
}

absl::StatusOr<std::vector<TaskRow>> MemoryFleetStore::TakeCancels(const std::vector<std::string>& agent_ids) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  std::vector<TaskRow> out;
  for (auto& [id, t] : tasks_) {
    if (!t.cancel_pending || !Contains(agent_ids, t.row.status.agent_id())) continue;
    t.cancel_pending = false;
    out.push_back(t.row);
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> MemoryFleetStore::FinishDoneSeries() {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  std::set<std::string> open;
  for (const auto& [id, t] : tasks_) {
    if (IsOpen(t.row.status.state())) open.insert(t.row.status.series_id());
  }
  std::vector<std::string> out;
  for (auto& [id, s] : series_) {
    if (s.state != v1::SeriesStatus::STATE_ACTIVE || open.count(id) > 0) continue;
    s.state = v1::SeriesStatus::STATE_DONE;
    out.push_back(id);
    Bump();
  }
  return out;
}

absl::Status MemoryFleetStore::AddFlagCounts(const std::map<std::string, std::map<std::string, int>>& counts) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  std::set<std::string> changed;
  for (const auto& [task_id, codes] : counts) {
    if (!IsUuid(task_id) || codes.empty()) continue;
    const auto it = tasks_.find(Key(task_id));
    if (it == tasks_.end()) continue;
    auto& flag_counts = *it->second.row.status.mutable_flag_counts();
    for (const auto& [code, n] : codes) flag_counts[code] += static_cast<uint32_t>(n);
    changed.insert(it->second.row.status.series_id());
  }
  for (size_t i = 0; i < changed.size(); ++i) Bump();
  return absl::OkStatus();
}

absl::StatusOr<int64_t> MemoryFleetStore::ChangeCounter() {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  return change_counter_;
}

// ---- ScheduleStore ----

absl::StatusOr<std::string> MemoryFleetStore::AddSchedule(const ScheduleRow& schedule) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  Schedule s{schedule, std::nullopt};
  s.row.id = NewUuid();
  s.row.created = Micros(schedule.created);
  s.row.last_slot.reset();
  s.row.last_series_id.clear();
  schedules_.emplace(s.row.id, s);
  Bump();
  return s.row.id;
}

absl::StatusOr<std::vector<ScheduleRow>> MemoryFleetStore::ListSchedules() {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  std::vector<ScheduleRow> out;
  for (const auto& [id, s] : schedules_) {
    if (s.removed.has_value()) continue;
    ScheduleRow row = s.row;
    // slots_ is sorted by (schedule, slot): the last of this schedule's is its latest.
    const auto next = slots_.lower_bound({id, absl::InfiniteFuture()});
    if (next != slots_.begin()) {
      const auto latest = std::prev(next);
      if (latest->first.first == id) {
        row.last_slot = latest->first.second;
        row.last_series_id = latest->second.series_id;
      }
    }
    out.push_back(std::move(row));
  }
  std::sort(out.begin(), out.end(), [](const ScheduleRow& a, const ScheduleRow& b) {
    return std::tie(a.created, a.id) < std::tie(b.created, b.id);
  });
  return out;
}

absl::Status MemoryFleetStore::RemoveSchedule(const std::string& schedule_id, absl::Time now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  const auto it = schedules_.find(Key(schedule_id));
  if (!IsUuid(schedule_id) || it == schedules_.end() || it->second.removed.has_value()) {
    return absl::NotFoundError(absl::StrCat("no schedule ", schedule_id));
  }
  it->second.removed = Micros(now);
  Bump();
  return absl::OkStatus();
}

absl::StatusOr<bool> MemoryFleetStore::ClaimSlot(const std::string& schedule_id, absl::Time slot,
                                                 const std::string& coordinator_id, absl::Time now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  // schedule_slots.schedule_id references schedules: PostgreSQL refuses a slot of no schedule.
  if (!IsUuid(schedule_id) || schedules_.count(Key(schedule_id)) == 0) {
    return absl::InvalidArgumentError(absl::StrCat("no schedule ", schedule_id, " to claim a slot of"));
  }
  return slots_.try_emplace({Key(schedule_id), Micros(slot)}, Slot{"", coordinator_id, Micros(now)}).second;
}

// ---- RunAnnotationStore ----

absl::Status MemoryFleetStore::AnnotateRuns(const std::vector<std::string>& run_ids, const std::string& code,
                                            const std::string& reason, absl::Time now) {
  (void)now;  // annotations keep no time here: nothing reads it back through the interfaces
  for (const std::string& id : run_ids) {
    if (!IsUuid(id)) return absl::NotFoundError(absl::StrCat("no run ", id));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  for (const std::string& id : run_ids) {
    if (runs_.count(Key(id)) == 0) return absl::NotFoundError(absl::StrCat("no run ", id));
  }
  for (const std::string& id : run_ids) annotations_[{Key(id), code}] = reason;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> MemoryFleetStore::RunsOfSeries(const std::string& series_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  std::vector<std::string> out;  // runs_ is by run id: sorted
  for (const auto& [id, run] : runs_) {
    if (run.record.series_id() == series_id) out.push_back(id);
  }
  return out;
}

bool MemoryFleetStore::HasAnnotation(const std::string& run_id, const std::vector<std::string>& codes) const {
  for (const std::string& code : codes) {
    if (annotations_.count({run_id, code}) > 0) return true;
  }
  return false;
}

template <typename Keep>
std::vector<BaselineRun> MemoryFleetStore::PointRuns(const v1::RunRecord& record, int limit,
                                                     const std::vector<std::string>& excluded_codes,
                                                     Keep keep) const {
  std::vector<BaselineRun> out;
  const std::optional<absl::Time> start = StartOf(record);
  if (!record.has_start_time() || !IsUuid(record.run_id())) return out;
  // A record whose start is the epoch has a NULL start in SQL: every comparison with it fails.
  if (!start.has_value()) return out;
  const std::map<std::string, std::string> matrix(record.matrix().begin(), record.matrix().end());
  std::vector<std::pair<absl::Time, const Run*>> found;
  for (const auto& [id, run] : runs_) {
    const v1::RunRecord& r = run.record;
    if (!run.start.has_value() || r.task() != record.task() || r.agent_id() != record.agent_id() ||
        r.mode() != record.mode() || r.phase() != record.phase() ||
        std::map<std::string, std::string>(r.matrix().begin(), r.matrix().end()) != matrix) {
      continue;
    }
    if (!keep(r, *run.start, *start)) continue;
    if (r.status().code() != v1::RunStatus::CODE_OK) continue;
    if (std::any_of(r.flags().begin(), r.flags().end(),
                    [](const v1::Flag& f) { return IsExcludingFlag(f.code()); })) {
      continue;
    }
    if (HasAnnotation(id, excluded_codes)) continue;
    found.emplace_back(*run.start, &run);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first, a.second->record.run_id()) > std::tie(b.first, b.second->record.run_id());
  });
  if (limit < 0) limit = 0;
  for (size_t i = 0; i < found.size() && i < static_cast<size_t>(limit); ++i) {
    const v1::RunRecord& r = found[i].second->record;
    BaselineRun b;
    b.run_id = Key(r.run_id());
    // The runs row's metrics are a JSON object: a name given twice keeps its last value, and a
    // value JSON cannot write (NaN, infinities) is not there.
    for (const v1::Metric& m : r.metrics()) {
      if (std::isfinite(m.value())) {
        b.metrics[m.name()] = m.value();
      } else {
        b.metrics.erase(m.name());
      }
    }
    if (r.has_wall_duration()) b.wall_seconds = ToSeconds(r.wall_duration());
    b.conditions_fingerprint = r.conditions_fingerprint();
    b.start_time = found[i].first;
    out.push_back(std::move(b));
  }
  return out;
}

absl::StatusOr<std::vector<BaselineRun>> MemoryFleetStore::Baseline(const v1::RunRecord& record, int limit) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  return PointRuns(record, limit, {"INVALIDATED", "REGRESSION"},
                   [&](const v1::RunRecord& r, absl::Time r_start, absl::Time start) {
                     return r.task_id() != record.task_id() && r_start < start;
                   });
}

absl::StatusOr<std::vector<BaselineRun>> MemoryFleetStore::Sample(const v1::RunRecord& record, int limit) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  return PointRuns(record, limit, {"INVALIDATED"}, [&](const v1::RunRecord& r, absl::Time r_start, absl::Time start) {
    return r.task_id() == record.task_id() && r_start <= start;
  });
}

absl::Status MemoryFleetStore::StoreVerdict(const std::string& task_id, const v1::RegressionVerdict& verdict,
                                            const std::string& reason, absl::Time now) {
  if (!IsUuid(task_id) || !IsUuid(verdict.run_id())) {
    return absl::InvalidArgumentError(
        absl::StrCat("verdict of run ", verdict.run_id(), " of task ", task_id, ": ids must be UUIDs"));
  }
  std::vector<std::string> annotated;
  if (verdict.regression()) {
    for (const std::string& id : verdict.sample_run_ids()) {
      if (IsUuid(id)) annotated.push_back(Key(id));
    }
    if (annotated.empty()) annotated.push_back(Key(verdict.run_id()));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  const bool inserted = verdicts_.try_emplace(Key(verdict.run_id()), Verdict{Key(task_id), verdict, Micros(now)}).second;
  if (!inserted) return absl::OkStatus();
  uint32_t added = 0;
  for (const std::string& id : annotated) added += annotations_.try_emplace({id, "REGRESSION"}, reason).second ? 1 : 0;
  if (added == 0) return absl::OkStatus();
  const auto task = tasks_.find(Key(task_id));
  if (task != tasks_.end()) {
    (*task->second.row.status.mutable_flag_counts())["REGRESSION"] += added;
    Bump();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, std::vector<v1::RegressionVerdict>>> MemoryFleetStore::ListVerdicts(
    const std::string& series_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  std::map<std::string, std::vector<v1::RegressionVerdict>> out;
  if (!IsUuid(series_id)) return out;
  // Of each task, the newest verdict (its run's start, NULLS LAST; then created, run id, all
  // descending) of each point; a verdict from before `kind` is a point of its own.
  using Point = std::tuple<std::string, std::string, int, std::map<std::string, std::string>>;
  struct Newest {
    std::optional<absl::Time> start;
    absl::Time created;
    std::string run_id;
    const v1::RegressionVerdict* verdict;
  };
  // Newest first: a later start, a start over none, then a later created, a greater run id.
  auto newer = [](const Newest& a, const Newest& b) {
    if (a.start.has_value() != b.start.has_value()) return a.start.has_value();
    if (a.start != b.start) return *a.start > *b.start;
    return std::tie(a.created, a.run_id) > std::tie(b.created, b.run_id);
  };
  std::map<std::pair<std::string, Point>, Newest> newest;
  for (const auto& [run_id, v] : verdicts_) {
    const auto task = tasks_.find(v.task_id);
    if (task == tasks_.end() || task->second.row.status.series_id() != Key(series_id)) continue;
    const v1::RegressionVerdict& verdict = v.verdict;
    Point point = verdict.kind() != v1::RegressionVerdict::KIND_UNSPECIFIED
                      ? Point{"", verdict.mode(), verdict.phase(),
                              std::map<std::string, std::string>(verdict.matrix().begin(), verdict.matrix().end())}
                      : Point{run_id, "", 0, {}};
    const auto run = runs_.find(run_id);
    Newest candidate{run == runs_.end() ? std::nullopt : run->second.start, v.created, run_id, &verdict};
    auto [it, added] = newest.try_emplace({v.task_id, std::move(point)}, candidate);
    if (!added && newer(candidate, it->second)) it->second = candidate;
  }
  // By their runs' start (NULLS FIRST), then created, then run id.
  std::vector<std::pair<std::string, Newest>> sorted;
  for (const auto& [key, n] : newest) sorted.emplace_back(key.first, n);
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    const Newest& x = a.second;
    const Newest& y = b.second;
    if (x.start.has_value() != y.start.has_value()) return !x.start.has_value();
    if (x.start != y.start) return *x.start < *y.start;
    return std::tie(x.created, x.run_id) < std::tie(y.created, y.run_id);
  });
  for (const auto& [task_id, n] : sorted) out[task_id].push_back(*n.verdict);
  return out;
}

// ---- FleetSnapshotReader ----

absl::StatusOr<FleetSnapshot> MemoryFleetStore::ReadFleetSnapshot(absl::Time seen_since) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status up = CheckUp(); !up.ok()) return up;
  FleetSnapshot snapshot;
  const auto* states = v1::TaskStatus::State_descriptor();
  for (int i = 0; i < states->value_count(); ++i) {
    const auto state = static_cast<v1::TaskStatus::State>(states->value(i)->number());
    if (state == v1::TaskStatus::STATE_UNSPECIFIED) continue;
    snapshot.tasks_by_state[absl::AsciiStrToLower(v1::TaskStatus::State_Name(state).substr(6))] = 0;
  }
  snapshot.agents_known = static_cast<int64_t>(machines_.size());
  for (const auto& [agent_id, m] : machines_) {
    if (m.last_seen >= Micros(seen_since)) snapshot.recent_agents.push_back(agent_id);
  }
  std::set<std::pair<std::string, std::string>> open;
  for (const auto& [id, t] : tasks_) {
    const v1::TaskStatus& s = t.row.status;
    ++snapshot.tasks_by_state[absl::AsciiStrToLower(v1::TaskStatus::State_Name(s.state()).substr(6))];
    if (IsOpen(s.state())) open.emplace(s.agent_id(), series_.at(s.series_id()).task);
  }
  snapshot.open_tasks.assign(open.begin(), open.end());
  return snapshot;
}

}  // namespace benchfleet::testing
