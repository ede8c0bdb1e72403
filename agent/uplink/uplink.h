// Uplink: drains a RecordQueue (the outbox) to the coordinator over AgentGateway.Connect. Hello,
// then batches of records with several in flight; each Ack drops its records from the queue (or
// moves rejected ones aside); heartbeats carry the queue depth. A broken stream is reopened with
// exponential backoff and full jitter (to the next coordinator when several are given), and
// everything unacknowledged is sent again. A Welcome with accepted=false stops it for good, with
// the coordinator's reason. Tasks travel on the same
// stream: assign_task / cancel_task from the coordinator go to the options' callbacks, and
// SendTaskUpdate queues TaskUpdates for it (kept until a stream takes them, across reconnects).
// AnnounceConditions tells the coordinator of conditions other than the Hello's (a series'
// finished conditions, whose fingerprint its records carry) with a later Hello on the stream.
// Owned by the agent's serve/simulate/import command (or a test/benchmark); thread-safe. gRPC
// stays in uplink.cc so that including this header is cheap.
#ifndef BENCHFLEET_AGENT_UPLINK_UPLINK_H_
#define BENCHFLEET_AGENT_UPLINK_UPLINK_H_

#include <grpcpp/security/credentials.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/metrics/agent_metrics.h"
#include "agent/outbox/record_queue.h"
#include "agent/uplink/backoff.h"
#include "benchfleet/v1/conditions.pb.h"
#include "benchfleet/v1/fleet.pb.h"
#include "common/clock.h"

namespace benchfleet::agent {

struct UplinkOptions {
  // The coordinator's AgentGateway, "host:port" (any gRPC target), or several separated by commas
  // (common/grpc_channel.h SplitCoordinatorAddresses): each attempt goes to one of them, the first
  // first, and the next attempt after a failed one or a broken stream goes to the next (failover).
  std::string target;
  std::string agent_id;
  // Sent in the Hello that opens every stream: the agent's base conditions (a series' own go
  // with AnnounceConditions).
  v1::MachineConditions conditions;
  // Drives backoff, pacing and heartbeats; nullptr means SystemClock().
  Clock* clock = nullptr;

  // Records per RecordBatch, and payload bytes per batch (kept under gRPC's default 4 MiB
  // receive limit; a single larger record still goes alone).
  size_t max_batch = 256;
  size_t max_batch_bytes = 3u << 20;
  // Batches sent and not yet acknowledged, per stream.
  size_t max_in_flight = 4;
  // Records per second; 0 means as fast as the coordinator acknowledges.
  double send_rate = 0;

  absl::Duration heartbeat_interval = absl::Seconds(10);
  // A stream on which nothing arrives for this long (by the clock) is given up and reopened.
  absl::Duration silence_timeout = absl::Seconds(30);
  // Real time allowed between opening a stream and the coordinator's Welcome.
  absl::Duration welcome_timeout = absl::Seconds(10);

  BackoffPolicy backoff;
  // Uniform draws in [0, 1] for the backoff's jitter; empty means random.
  std::function<double()> jitter;
  // Consecutive attempts that end without a Welcome before giving up with UNAVAILABLE; 0 never
  // gives up (serve). One-shot commands (import, simulate) set a few.
  int max_connect_failures = 0;

  // How to reach the coordinator (TLS with the agent's certificate, or plaintext on loopback:
  // common/grpc_channel.h); nullptr: plaintext.
  std::shared_ptr<grpc::ChannelCredentials> credentials;

  // Connection events and problems, one line each, for the operator; empty means silent.
  std::function<void(std::string_view)> log;

  // Told when a stream is accepted or ends and when records are sent (serve's /metrics);
  // nullptr counts nothing. Must outlive the Uplink.
  AgentMetrics* metrics = nullptr;

