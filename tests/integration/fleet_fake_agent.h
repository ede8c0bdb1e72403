// FakeAgent: an agent reduced to its Connect stream (tests/support/agent_stream.h), for the
// fleet scheduling tests: Hello with labels, then it answers each TaskAssignment as told (run N
// runs: accepted, one record and one progress per run, finished; refuse; or accept and hold until
// cancelled) and answers TaskCancel with a cancelled finish. Records carry the task's task_id and
// series_id, and their tokens/s figure is declared the main figure, as a backend's declaration
// stamps it. Thread-safe; one stream at a time.
#ifndef BENCHFLEET_TESTS_INTEGRATION_FLEET_FAKE_AGENT_H_
#define BENCHFLEET_TESTS_INTEGRATION_FLEET_FAKE_AGENT_H_

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "benchfleet/v1/gateway.grpc.pb.h"
#include "tests/support/agent_stream.h"

namespace benchfleet::testing {

struct FakeAgentOptions {
  std::string address;  // the coordinator's host:port
  std::string agent_id;
  std::string hostname;  // in the Hello's conditions; "" for the agent id
  std::map<std::string, std::string> labels;

  enum class OnTask { kRun, kRefuse, kHold };
  OnTask on_task = OnTask::kRun;
  int runs = 3;                                       // kRun
  std::string refuse_reason = "backend not allowed";  // kRefuse
  std::string flag;  // a flag code every record carries (e.g. CACHE_HIT); "" for none
};

class FakeAgent {
 public:
  explicit FakeAgent(FakeAgentOptions options);
  ~FakeAgent();  // Disconnect()
  FakeAgent(const FakeAgent&) = delete;
  FakeAgent& operator=(const FakeAgent&) = delete;

  // Opens the stream, sends Hello and waits for an accepted Welcome.
  bool Connect(absl::Duration timeout = absl::Seconds(10)) { return stream_.Connect(timeout); }
  // Closes the stream (a vanished agent, as far as the coordinator can tell).
  void Disconnect() { stream_.Disconnect(); }

  void SendHeartbeat();

  std::vector<v1::TaskAssignment> assignments();
  std::vector<v1::TaskCancel> cancels();
  // Run ids the coordinator acknowledged as stored.
  size_t stored_runs();

  // Wait (real time) until at least n assignments / cancels / stored runs arrived.
  bool WaitForAssignments(size_t n, absl::Duration timeout);
  bool WaitForCancels(size_t n, absl::Duration timeout);
  bool WaitForStoredRuns(size_t n, absl::Duration timeout);
  // Waits until at least n HeartbeatAcks arrived.
  bool WaitForHeartbeatAcks(size_t n, absl::Duration timeout);

  const std::string& agent_id() const { return options_.agent_id; }

 private:
  // Every message from the coordinator, on the stream's reader thread.
  void OnMessage(const v1::CoordinatorMessage& message);
  void HandleAssignment(const v1::TaskAssignment& assignment);
  template <typename F>
  bool WaitFor(F condition, absl::Duration timeout);

  const FakeAgentOptions options_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<v1::TaskAssignment> assignments_;  // guarded by mu_
  std::set<std::pair<std::string, uint32_t>> received_;  // guarded by mu_: (task id, attempt) run
  std::vector<v1::TaskCancel> cancels_;          // guarded by mu_
  size_t stored_runs_ = 0;                       // guarded by mu_
  size_t heartbeat_acks_ = 0;                    // guarded by mu_

  AgentStream stream_;  // last: its reader thread calls OnMessage until it is destroyed
};

}  // namespace benchfleet::testing

#endif  // BENCHFLEET_TESTS_INTEGRATION_FLEET_FAKE_AGENT_H_
