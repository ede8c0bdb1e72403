#include "coordinator/ingest/group_committer.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "coordinator/log.h"

namespace benchfleet::coordinator {
namespace {

bool IsCancelled(const CommitWork& work) {
  return work.cancelled != nullptr && work.cancelled->load(std::memory_order_relaxed);
}

}  // namespace

GroupCommitter::GroupCommitter(RunStore* store, Clock* clock, CoordinatorMetrics* metrics,
                               GroupCommitterOptions options)
    : store_(store), clock_(clock), metrics_(metrics), options_(options) {}

GroupCommitter::~GroupCommitter() { Stop(); }

void GroupCommitter::Start() { thread_ = std::thread([this] { Loop(); }); }

void GroupCommitter::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  space_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

absl::Status GroupCommitter::Submit(std::shared_ptr<CommitWork> work) {
  std::unique_lock<std::mutex> lock(mu_);
  space_cv_.wait(lock, [&] {
    return stopping_ || pending_bytes_ == 0 || pending_bytes_ < options_.max_pending_bytes;
  });
  if (stopping_) return absl::UnavailableError("the coordinator is shutting down");
  pending_bytes_ += work->runs.rows.size();
  pending_.push_back(std::move(work));
  work_cv_.notify_one();
  return absl::OkStatus();
}

void GroupCommitter::UpsertMachineLater(MachineUpdate update) {
  std::lock_guard<std::mutex> lock(mu_);
  MachineWork& m = machines_[update.agent_id];
  m.seen = std::max(m.seen, update.seen);
  m.upsert = std::move(update);
  work_cv_.notify_one();
}

void GroupCommitter::TouchMachineLater(const std::string& agent_id, absl::Time seen) {
  std::lock_guard<std::mutex> lock(mu_);
  MachineWork& m = machines_[agent_id];
  m.seen = std::max(m.seen, seen);
  work_cv_.notify_one();
}

size_t GroupCommitter::pending() {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size();
}

std::vector<std::shared_ptr<CommitWork>> GroupCommitter::TakeGroupLocked() {
  std::vector<std::shared_ptr<CommitWork>> group;
  size_t runs = 0;
  while (!pending_.empty()) {
    std::shared_ptr<CommitWork>& next = pending_.front();
    if (IsCancelled(*next)) {
      pending_bytes_ -= next->runs.rows.size();
      pending_.pop_front();
      continue;
    }
    if (!group.empty() && runs + next->runs.runs.size() > options_.max_group_runs) break;
    runs += next->runs.runs.size();
    group.push_back(std::move(next));
    pending_.pop_front();
  }
  return group;
}

absl::Status GroupCommitter::StoreGroup(const std::vector<std::shared_ptr<CommitWork>>& group) {
  std::vector<const PreparedRuns*> parts;
  parts.reserve(group.size());
  for (const auto& work : group) parts.push_back(&work->runs);
  // The real steady clock, not clock_: the latency is PostgreSQL's, which a simulated clock in
  // a test would report as zero.
  const auto started = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<RunStoreResult>> results = store_->StoreRuns(parts);
  if (!results.ok()) {
    metrics_->DatabaseError("store_runs");
    return results.status();
  }
  metrics_->GroupCommitted(results->size(),
                           absl::FromChrono(std::chrono::steady_clock::now() - started));
  size_t at = 0;
  for (const auto& work : group) {
    const size_t n = work->runs.runs.size();
    if (work->done) work->done(absl::MakeConstSpan(results->data() + at, n));
    at += n;
  }
  return absl::OkStatus();
}

absl::Status GroupCommitter::ApplyMachines(std::map<std::string, MachineWork>* machines) {
  for (auto it = machines->begin(); it != machines->end();) {
    const bool upsert = it->second.upsert.has_value();
    absl::Status status = upsert
                              ? store_->UpsertMachine([&] {
                                  MachineUpdate u = *it->second.upsert;
                                  u.seen = it->second.seen;
                                  return u;
                                }())
                              : store_->TouchMachine(it->first, it->second.seen);
    if (!status.ok()) metrics_->DatabaseError(upsert ? "upsert_machine" : "touch_machine");
    if (absl::IsUnavailable(status)) return status;  // keep the rest for the retry
    if (!status.ok()) Log(absl::StrCat("dropping an update of machine ", it->first, ": ", status.ToString()));
    it = machines->erase(it);
  }
  return absl::OkStatus();
}

void GroupCommitter::SleepUnlessStopping(absl::Duration delay) {
  const absl::Duration end = clock_->Monotonic() + delay;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
    }
    const absl::Duration left = end - clock_->Monotonic();
    if (left <= absl::ZeroDuration()) return;
    // Slices, so that Stop() does not wait out a long delay.
    clock_->SleepFor(std::min(left, absl::Milliseconds(50)));
  }
}

void GroupCommitter::Loop() {
  absl::Duration delay = options_.initial_retry_delay;
  bool failing = false;
  while (true) {
    std::vector<std::shared_ptr<CommitWork>> group;
    std::map<std::string, MachineWork> machines;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stopping_ || !pending_.empty() || !machines_.empty(); });
      if (stopping_) return;
      group = TakeGroupLocked();
      machines.swap(machines_);
    }
    // Runs first: they are what agents wait on; machine rows are bookkeeping.
    const absl::Status stored = group.empty() ? absl::OkStatus() : StoreGroup(group);
    const absl::Status status = stored.ok() ? ApplyMachines(&machines) : stored;

    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stored.ok()) {
        size_t done_bytes = 0;
        for (const auto& work : group) done_bytes += work->runs.rows.size();
        pending_bytes_ -= done_bytes;
      } else {
        // Put the group back in front, in order, for the next attempt.
        for (auto it = group.rbegin(); it != group.rend(); ++it) {
          if (IsCancelled(**it)) {
            pending_bytes_ -= (*it)->runs.rows.size();
          } else {
            pending_.push_front(std::move(*it));
          }
        }
      }
      // What was not applied goes back, unless a newer update for the agent came meanwhile.
      for (auto& [agent_id, m] : machines) {
        MachineWork& current = machines_[agent_id];
        if (!current.upsert.has_value()) current.upsert = std::move(m.upsert);
        current.seen = std::max(current.seen, m.seen);
      }
    }
    space_cv_.notify_all();

    if (status.ok()) {
      if (failing) Log("storing runs works again");
      failing = false;
      delay = options_.initial_retry_delay;
      continue;
    }
    if (!failing) {
      Log(absl::StrCat("storing runs failed, keeping them unacknowledged and retrying: ",
                       status.ToString()));
    }
    failing = true;
    SleepUnlessStopping(delay);
    delay = std::min(delay * 2, options_.max_retry_delay);
  }
}

}  // namespace benchfleet::coordinator