  // Tasks from the coordinator (CoordinatorMessage assign_task / cancel_task). Called on the
  // stream's reading thread, without the uplink's lock: they must return quickly (queue the
  // work) and may call SendTaskUpdate. Unset: the messages are ignored (logged).
  std::function<void(const v1::TaskAssignment&)> on_assign_task;
  std::function<void(const v1::TaskCancel&)> on_cancel_task;
};

struct UplinkRejection {
  std::string run_id;
  std::string reason;
};

struct UplinkStats {
  uint64_t stored = 0;      // records the coordinator stored
  uint64_t duplicates = 0;  // records it had already
  uint64_t rejected = 0;    // records it refused (see rejections)
  uint64_t records_sent = 0;  // including re-sends
  uint64_t batches_sent = 0;
  uint64_t heartbeats_sent = 0;
  uint64_t heartbeat_acks = 0;
  uint64_t sessions = 0;          // streams that got a Welcome
  uint64_t connect_failures = 0;  // attempts that ended without one
  uint64_t task_updates_sent = 0;  // written on a stream (re-sends after a reconnect included)
  uint64_t conditions_announced = 0;  // Hellos of AnnounceConditions written (re-announcements included)
  bool connected = false;
  std::string coordinator_version;
  std::string coordinator;  // the address of the last stream that got a Welcome
  std::vector<UplinkRejection> rejections;
};

class Uplink {
 public:
  // queue must outlive the Uplink.
  Uplink(UplinkOptions options, RecordQueue* queue);
  ~Uplink();  // Stop()s
  Uplink(const Uplink&) = delete;
  Uplink& operator=(const Uplink&) = delete;

  // Starts the connection thread. INVALID_ARGUMENT for bad options; FAILED_PRECONDITION when
  // already started.
  absl::Status Start();

  // Closes the stream and joins the thread. Unacknowledged records stay in the queue. Idempotent.
  void Stop();

  // Blocks until the queue is empty (OK), the uplink gave up (its error: FAILED_PRECONDITION when
  // the coordinator refused the agent, UNAVAILABLE when it could not be reached), Stop() was
  // called (CANCELLED) or timeout of real time passed (DEADLINE_EXCEEDED).
  absl::Status WaitUntilDrained(absl::Duration timeout);

  // While paused, no record batch is sent (batches already written finish; heartbeats, which
  // keep the stream alive, and Acks go on). The runner pauses the uplink during each timed run so
  // that sending never competes with the run; records queued meanwhile go when it resumes. May
  // be called before Start().
  void SetPaused(bool paused);

  // The credentials of the next streams (a renewed certificate, agent/uplink/enrollment.h); the
  // open stream goes on with those it was opened with.
  void SetCredentials(std::shared_ptr<grpc::ChannelCredentials> credentials);

  // Queues a TaskUpdate for the coordinator; it is written on the current stream, or on the next
  // one after a reconnect. Updates are written in the order given, except that a progress update
  // replaces a progress update of the same task that is still waiting (only the latest matters);
  // accepted, refused and finished are never dropped: an update whose write fails is written again
  // on the next stream. Not paused by SetPaused (they are small and come between runs). May be
  // called before Start() and from any thread.
  void SendTaskUpdate(v1::TaskUpdate update);

  // Returns how many task updates wait for a stream.
  size_t pending_task_updates();

  // Tells the coordinator of conditions its Hello did not carry (a series' finished conditions,
  // with the backend's version and attributes: the fingerprint its records carry), so that its
  // `conditions` table holds every fingerprint the agent's records refer to. Written as a later
  // Hello on the stream (same agent id, version and API revision; the coordinator answers with a
  // Welcome) as soon as the stream allows, before any record batch queued after this call; and
  // written again on every later stream, after its opening Hello and Welcome, so a partition
  // loses none. The opening Hello stays the base conditions (UplinkOptions::conditions): they say
  // what the agent is whatever series it ran. The coordinator takes the latest Hello as the
  // machine's current conditions, so each stream re-announces in the order announced, latest
  // last. At most kMaxAnnouncedConditions distinct fingerprints are kept (the oldest go first;
  // announcing a kept one again makes it the latest); announcing the latest one again does
  // nothing. Not paused by SetPaused. May be called before Start() and from any thread.
  static constexpr size_t kMaxAnnouncedConditions = 16;
  void AnnounceConditions(const v1::MachineConditions& conditions);

  // OK while running or stopped normally; the error it gave up with otherwise.
  absl::Status status();

  UplinkStats stats();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_UPLINK_UPLINK_H_
