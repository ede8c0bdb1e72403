// GroupCommitter: one thread that stores everything the streams have prepared since its last
// transaction in the next one, so records arriving from all agents within a commit's time share
// a single COPY and a single fsync. Also applies the machine updates (heartbeats, Hellos that
// met an unreachable database) off the stream threads. While the store fails it keeps the work
// and retries with backoff; nothing is reported before it is committed. Owned by
// CoordinatorServer; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_INGEST_GROUP_COMMITTER_H_
#define BENCHFLEET_COORDINATOR_INGEST_GROUP_COMMITTER_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/clock.h"
#include "coordinator/metrics/coordinator_metrics.h"
#include "coordinator/store/run_store.h"

namespace benchfleet::coordinator {

// One unit of work: the prepared runs of one batch and what to do once they are committed.
struct CommitWork {
  PreparedRuns runs;

  // Called on the committer thread after the transaction holding these runs committed, with
  // one result per run. Must not block (queue the Ack, do not write it).
  std::function<void(absl::Span<const RunStoreResult>)> done;

  // Set by the owner (a stream that closed): the work is dropped unless already being stored.
  std::shared_ptr<std::atomic<bool>> cancelled;
};

struct GroupCommitterOptions {
  // At most this many runs per transaction (a bigger single batch still goes whole).
  size_t max_group_runs = 50000;

  // Submit blocks while this many bytes of rows wait, so a slow database slows the agents
  // (through gRPC flow control) instead of filling memory.
  size_t max_pending_bytes = size_t{512} << 20;

  // Retry delays after a failed transaction: doubled each time up to the maximum.
  absl::Duration initial_retry_delay = absl::Milliseconds(100);
  absl::Duration max_retry_delay = absl::Seconds(5);
};

class GroupCommitter {
 public:
  GroupCommitter(RunStore* store, Clock* clock, CoordinatorMetrics* metrics,
                 GroupCommitterOptions options = {});
  ~GroupCommitter();  // Stop()
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  void Start();

  // Queues work for the next group. Blocks while too much is pending. UNAVAILABLE once stopped.
  absl::Status Submit(std::shared_ptr<CommitWork> work);

  // Queues a machine upsert (a Hello the database could not take at once) / a last_seen update;
  // several for one agent collapse into one.
  void UpsertMachineLater(MachineUpdate update);
  void TouchMachineLater(const std::string& agent_id, absl::Time seen);

  // Lets the transaction in progress finish (its `done` callbacks run), drops what is still
  // pending (never reported: agents re-send unacknowledged batches) and joins the thread.
  void Stop();

  // Number of pieces of work waiting (not counting the group being stored). For tests.
  size_t pending();

 private:
  struct MachineWork {
    std::optional<MachineUpdate> upsert;
    absl::Time seen = absl::InfinitePast();
  };

  void Loop();
  // Takes the next group off pending_ (cancelled work is dropped). Requires mu_ held.
  std::vector<std::shared_ptr<CommitWork>> TakeGroupLocked();
  absl::Status ApplyMachines(std::map<std::string, MachineWork>* machines);
  absl::Status StoreGroup(const std::vector<std::shared_ptr<CommitWork>>& group);
  // Sleeps `delay` on the clock, in slices, returning early once stopping.
  void SleepUnlessStopping(absl::Duration delay);

  RunStore* const store_;
  Clock* const clock_;
  CoordinatorMetrics* const metrics_;
  const GroupCommitterOptions options_;

  std::mutex mu_;
  std::condition_variable work_cv_;   // pending_ or machines_ gained work, or stopping
  std::condition_variable space_cv_;  // pending_bytes_ went down, or stopping
  std::deque<std::shared_ptr<CommitWork>> pending_ ABSL_GUARDED_BY(mu_);
  size_t pending_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, MachineWork> machines_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_INGEST_GROUP_COMMITTER_H_
