#include "coordinator/ingest/stored_runs_relay.h"

#include <utility>

namespace benchfleet::coordinator {

StoredRunsRelay::StoredRunsRelay(Deliver deliver)
    : deliver_(std::move(deliver)), thread_([this] { Loop(); }) {}

StoredRunsRelay::~StoredRunsRelay() { Stop(); }

void StoredRunsRelay::Post(std::vector<v1::RunRecord> records) {
  if (records.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    queue_.push_back(std::move(records));
  }
  cv_.notify_one();
}

void StoredRunsRelay::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void StoredRunsRelay::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything was delivered
    std::vector<v1::RunRecord> records = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    deliver_(records);
    lock.lock();
  }
}

}  // namespace benchfleet::coordinator
