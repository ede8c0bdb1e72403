// AgentStream: an agent reduced to its Connect stream, a plain gRPC client of AgentGateway (no
// TLS: the tests' coordinators listen --plaintext on loopback). It says Hello with the given
// conditions, waits for an accepted Welcome, reads on a thread of its own and hands every message
// from the coordinator to `on_message` (on that thread), and writes one message at a time. What
// the tests' fake agents (tests/integration/fleet_fake_agent.h, tests/prometheus/scripted_agent.h)
// are built on. Thread-safe; one stream at a time.
#ifndef BENCHFLEET_TESTS_SUPPORT_AGENT_STREAM_H_
#define BENCHFLEET_TESTS_SUPPORT_AGENT_STREAM_H_

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "benchfleet/v1/gateway.grpc.pb.h"

namespace benchfleet::testing {

class AgentStream {
 public:
  using OnMessage = std::function<void(const v1::CoordinatorMessage&)>;

  // `address`: the coordinator's host:port. The Hello names `agent_id` and `agent_version` and
  // carries `conditions`.
  AgentStream(const std::string& address, std::string agent_id, std::string agent_version,
              v1::MachineConditions conditions, OnMessage on_message);
  ~AgentStream();  // Disconnect()
  AgentStream(const AgentStream&) = delete;
  AgentStream& operator=(const AgentStream&) = delete;

  // Opens the stream, sends Hello and waits for an accepted Welcome (a previous stream is closed
  // first).
  bool Connect(absl::Duration timeout);
  // Closes the stream (a vanished agent, as far as the coordinator can tell).
  void Disconnect();

  // Writes one message; false when there is no stream or it broke.
  bool Write(const v1::AgentMessage& message);
  // Writes one RecordBatch of these serialized records (anything: the gateway judges them), with
  // the next batch id (1, 2, ... per AgentStream).
  bool WriteBatch(const std::vector<std::string>& serialized_records);

  const std::string& agent_id() const { return agent_id_; }

 private:
  void ReadLoop();

  const std::string agent_id_;
  const std::string agent_version_;
  const v1::MachineConditions conditions_;
  const OnMessage on_message_;
  std::unique_ptr<v1::AgentGateway::Stub> stub_;

  std::mutex write_mu_;  // one Write at a time
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::AgentMessage, v1::CoordinatorMessage>> stream_;
  std::thread reader_;
  uint64_t next_batch_ = 1;  // guarded by write_mu_

  std::mutex mu_;
  std::condition_variable cv_;
  bool welcomed_ = false;  // guarded by mu_
};

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_SUPPORT_AGENT_STREAM_H_
