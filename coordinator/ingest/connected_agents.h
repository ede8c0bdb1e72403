// Which agents have a Connect stream open to this coordinator right now (ListMachines'
// `connected`). Filled by the gateway, read by the admin service. Thread-safe. An agent that
// reconnects may briefly hold two streams: it stays connected until both have closed.
#ifndef BENCHFLEET_COORDINATOR_INGEST_CONNECTED_AGENTS_H_
#define BENCHFLEET_COORDINATOR_INGEST_CONNECTED_AGENTS_H_

#include <map>
#include <mutex>
#include <string>

namespace benchfleet::coordinator {

class ConnectedAgents {
 public:
  void Add(const std::string& agent_id);
  void Remove(const std::string& agent_id);
  bool IsConnected(const std::string& agent_id);

  // Distinct agents connected.
  size_t size();

 private:
  std::mutex mu_;
  std::map<std::string, int> streams_;  // guarded by mu_: open streams per agent
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_INGEST_CONNECTED_AGENTS_H_
