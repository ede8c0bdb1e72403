#include "tests/integration/fake_coordinator.h"

#include <sys/stat.h>

#include <chrono>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/version.h"
#include "tests/support/subprocess.h"

namespace benchfleet::testing {

FakeCoordinator::FakeCoordinator(const std::string& address, std::vector<v1::TaskAssignment> tasks)
    : tasks_(std::move(tasks)) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port_);
  builder.RegisterService(this);
  server_ = builder.BuildAndStart();
}

FakeCoordinator::~FakeCoordinator() {
  if (server_ == nullptr) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  server_->Wait();
}

std::string FakeCoordinator::address() const { return absl::StrCat("127.0.0.1:", port_); }

grpc::Status FakeCoordinator::Connect(grpc::ServerContext* context, ServerStream* stream) {
  v1::AgentMessage message;
  if (!stream->Read(&message) || !message.has_hello()) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "Hello first");
  }
  v1::CoordinatorMessage welcome;
  welcome.mutable_welcome()->set_coordinator_version("fake-coordinator");
  welcome.mutable_welcome()->set_api_revision(kApiRevision);
  welcome.mutable_welcome()->set_min_agent_api_revision(kMinAgentApiRevision);
  welcome.mutable_welcome()->set_agent_id(message.hello().agent_id());
  welcome.mutable_welcome()->set_accepted(true);
  if (!stream->Write(welcome)) return grpc::Status::CANCELLED;
  {
    std::lock_guard<std::mutex> l(mu_);
    ++sessions_;
    context_ = context;
    stream_ = stream;
  }
  // As a coordinator does when an agent connects: every task it has not heard the end of.
  for (const v1::TaskAssignment& task : tasks_) {
    v1::CoordinatorMessage assign;
    *assign.mutable_assign_task() = task;
    if (!Write(stream, assign)) break;
  }
  while (stream->Read(&message)) {
    if (message.has_task_update()) {
      std::lock_guard<std::mutex> l(mu_);
      updates_.push_back(message.task_update());
      continue;
    }
    if (!message.has_records()) continue;
    v1::CoordinatorMessage answer;
    answer.mutable_ack()->set_batch_id(message.records().batch_id());
    {
      std::lock_guard<std::mutex> l(mu_);
      for (const std::string& bytes : message.records().records()) {
        v1::RunRecord record;
        record.ParseFromString(bytes);
        if (stored_.insert(record.run_id()).second) {
          records_.push_back(record);
          answer.mutable_ack()->add_stored_run_ids(record.run_id());
        } else {
          answer.mutable_ack()->add_duplicate_run_ids(record.run_id());
        }
      }
    }
    Write(stream, answer);
  }
  std::lock_guard<std::mutex> l(mu_);
  context_ = nullptr;
  stream_ = nullptr;
  return grpc::Status::OK;
}

bool FakeCoordinator::Send(const v1::CoordinatorMessage& message) {
  std::lock_guard<std::mutex> l(mu_);  // the stream cannot end meanwhile
  return stream_ != nullptr && Write(stream_, message);
}

void FakeCoordinator::BreakStream() {
  std::lock_guard<std::mutex> l(mu_);
  if (context_ != nullptr) context_->TryCancel();
}

int FakeCoordinator::sessions() {
  std::lock_guard<std::mutex> l(mu_);
  return sessions_;
}

std::vector<v1::TaskUpdate> FakeCoordinator::updates() {
  std::lock_guard<std::mutex> l(mu_);
  return updates_;
}

std::vector<v1::TaskUpdate> FakeCoordinator::updates(const std::string& task_id, v1::TaskUpdate::BodyCase body) {
  std::vector<v1::TaskUpdate> out;
  for (const v1::TaskUpdate& u : updates()) {
    if (u.task_id() == task_id && u.body_case() == body) out.push_back(u);
  }
  return out;
}

std::vector<v1::RunRecord> FakeCoordinator::records() {
  std::lock_guard<std::mutex> l(mu_);
  return records_;
}

bool FakeCoordinator::Write(ServerStream* stream, const v1::CoordinatorMessage& message) {
  std::lock_guard<std::mutex> l(write_mu_);
  return stream->Write(message);
}

AgentFiles::AgentFiles(const std::string& prefix, const std::string& extra) {
  work = MakeTempDir(prefix);
  model = work + "/models/qwen2.5-3b-instruct-q4_k_m.gguf";
  ::mkdir((work + "/models").c_str(), 0755);
  std::ofstream(model) << "GGUF simulated model file";
  config = work + "/agent.yaml";
  std::ofstream(config) << "state_dir: " << work << "/state\n"
                        << "allow:\n  backends: [llama-server]\n"
                        << "  executables: [" << BinaryPath("llama-server-sim") << "]\n"
                        << "  model_dirs: [" << work << "/models]\n"
                        << extra;
}

}  // namespace benchfleet::testing
