// StreamWork: a fixed handful of threads that run the Connect streams' steps (handle a Hello, a
// batch, a heartbeat, a task update; end a stream). A stream submits one step at a time (its
// next read is started only when a step is done), so its steps run in order while all streams
// share the threads: ten thousand connected agents cost no thread each. A step may block (the
// database, the committer's queue); it holds one of the threads meanwhile. Owned by
// AgentGatewayService; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_INGEST_STREAM_WORK_H_
#define BENCHFLEET_COORDINATOR_INGEST_STREAM_WORK_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"

namespace benchfleet::coordinator {

class StreamWork {
 public:
  // Starts `threads` threads (at least 1).
  explicit StreamWork(int threads);
  // Runs what was submitted, then joins the threads.
  ~StreamWork();
  StreamWork(const StreamWork&) = delete;
  StreamWork& operator=(const StreamWork&) = delete;

  // Queues `step`, run by one of the threads in submission order (first come, first run).
  void Submit(std::function<void()> step);

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_INGEST_STREAM_WORK_H_
