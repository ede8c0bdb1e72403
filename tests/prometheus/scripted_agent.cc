#include "tests/prometheus/scripted_agent.h"

#include <grpcpp/grpcpp.h>

#include "common/version.h"

namespace benchfleet::testing {

ScriptedAgent::ScriptedAgent(std::string address, std::string agent_id,
                             std::map<std::string, std::string> labels)
    : agent_id_(std::move(agent_id)), labels_(std::move(labels)) {
  stub_ = v1::AgentGateway::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

ScriptedAgent::~ScriptedAgent() { Disconnect(); }

bool ScriptedAgent::Connect(absl::Duration timeout) {
  Disconnect();
  {
    std::lock_guard<std::mutex> lock(mu_);
    welcomed_ = false;
  }
  context_ = std::make_unique<grpc::ClientContext>();
  stream_ = stub_->Connect(context_.get());
  v1::AgentMessage hello;
  hello.mutable_hello()->set_agent_id(agent_id_);
  hello.mutable_hello()->set_agent_version("scripted");
  hello.mutable_hello()->set_api_revision(kApiRevision);
  v1::MachineConditions& c = *hello.mutable_hello()->mutable_conditions();
  c.set_hostname(agent_id_);
  c.set_os_name("Debian GNU/Linux");
  c.set_os_version("12");
  c.set_architecture("x86_64");
  c.set_agent_version("scripted");
  for (const auto& [k, v] : labels_) (*c.mutable_labels())[k] = v;
  if (!Write(hello)) return false;
  reader_ = std::thread([this] { ReadLoop(); });
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, absl::ToChronoMilliseconds(timeout), [&] { return welcomed_; });
}

void ScriptedAgent::Disconnect() {
  if (context_ == nullptr) return;
  context_->TryCancel();
  if (reader_.joinable()) reader_.join();
  stream_->Finish();
  stream_.reset();
  context_.reset();
}

bool ScriptedAgent::Write(const v1::AgentMessage& message) {
  std::lock_guard<std::mutex> lock(write_mu_);
  return stream_ != nullptr && stream_->Write(message);
}

void ScriptedAgent::ReadLoop() {
  v1::CoordinatorMessage message;
  while (stream_->Read(&message)) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      switch (message.body_case()) {
        case v1::CoordinatorMessage::kWelcome:
          welcomed_ = message.welcome().accepted();
          break;
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
  Write(m);
}

void ScriptedAgent::SendBatch(const std::vector<std::string>& serialized_records) {
  v1::AgentMessage m;
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    m.mutable_records()->set_batch_id(next_batch_++);
  }
  for (const std::string& r : serialized_records) m.mutable_records()->add_records(r);
  Write(m);
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
  Write(m);
}

bool ScriptedAgent::WaitForAcked(size_t stored, size_t rejected, absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, absl::ToChronoMilliseconds(timeout),
                      [&] { return stored_ >= stored && rejected_ >= rejected; });
}

}  // namespace benchfleet::testing
