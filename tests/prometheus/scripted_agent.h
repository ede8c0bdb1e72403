// ScriptedAgent: an agent reduced to its Connect stream (a plain gRPC client of AgentGateway)
// whose every message the test writes itself: it sends Hello, keeps the tasks it is assigned,
// and sends the records, task updates and raw (even malformed) batches the test gives it, for
// the alert scenarios of prometheus_live_test. Thread-safe; one stream at a time.
#ifndef BENCHFLEET_TESTS_PROMETHEUS_SCRIPTED_AGENT_H_
#define BENCHFLEET_TESTS_PROMETHEUS_SCRIPTED_AGENT_H_

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "benchfleet/v1/gateway.grpc.pb.h"
#include "benchfleet/v1/record.pb.h"

namespace benchfleet::testing {

class ScriptedAgent {
 public:
  ScriptedAgent(std::string address, std::string agent_id, std::map<std::string, std::string> labels);
  ~ScriptedAgent();  // Disconnect()
  ScriptedAgent(const ScriptedAgent&) = delete;
  ScriptedAgent& operator=(const ScriptedAgent&) = delete;

  // Opens the stream, sends Hello and waits for an accepted Welcome.
  bool Connect(absl::Duration timeout = absl::Seconds(10));
  void Disconnect();

  // Waits for the first TaskAssignment; nullopt on timeout.
  std::optional<v1::TaskAssignment> WaitForAssignment(absl::Duration timeout);

  void Accept(const std::string& task_id, uint32_t runs_total);
  // Sends one RecordBatch of these serialized records (anything: the gateway judges them).
  void SendBatch(const std::vector<std::string>& serialized_records);
  void Send(const std::vector<v1::RunRecord>& records);
  void Finish(const std::string& task_id, bool ok, uint32_t runs_done, uint32_t runs_failed,
              const std::string& message);

  // Waits until the Acks named at least this many stored / rejected records.
  bool WaitForAcked(size_t stored, size_t rejected, absl::Duration timeout);

  const std::string& agent_id() const { return agent_id_; }

 private:
  void ReadLoop();
  bool Write(const v1::AgentMessage& message);

  const std::string agent_id_;
  const std::map<std::string, std::string> labels_;
  std::unique_ptr<v1::AgentGateway::Stub> stub_;

  std::mutex write_mu_;  // one Write at a time
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::AgentMessage, v1::CoordinatorMessage>> stream_;
  std::thread reader_;
  uint64_t next_batch_ = 1;  // guarded by write_mu_

  std::mutex mu_;
  std::condition_variable cv_;
  bool welcomed_ = false;                        // guarded by mu_
  std::vector<v1::TaskAssignment> assignments_;  // guarded by mu_
  size_t stored_ = 0;                            // guarded by mu_
  size_t rejected_ = 0;                          // guarded by mu_
};

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_PROMETHEUS_SCRIPTED_AGENT_H_
