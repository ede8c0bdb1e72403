// AgentGatewayService: the gRPC AgentGateway, on gRPC's callback API: a Connect stream holds no
// thread while it waits. Each stream's messages are handled in order, one at a time, on a small
// pool of threads shared by all streams (StreamWork): Hello first (revision check, machine upsert,
// Welcome), then record batches (prepared there, stored by the GroupCommitter, acknowledged after
// COMMIT, so agents may pipeline batches), heartbeats and task updates. What goes down a stream
// (Welcome, Acks, fleet tasks) is queued and written one message at a time by the stream itself,
// never waited for: each accepted stream registers a StreamTaskSink with the Scheduler, and the
// records of each committed group go to Scheduler::RunsStored off the committer's thread. So the
// coordinator's threads do not grow with the agents connected (issue 21: two threads per agent
// before). Owned by CoordinatorServer; thread-safe.
#ifndef BENCHFLEET_COORDINATOR_INGEST_AGENT_GATEWAY_SERVICE_H_
#define BENCHFLEET_COORDINATOR_INGEST_AGENT_GATEWAY_SERVICE_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "absl/time/time.h"
#include "benchfleet/v1/gateway.grpc.pb.h"
#include "grpcpp/support/server_callback.h"
#include "common/clock.h"
#include "coordinator/ingest/connected_agents.h"
#include "coordinator/ingest/group_committer.h"
#include "coordinator/ingest/stored_runs_relay.h"
#include "coordinator/metrics/coordinator_metrics.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/auth/authorizer.h"
#include "coordinator/store/run_store.h"

namespace benchfleet::coordinator {

class StreamWork;

class AgentGatewayService final : public v1::AgentGateway::CallbackService {
 public:
  // The pointers must outlive the service. `scheduler` may be null: no fleet tasks then (task
  // updates are ignored). `authorizer` checks each stream: with enforcement on, the stream is the
  // certificate's agent's only (its Hello and every record name that agent).
  AgentGatewayService(RunStore* store, GroupCommitter* committer, ConnectedAgents* agents,
                      CoordinatorMetrics* metrics, Clock* clock, Scheduler* scheduler,
                      const Authorizer* authorizer);
  ~AgentGatewayService() override;

  // The stream of one agent. Reports itself to the metrics (RpcHandled) when it ends: the
  // metrics interceptor skips this method, since an intercepted stream pays an extra completion
  // queue round trip on every message (see metrics/rpc_metrics_interceptor.h).
  grpc::ServerBidiReactor<v1::AgentMessage, v1::CoordinatorMessage>* Connect(
      grpc::CallbackServerContext* context) override;

  // "/benchfleet.v1.AgentGateway/Connect".
  static std::string ConnectMethodName();

  // Refuses new streams, gives each open one up to `flush_timeout` to write what it has queued
  // (the Acks of the last group), then cancels it; hands the last stored records to the
  // scheduler and the metrics. Call after GroupCommitter::Stop() and before
  // grpc::Server::Shutdown().
  void Shutdown(absl::Duration flush_timeout);

  // Cancels every open stream of `agent_id` on this coordinator (a revoked agent); returns how
  // many.
  int CloseStreamsOf(const std::string& agent_id);

 private:
  struct Stream;
  class Reactor;

  // Records the machine of a Hello; when the database cannot take it now, the committer will.
  void RecordMachine(const v1::Hello& hello);
  // Prepares one batch and hands it to the committer (or acks it at once when nothing is left
  // to store). Not OK only when the committer is stopping.
  absl::Status HandleBatch(const std::shared_ptr<Stream>& stream, const v1::RecordBatch& batch);
  // The stream's steps, each run in the stream's order on the StreamWork pool: the first
  // (authorization, then the first read), each message read (ok: false at the end of the
  // client's messages or of the call), and the end (ends the stream once, then Finish once its
  // queued messages are written).
  void Begin(const std::shared_ptr<Stream>& stream);
  void OnRead(const std::shared_ptr<Stream>& stream, bool ok);
  // Handles the Hello read first: false when the stream ended on it.
  bool HandleFirstHello(const std::shared_ptr<Stream>& stream);
  void End(const std::shared_ptr<Stream>& stream, grpc::Status status);
  // After the agent half-closed: ends the stream once every batch it sent was acknowledged.
  void EndWhenAcked(const std::shared_ptr<Stream>& stream);
  // The call was cancelled (the agent went away, a revocation, shutdown): ends the stream now.
  void OnCancelled(const std::shared_ptr<Stream>& stream);

  RunStore* const store_;
  GroupCommitter* const committer_;
  ConnectedAgents* const agents_;
  CoordinatorMetrics* const metrics_;
  Clock* const clock_;
  Scheduler* const scheduler_;
  const Authorizer* const authorizer_;
  // Hands each committed group's stored records to the metrics (RunStored) and, for those of
  // fleet tasks, to the scheduler, off the committer's thread.
  std::unique_ptr<StoredRunsRelay> stored_runs_;

  // The threads that run every stream's steps: a handful, whatever the number of streams.
  std::unique_ptr<StreamWork> work_;

  std::atomic<bool> shutting_down_{false};
  std::mutex mu_;
  std::set<std::shared_ptr<Stream>> streams_;  // guarded by mu_: the open ones
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_INGEST_AGENT_GATEWAY_SERVICE_H_
