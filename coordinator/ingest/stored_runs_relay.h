// StoredRunsRelay: hands the records stored by each committed group to the metrics
// (CoordinatorMetrics::RunStored) and the scheduler (Scheduler::RunsStored counts flags per task
// and checks regressions, which reads the database) on a thread of its own, so the group
// committer's thread, which calls Post() right after COMMIT, never waits for them. Owned by
// AgentGatewayService; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_INGEST_STORED_RUNS_RELAY_H_
#define BENCHFLEET_COORDINATOR_INGEST_STORED_RUNS_RELAY_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "benchfleet/v1/record.pb.h"

namespace benchfleet::coordinator {

class StoredRunsRelay {
 public:
  using Deliver = std::function<void(const std::vector<v1::RunRecord>&)>;

  // Starts the thread that calls `deliver`, one group at a time, in the order posted.
  explicit StoredRunsRelay(Deliver deliver);
  ~StoredRunsRelay();  // Stop()
  StoredRunsRelay(const StoredRunsRelay&) = delete;
  StoredRunsRelay& operator=(const StoredRunsRelay&) = delete;

  // Queues the stored records of one group; never blocks. Dropped after Stop().
  void Post(std::vector<v1::RunRecord> records);

  // Delivers what is queued, then joins the thread. Idempotent.
  void Stop();

 private:
  void Loop();

  const Deliver deliver_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<v1::RunRecord>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_INGEST_STORED_RUNS_RELAY_H_
