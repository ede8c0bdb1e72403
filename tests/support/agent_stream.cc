#include "tests/support/agent_stream.h"

#include <grpcpp/grpcpp.h>

#include "common/version.h"

namespace benchfleet::testing {

AgentStream::AgentStream(const std::string& address, std::string agent_id, std::string agent_version,
                         v1::MachineConditions conditions, OnMessage on_message)
    : agent_id_(std::move(agent_id)),
      agent_version_(std::move(agent_version)),
      conditions_(std::move(conditions)),
      on_message_(std::move(on_message)),
      stub_(v1::AgentGateway::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))) {}

AgentStream::~AgentStream() { Disconnect(); }

bool AgentStream::Connect(absl::Duration timeout) {
  Disconnect();
  {
    std::lock_guard<std::mutex> lock(mu_);
    welcomed_ = false;
  }
  context_ = std::make_unique<grpc::ClientContext>();
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    stream_ = stub_->Connect(context_.get());
  }
  v1::AgentMessage hello;
  hello.mutable_hello()->set_agent_id(agent_id_);
  hello.mutable_hello()->set_agent_version(agent_version_);
  hello.mutable_hello()->set_api_revision(kApiRevision);
  *hello.mutable_hello()->mutable_conditions() = conditions_;
  if (!Write(hello)) return false;
  reader_ = std::thread([this] { ReadLoop(); });
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, absl::ToChronoMilliseconds(timeout), [&] { return welcomed_; });
}

void AgentStream::Disconnect() {
  if (context_ == nullptr) return;
  context_->TryCancel();
  if (reader_.joinable()) reader_.join();
  std::lock_guard<std::mutex> lock(write_mu_);
  stream_->Finish();
  stream_.reset();
  context_.reset();
}

bool AgentStream::Write(const v1::AgentMessage& message) {
  std::lock_guard<std::mutex> lock(write_mu_);
  return stream_ != nullptr && stream_->Write(message);
}

bool AgentStream::WriteBatch(const std::vector<std::string>& serialized_records) {
  v1::AgentMessage m;
  for (const std::string& r : serialized_records) m.mutable_records()->add_records(r);
  // The id taken and the batch written under one lock: batch ids reach the coordinator in order.
  std::lock_guard<std::mutex> lock(write_mu_);
  m.mutable_records()->set_batch_id(next_batch_++);
  return stream_ != nullptr && stream_->Write(m);
}

void AgentStream::ReadLoop() {
  v1::CoordinatorMessage message;
  while (stream_->Read(&message)) {
    if (message.body_case() == v1::CoordinatorMessage::kWelcome) {
      std::lock_guard<std::mutex> lock(mu_);
      welcomed_ = message.welcome().accepted();
    }
    cv_.notify_all();
    on_message_(message);
  }
}

}  // namespace benchfleet::testing
