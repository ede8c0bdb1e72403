#include "tests/integration/fleet_fake_agent.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/unit/coordinator/test_records.h"

namespace benchfleet::testing {

FakeAgent::FakeAgent(FakeAgentOptions options)
    : options_(std::move(options)),
      stream_(options_.address, options_.agent_id, "fake",
              MakeConditions(options_.hostname.empty() ? options_.agent_id : options_.hostname, options_.labels),
              [this](const v1::CoordinatorMessage& message) { OnMessage(message); }) {}

FakeAgent::~FakeAgent() { Disconnect(); }

template <typename F>
bool FakeAgent::WaitFor(F condition, absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, absl::ToChronoMilliseconds(timeout), condition);
}

void FakeAgent::SendHeartbeat() {
  v1::AgentMessage m;
  m.mutable_heartbeat()->set_outbox_depth(0);
  stream_.Write(m);
}

void FakeAgent::OnMessage(const v1::CoordinatorMessage& message) {
  switch (message.body_case()) {
    case v1::CoordinatorMessage::kHeartbeatAck: {
      std::lock_guard<std::mutex> lock(mu_);
      ++heartbeat_acks_;
      break;
    }
    case v1::CoordinatorMessage::kAck: {
      std::lock_guard<std::mutex> lock(mu_);
      stored_runs_ += message.ack().stored_run_ids_size();
      break;
    }
    case v1::CoordinatorMessage::kAssignTask: {
      // Like the real agent, a task is run once: the coordinator sends a RUNNING task again to
      // an agent that (re)connects (Scheduler::AgentConnected), which can race with its first
      // send when the Welcome comes before the scheduler hears of the stream.
      const v1::TaskAssignment& a = message.assign_task();
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!received_.insert({a.task_id(), a.attempt()}).second) break;
        assignments_.push_back(a);
      }
      cv_.notify_all();
      HandleAssignment(a);
      break;
    }
    case v1::CoordinatorMessage::kCancelTask: {
      {
        std::lock_guard<std::mutex> lock(mu_);
        cancels_.push_back(message.cancel_task());
      }
      v1::AgentMessage finished;
      finished.mutable_task_update()->set_task_id(message.cancel_task().task_id());
      finished.mutable_task_update()->mutable_finished()->set_cancelled(true);
      finished.mutable_task_update()->mutable_finished()->set_message(
          "cancelled by the coordinator");
      stream_.Write(finished);
      break;
    }
    default:
      break;
  }
  cv_.notify_all();
}

void FakeAgent::HandleAssignment(const v1::TaskAssignment& a) {
  v1::AgentMessage m;
  v1::TaskUpdate& update = *m.mutable_task_update();
  update.set_task_id(a.task_id());
  if (options_.on_task == FakeAgentOptions::OnTask::kRefuse) {
    update.mutable_refused()->set_reason(options_.refuse_reason);
    stream_.Write(m);
    return;
  }
  const int total = options_.on_task == FakeAgentOptions::OnTask::kRun ? options_.runs : 10;
  update.mutable_accepted()->set_runs_total(static_cast<uint32_t>(total));
  stream_.Write(m);
  const int runs = options_.on_task == FakeAgentOptions::OnTask::kRun ? options_.runs : 1;
  for (int i = 1; i <= runs; ++i) {
    v1::RunRecord record = MakeRecord(static_cast<uint32_t>(i));
    record.set_agent_id(options_.agent_id);
    record.set_task_id(a.task_id());
    record.set_series_id(a.series_id());
    if (!options_.flag.empty()) record.add_flags()->set_code(options_.flag);
    double tokens_per_second = 0;
    for (v1::Metric& m : *record.mutable_metrics()) {
      if (m.name() != "tokens_per_second") continue;
      m.set_better(v1::BETTER_HIGHER);  // as a backend's declaration stamps its main figure
      m.set_headline(1);
      m.set_label("tokens/s");
      tokens_per_second = m.value();
    }
    stream_.WriteBatch({Serialize(record)});
    v1::AgentMessage progress;
    progress.mutable_task_update()->set_task_id(a.task_id());
    v1::TaskProgress& p = *progress.mutable_task_update()->mutable_progress();
    p.set_runs_done(static_cast<uint32_t>(i));
    p.set_runs_total(static_cast<uint32_t>(total));
    p.set_phase("WARM");
    p.set_call_index(static_cast<uint32_t>(i));
    p.set_last_figure(absl::StrFormat("tokens/s %.1f tokens/s", tokens_per_second));
    p.set_last_run_id(record.run_id());
    stream_.Write(progress);
  }
  if (options_.on_task != FakeAgentOptions::OnTask::kRun) return;  // held until cancelled
  v1::AgentMessage finished;
  finished.mutable_task_update()->set_task_id(a.task_id());
  finished.mutable_task_update()->mutable_finished()->set_ok(true);
  finished.mutable_task_update()->mutable_finished()->set_runs_done(static_cast<uint32_t>(runs));
  stream_.Write(finished);
}

std::vector<v1::TaskAssignment> FakeAgent::assignments() {
  std::lock_guard<std::mutex> lock(mu_);
  return assignments_;
}

std::vector<v1::TaskCancel> FakeAgent::cancels() {
  std::lock_guard<std::mutex> lock(mu_);
  return cancels_;
}

size_t FakeAgent::stored_runs() {
  std::lock_guard<std::mutex> lock(mu_);
  return stored_runs_;
}

bool FakeAgent::WaitForAssignments(size_t n, absl::Duration timeout) {
  return WaitFor([&] { return assignments_.size() >= n; }, timeout);
}

bool FakeAgent::WaitForCancels(size_t n, absl::Duration timeout) {
  return WaitFor([&] { return cancels_.size() >= n; }, timeout);
}

bool FakeAgent::WaitForStoredRuns(size_t n, absl::Duration timeout) {
  return WaitFor([&] { return stored_runs_ >= n; }, timeout);
}

bool FakeAgent::WaitForHeartbeatAcks(size_t n, absl::Duration timeout) {
  return WaitFor([&] { return heartbeat_acks_ >= n; }, timeout);
}

}  // namespace benchfleet::testing
