#include "coordinator/ingest/stream_writer.h"

#include "absl/time/clock.h"

namespace benchfleet::coordinator {

StreamWriter::StreamWriter(std::function<bool(const v1::CoordinatorMessage&)> write)
    : write_(std::move(write)), thread_([this] { Loop(); }) {}

StreamWriter::~StreamWriter() { Close(); }

bool StreamWriter::Send(v1::CoordinatorMessage message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_ || broken_) return false;
    queue_.push_back(std::move(message));
  }
  cv_.notify_all();
  return true;
}

bool StreamWriter::WaitUntilWritten(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  // Real time on purpose: this bounds how long shutdown waits on a network peer.
  return cv_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                      [&] { return broken_ || (queue_.empty() && !writing_); });
}

void StreamWriter::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StreamWriter::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return closed_ || !queue_.empty(); });
    if (queue_.empty() || broken_) return;  // closed and drained
    v1::CoordinatorMessage message = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    lock.unlock();
    const bool ok = write_(message);
    lock.lock();
    writing_ = false;
    if (!ok) {
      broken_ = true;
      queue_.clear();
    }
    cv_.notify_all();
  }
}

}  // namespace benchfleet::coordinator
