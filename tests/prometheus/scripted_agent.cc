#include "tests/prometheus/scripted_agent.h"

namespace benchfleet::testing {

namespace {

// What the Hello says of the machine: its name and the labels the test gives.
v1::MachineConditions ConditionsOf(const std::string& agent_id, const std::map<std::string, std::string>& labels) {
  v1::MachineConditions c;
  c.set_hostname(agent_id);
  c.set_os_name("Debian GNU/Linux");
  c.set_os_version("12");
  c.set_architecture("x86_64");
  c.set_agent_version("scripted");
  for (const auto& [k, v] : labels) (*c.mutable_labels())[k] = v;
  return c;
}

}  // namespace

ScriptedAgent::ScriptedAgent(std::string address, std::string agent_id,
                             std::map<std::string, std::string> labels)
    : stream_(address, agent_id, "scripted", ConditionsOf(agent_id, labels),
              [this](const v1::CoordinatorMessage& message) { OnMessage(message); }) {}

ScriptedAgent::~ScriptedAgent() { Disconnect(); }

void ScriptedAgent::OnMessage(const v1::CoordinatorMessage& message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    switch (message.body_case()) {
      case v1::CoordinatorMessage::kAck:
        stored_ += message.ack().stored_run_ids_size();
        rejected_ += message.ack().rejections_size();
        break;
      case v1::CoordinatorMessage::kAssignTask:
        assignments_.push_back(message.assign_task());
        break;
      default:
        break;
    }
  }
  cv_.notify_all();
}

std::optional<v1::TaskAssignment> ScriptedAgent::WaitForAssignment(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, absl::ToChronoMilliseconds(timeout), [&] { return !assignments_.empty(); })) {
    return std::nullopt;
  }
  return assignments_.front();
}

void ScriptedAgent::Accept(const std::string& task_id, uint32_t runs_total) {
  v1::AgentMessage m;
  m.mutable_task_update()->set_task_id(task_id);
  m.mutable_task_update()->mutable_accepted()->set_runs_total(runs_total);
  stream_.Write(m);
}

void ScriptedAgent::SendBatch(const std::vector<std::string>& serialized_records) {
  stream_.WriteBatch(serialized_records);
}

void ScriptedAgent::Send(const std::vector<v1::RunRecord>& records) {
  std::vector<std::string> serialized;
  for (const v1::RunRecord& r : records) serialized.push_back(r.SerializeAsString());
  SendBatch(serialized);
}

void ScriptedAgent::Finish(const std::string& task_id, bool ok, uint32_t runs_done, uint32_t runs_failed,
                           const std::string& message) {
  v1::AgentMessage m;
  m.mutable_task_update()->set_task_id(task_id);
  v1::TaskFinished& f = *m.mutable_task_update()->mutable_finished();
  f.set_ok(ok);
  f.set_runs_done(runs_done);
  f.set_runs_failed(runs_failed);
  f.set_message(message);
  stream_.Write(m);
}

bool ScriptedAgent::WaitForAcked(size_t stored, size_t rejected, absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, absl::ToChronoMilliseconds(timeout),
                      [&] { return stored_ >= stored && rejected_ >= rejected; });
}

}  // namespace benchfleet::testing
