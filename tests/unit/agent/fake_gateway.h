// FakeGateway: an in-test AgentGateway on 127.0.0.1 (port 0) that answers an agent's uplink the
// way a test tells it: accept or refuse the Hello, store records (a run_id once; later copies are
// duplicates), reject chosen run_ids, hold Acks back, or end a stream without acknowledging.
// It records what it saw. gRPC stays in fake_gateway.cc so tests including this compile fast.
// Thread-safe.
#ifndef BENCHFLEET_TESTS_UNIT_AGENT_FAKE_GATEWAY_H_
#define BENCHFLEET_TESTS_UNIT_AGENT_FAKE_GATEWAY_H_

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "benchfleet/v1/gateway.pb.h"
#include "benchfleet/v1/record.pb.h"

namespace benchfleet::agent::testing {

class FakeGateway {
 public:
  FakeGateway();
  ~FakeGateway();

  // "127.0.0.1:PORT".
  std::string address() const;

  // Answers every Hello with accepted=false and this reason, then ends the stream.
  void Refuse(std::string reason);
  // Rejects records with this run_id, with this reason.
  void Reject(std::string run_id, std::string reason);
  // The next n batches end their stream without an Ack; with store_first, their records are
  // stored first (a lost Ack).
  void DropOnNextBatches(int n, bool store_first);
  // While held, Acks are kept back; ReleaseAcks() sends them.
  void HoldAcks();
  void ReleaseAcks();
  // Ends the current stream (as a coordinator restart would).
  void DropCurrentStream();

  int hellos();  // the Hellos that opened a stream
  v1::Hello last_hello();
  // What each stream was sent, in order, one line per message: "stream N hello FINGERPRINT",
  // "stream N records COUNT", "stream N heartbeat", "stream N task_update TASK_ID". A Hello after
  // the first on a stream (announced conditions) is answered with an accepting Welcome, as the
  // coordinator does.
  std::vector<std::string> events();
  // Every Hello received (opening ones and later ones), in order.
  std::vector<v1::Hello> all_hellos();
  int batches();                    // batches received, dropped ones included
  std::vector<size_t> batch_sizes();
  int records_received();           // re-sends included
  std::set<std::string> stored();
  std::vector<v1::RunRecord> stored_records();  // in the order they were stored
  std::vector<v1::Heartbeat> heartbeats();
  // Task updates received, in order (re-sends included).
  std::vector<v1::TaskUpdate> task_updates();
  // Writes a message (assign_task, cancel_task) on the current stream; false when there is none.
  bool SendToAgent(const v1::CoordinatorMessage& message);

  // Waits (real time) until condition holds; false on timeout.
  bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout = absl::Seconds(10));

 private:
  class Service;
  std::unique_ptr<Service> service_;
  struct Server;
  std::unique_ptr<Server> server_;
};

}  // namespace benchfleet::agent::testing

#endif  // BENCHFLEET_TESTS_UNIT_AGENT_FAKE_GATEWAY_H_
