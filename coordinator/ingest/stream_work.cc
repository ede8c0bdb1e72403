#include "coordinator/ingest/stream_work.h"

#include <algorithm>

namespace benchfleet::coordinator {

StreamWork::StreamWork(int threads) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { Loop(); });
}

StreamWork::~StreamWork() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void StreamWork::Submit(std::function<void()> step) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(step));
  }
  cv_.notify_one();
}

void StreamWork::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> step = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    step();
    lock.lock();
  }
}

}  // namespace benchfleet::coordinator
