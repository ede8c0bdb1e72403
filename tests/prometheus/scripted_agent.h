// ScriptedAgent: an agent reduced to its Connect stream (tests/support/agent_stream.h) whose
// every message the test writes itself: it sends Hello, keeps the tasks it is assigned,
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
#include "tests/support/agent_stream.h"

namespace benchfleet::testing {

class ScriptedAgent {
 public:
  ScriptedAgent(std::string address, std::string agent_id, std::map<std::string, std::string> labels);
  ~ScriptedAgent();  // Disconnect()
  ScriptedAgent(const ScriptedAgent&) = delete;
  ScriptedAgent& operator=(const ScriptedAgent&) = delete;

  // Opens the stream, sends Hello and waits for an accepted Welcome.
  bool Connect(absl::Duration timeout = absl::Seconds(10)) { return stream_.Connect(timeout); }
  void Disconnect() { stream_.Disconnect(); }

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

  const std::string& agent_id() const { return stream_.agent_id(); }

 private:
  // Every message from the coordinator, on the stream's reader thread.
  void OnMessage(const v1::CoordinatorMessage& message);

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<v1::TaskAssignment> assignments_;  // guarded by mu_
  size_t stored_ = 0;                            // guarded by mu_
  size_t rejected_ = 0;                          // guarded by mu_

  AgentStream stream_;  // last: its reader thread calls OnMessage until it is destroyed
};

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_PROMETHEUS_SCRIPTED_AGENT_H_
