#include "tests/unit/agent/fake_gateway.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "benchfleet/v1/gateway.grpc.pb.h"
#include "benchfleet/v1/record.pb.h"
#include "common/version.h"
#include "tests/support/poll.h"

namespace benchfleet::agent::testing {

using ServerStream = grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>;

class FakeGateway::Service final : public v1::AgentGateway::Service {
 public:
  grpc::Status Connect(grpc::ServerContext* context, ServerStream* stream) override {
    v1::AgentMessage message;
    if (!stream->Read(&message) || !message.has_hello()) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "Hello first");
    }
    int stream_number = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stream_number = ++hellos_;
      last_hello_ = message.hello();
      Note(stream_number, message);
      cv_.notify_all();
    }
    v1::CoordinatorMessage welcome_message = WelcomeFor(message.hello());
    v1::Welcome* welcome = welcome_message.mutable_welcome();
    std::string refusal;
    {
      std::lock_guard<std::mutex> lock(mu_);
      refusal = refusal_;
    }
    welcome->set_accepted(refusal.empty());
    welcome->set_reason(refusal);
    if (!Write(stream, welcome_message)) return grpc::Status::CANCELLED;
    if (!refusal.empty()) return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, refusal);

    {
      std::lock_guard<std::mutex> lock(mu_);
      current_ = stream;
      current_context_ = context;
    }
    grpc::Status result = Serve(stream, stream_number);
    std::lock_guard<std::mutex> lock(mu_);
    current_ = nullptr;
    current_context_ = nullptr;
    held_.clear();  // their stream is gone: the agent re-sends
    return result;
  }

  static v1::CoordinatorMessage WelcomeFor(const v1::Hello& hello) {
    v1::CoordinatorMessage message;
    v1::Welcome* welcome = message.mutable_welcome();
    welcome->set_coordinator_version("fake");
    welcome->set_api_revision(kApiRevision);
    welcome->set_min_agent_api_revision(kMinAgentApiRevision);
    welcome->set_agent_id(hello.agent_id());
    welcome->set_accepted(true);
    return message;
  }

  // Keeps one line of events_ (and the Hello). Needs mu_.
  void Note(int stream_number, const v1::AgentMessage& message) {
    std::string line = "stream " + std::to_string(stream_number) + " ";
    switch (message.body_case()) {
      case v1::AgentMessage::kHello:
        line += "hello " + message.hello().conditions().fingerprint();
        all_hellos_.push_back(message.hello());
        break;
      case v1::AgentMessage::kRecords:
        line += "records " + std::to_string(message.records().records_size());
        break;
      case v1::AgentMessage::kHeartbeat:
        line += "heartbeat";
        break;
      case v1::AgentMessage::kTaskUpdate:
        line += "task_update " + message.task_update().task_id();
        break;
      default:
        line += "other";
        break;
    }
    events_.push_back(std::move(line));
  }

  grpc::Status Serve(ServerStream* stream, int stream_number) {
    v1::AgentMessage message;
    while (stream->Read(&message)) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        Note(stream_number, message);
        cv_.notify_all();
      }
      if (message.has_hello()) {
        Write(stream, WelcomeFor(message.hello()));
        continue;
      }
      if (message.has_heartbeat()) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          heartbeats_.push_back(message.heartbeat());
          cv_.notify_all();
        }
        v1::CoordinatorMessage answer;
        answer.mutable_heartbeat_ack()->mutable_receive_time()->set_seconds(1);
        Write(stream, answer);
        continue;
      }
      if (message.has_task_update()) {
        std::lock_guard<std::mutex> lock(mu_);
        task_updates_.push_back(message.task_update());
        cv_.notify_all();
        continue;
      }
      if (!message.has_records()) continue;
      v1::CoordinatorMessage answer;
      v1::Ack* ack = answer.mutable_ack();
      ack->set_batch_id(message.records().batch_id());
      std::unique_lock<std::mutex> lock(mu_);
      ++batches_;
      batch_sizes_.push_back(message.records().records_size());
      records_received_ += message.records().records_size();
      const bool drop = drop_batches_ > 0;
      if (drop) --drop_batches_;
      if (!drop || drop_store_first_) {
        for (int i = 0; i < message.records().records_size(); ++i) {
          v1::RunRecord record;
          record.ParseFromString(message.records().records(i));
          auto rejected = rejects_.find(record.run_id());
          if (rejected != rejects_.end()) {
            v1::Rejection* rejection = ack->add_rejections();
            rejection->set_index(i);
            rejection->set_run_id(record.run_id());
            rejection->set_reason(rejected->second);
          } else if (stored_.insert(record.run_id()).second) {
            ack->add_stored_run_ids(record.run_id());
            stored_records_.push_back(record);
          } else {
            ack->add_duplicate_run_ids(record.run_id());
          }
        }
      }
      cv_.notify_all();
      if (drop) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "dropped by the test");
      if (hold_) {
        held_.push_back(answer);
        continue;
      }
      lock.unlock();
      Write(stream, answer);
    }
    return grpc::Status::OK;
  }

  bool Write(ServerStream* stream, const v1::CoordinatorMessage& message) {
    std::lock_guard<std::mutex> lock(write_mu_);
    return stream->Write(message);
  }

  void ReleaseAcks() {
    std::vector<v1::CoordinatorMessage> held;
    ServerStream* stream;
    {
      std::lock_guard<std::mutex> lock(mu_);
      hold_ = false;
      held.swap(held_);
      stream = current_;
      // Written under mu_ so the stream cannot end meanwhile (Connect clears current_ under it).
      for (const auto& message : held) {
        if (stream != nullptr) Write(stream, message);
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::mutex write_mu_;  // one writer at a time per stream (handler thread and ReleaseAcks)
  std::string refusal_;
  std::map<std::string, std::string> rejects_;
  int drop_batches_ = 0;
  bool drop_store_first_ = false;
  bool hold_ = false;
  std::vector<v1::CoordinatorMessage> held_;
  ServerStream* current_ = nullptr;
  grpc::ServerContext* current_context_ = nullptr;
  int hellos_ = 0;
  v1::Hello last_hello_;
  std::vector<std::string> events_;
  std::vector<v1::Hello> all_hellos_;
  int batches_ = 0;
  std::vector<size_t> batch_sizes_;
  int records_received_ = 0;
  std::set<std::string> stored_;
  std::vector<v1::RunRecord> stored_records_;
  std::vector<v1::Heartbeat> heartbeats_;
  std::vector<v1::TaskUpdate> task_updates_;
};

struct FakeGateway::Server {
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

FakeGateway::FakeGateway() : service_(std::make_unique<Service>()), server_(std::make_unique<Server>()) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &server_->port);
  builder.RegisterService(service_.get());
  server_->server = builder.BuildAndStart();
}

FakeGateway::~FakeGateway() {
  server_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  server_->server->Wait();
}

std::string FakeGateway::address() const { return "127.0.0.1:" + std::to_string(server_->port); }

void FakeGateway::Refuse(std::string reason) {
  std::lock_guard<std::mutex> lock(service_->mu_);
  service_->refusal_ = std::move(reason);
}

void FakeGateway::Reject(std::string run_id, std::string reason) {
  std::lock_guard<std::mutex> lock(service_->mu_);
  service_->rejects_[std::move(run_id)] = std::move(reason);
}

void FakeGateway::DropOnNextBatches(int n, bool store_first) {
  std::lock_guard<std::mutex> lock(service_->mu_);
  service_->drop_batches_ = n;
  service_->drop_store_first_ = store_first;
}

void FakeGateway::HoldAcks() {
  std::lock_guard<std::mutex> lock(service_->mu_);
  service_->hold_ = true;
}

void FakeGateway::ReleaseAcks() { service_->ReleaseAcks(); }

void FakeGateway::DropCurrentStream() {
  std::lock_guard<std::mutex> lock(service_->mu_);
  if (service_->current_context_ != nullptr) service_->current_context_->TryCancel();
}

int FakeGateway::hellos() {
  std::lock_guard<std::mutex> lock(service_->mu_);
  return service_->hellos_;
}

std::vector<std::string> FakeGateway::events() {
  std::lock_guard<std::mutex> lock(service_->mu_);
  return service_->events_;
}

std::vector<v1::Hello> FakeGateway::all_hellos() {
  std::lock_guard<std::mutex> lock(service_->mu_);
  return service_->all_hellos_;
}

v1::Hello FakeGateway::last_hello() {
  std::lock_guard<std::mutex> lock(service_->mu_);
  return service_->last_hello_;
}

int FakeGateway::batches() {
  std::lock_guard<std::mutex> lock(service_->mu_);
  return service_->batches_;
}

std::vector<size_t> FakeGateway::batch_sizes() {
  std::lock_guard<std::mutex> lock(service_->mu_);
  return service_->batch_sizes_;
}

int FakeGateway::records_received() {
  std::lock_guard<std::mutex> lock(service_->mu_);
  return service_->records_received_;
}

std::set<std::string> FakeGateway::stored() {
  std::lock_guard<std::mutex> lock(service_->mu_);
  return service_->stored_;
}

std::vector<v1::RunRecord> FakeGateway::stored_records() {
  std::lock_guard<std::mutex> lock(service_->mu_);
  return service_->stored_records_;
}

std::vector<v1::Heartbeat> FakeGateway::heartbeats() {
  std::lock_guard<std::mutex> lock(service_->mu_);
  return service_->heartbeats_;
}

std::vector<v1::TaskUpdate> FakeGateway::task_updates() {
  std::lock_guard<std::mutex> lock(service_->mu_);
  return service_->task_updates_;
}

bool FakeGateway::SendToAgent(const v1::CoordinatorMessage& message) {
  std::lock_guard<std::mutex> lock(service_->mu_);
  // Written under mu_ so the stream cannot end meanwhile (Connect clears current_ under it).
  if (service_->current_ == nullptr) return false;
  return service_->Write(service_->current_, message);
}

bool FakeGateway::WaitFor(const std::function<bool()>& condition, absl::Duration timeout) {
  return ::benchfleet::testing::PollUntil(condition, timeout, absl::Milliseconds(5));
}

}  // namespace benchfleet::agent::testing
