#include "coordinator/ingest/connected_agents.h"

namespace benchfleet::coordinator {

void ConnectedAgents::Add(const std::string& agent_id) {
  std::lock_guard<std::mutex> lock(mu_);
  ++streams_[agent_id];
}

void ConnectedAgents::Remove(const std::string& agent_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = streams_.find(agent_id);
  if (it != streams_.end() && --it->second <= 0) streams_.erase(it);
}

bool ConnectedAgents::IsConnected(const std::string& agent_id) {
  std::lock_guard<std::mutex> lock(mu_);
  return streams_.count(agent_id) > 0;
}

size_t ConnectedAgents::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return streams_.size();
}

}  // namespace benchfleet::coordinator
