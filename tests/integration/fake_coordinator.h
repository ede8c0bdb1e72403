// What the tests that run `benchfleet-agent serve` without PostgreSQL share: a small in-test
// AgentGateway (a coordinator as the agent sees it) and the agent's work folder.
#ifndef BENCHFLEET_TESTS_INTEGRATION_FAKE_COORDINATOR_H_
#define BENCHFLEET_TESTS_INTEGRATION_FAKE_COORDINATOR_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "benchfleet/v1/gateway.grpc.pb.h"
#include "benchfleet/v1/record.pb.h"

namespace benchfleet::testing {

// Welcome, then (as a coordinator does on every connect) every task it was given, then an Ack
// for every record batch (a run id seen before is acknowledged as a duplicate); what it was sent
// is kept for the test. Thread-safe.
class FakeCoordinator final : public v1::AgentGateway::Service {
 public:
  // Listens on `address` (127.0.0.1:0 picks a free port; a fixed port lets a test point the
  // agent at it before it exists).
  FakeCoordinator(const std::string& address, std::vector<v1::TaskAssignment> tasks);
  ~FakeCoordinator() override;

  bool started() const { return server_ != nullptr; }
  std::string address() const;

  grpc::Status Connect(grpc::ServerContext* context,
                       grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>* stream) override;

  // Sends a message (cancel_task) on the current stream; false when there is none.
  bool Send(const v1::CoordinatorMessage& message);

  // Breaks the current stream (the agent reconnects and is sent its tasks again).
  void BreakStream();

  int sessions();
  std::vector<v1::TaskUpdate> updates();
  // The updates of one task, of one kind (accepted, refused, progress, finished).
  std::vector<v1::TaskUpdate> updates(const std::string& task_id, v1::TaskUpdate::BodyCase body);
  // Every record stored, once each, in the order received.
  std::vector<v1::RunRecord> records();

 private:
  using ServerStream = grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>;

  // One writer at a time on a stream: the handler (Welcome, tasks, Acks) and Send.
  bool Write(ServerStream* stream, const v1::CoordinatorMessage& message);

  const std::vector<v1::TaskAssignment> tasks_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  std::mutex mu_;
  int sessions_ = 0;                        // guarded by mu_
  std::mutex write_mu_;
  grpc::ServerContext* context_ = nullptr;  // guarded by mu_
  ServerStream* stream_ = nullptr;          // guarded by mu_
  std::vector<v1::TaskUpdate> updates_;     // guarded by mu_
  std::set<std::string> stored_;            // guarded by mu_
  std::vector<v1::RunRecord> records_;      // guarded by mu_
};

// A new work folder (named after `prefix`) with a model file and an agent.yaml that allows the
// llama-server simulator and that folder; `extra` is appended to agent.yaml.
struct AgentFiles {
  explicit AgentFiles(const std::string& prefix, const std::string& extra = "");
  std::string work;
  std::string model;
  std::string config;
};

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_INTEGRATION_FAKE_COORDINATOR_H_
