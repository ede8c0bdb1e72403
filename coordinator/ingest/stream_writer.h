// StreamWriter: the one writer of a Connect stream. gRPC allows a single Write at a time, and
// Acks come from the committer thread, which must never wait on a slow agent: messages are
// queued here and written, in order, by a thread of the stream's own. Owned by the stream's
// handler; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_INGEST_STREAM_WRITER_H_
#define BENCHFLEET_COORDINATOR_INGEST_STREAM_WRITER_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "absl/time/time.h"
#include "benchfleet/v1/gateway.pb.h"

namespace benchfleet::coordinator {

class StreamWriter {
 public:
  // `write` sends one message and returns false once the stream is broken.
  explicit StreamWriter(std::function<bool(const v1::CoordinatorMessage&)> write);
  ~StreamWriter();  // Close()
  StreamWriter(const StreamWriter&) = delete;
  StreamWriter& operator=(const StreamWriter&) = delete;

  // Queues `message`. False (and dropped) once closed or broken.
  bool Send(v1::CoordinatorMessage message);

  // Waits until everything queued so far was written (or the stream broke), at most `timeout`
  // of real time. True when the queue is empty.
  bool WaitUntilWritten(absl::Duration timeout);

  // Writes what is queued, then stops; later Sends are dropped. After it returns, `write` is
  // never called again.
  void Close();

 private:
  void Loop();

  const std::function<bool(const v1::CoordinatorMessage&)> write_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<v1::CoordinatorMessage> queue_;  // guarded by mu_
  bool writing_ = false;                      // guarded by mu_: a Write is in progress
  bool closed_ = false;                       // guarded by mu_
  bool broken_ = false;                       // guarded by mu_
  std::thread thread_;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_INGEST_STREAM_WRITER_H_
