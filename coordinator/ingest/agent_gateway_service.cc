#include "coordinator/ingest/agent_gateway_service.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/conditions_fingerprint.h"
#include "coordinator/grpc_status.h"
#include "coordinator/ingest/batch.h"
#include "coordinator/ingest/hello.h"
#include "coordinator/ingest/stream_writer.h"
#include "coordinator/ingest/task_sink.h"
#include "coordinator/log.h"
#include "coordinator/metrics/rpc_metrics_interceptor.h"

namespace benchfleet::coordinator {

// What outlives one Connect call while its batches are in the committer: their `done`
// callbacks hold the Stream, and its writer drops what they send once the call has returned.
struct AgentGatewayService::Stream {
  Stream(grpc::ServerContext* context,
         grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>* rw)
      : context(context), writer([rw](const v1::CoordinatorMessage& m) { return rw->Write(m); }) {}

  grpc::ServerContext* const context;  // valid while the stream is in streams_
  std::string agent_id;
  // With enforcement on: the certificate's agent, which every record must name.
  std::string authenticated_agent_id;
  StreamWriter writer;
  // Shared with every CommitWork of the stream: set when the stream ends.
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);

  std::mutex mu;
  std::condition_variable cv;
  int outstanding = 0;  // guarded by mu: batches submitted and not yet acknowledged
};

namespace {

const grpc::Status& ShuttingDownStatus() {
  static const grpc::Status* status =
      new grpc::Status(grpc::StatusCode::UNAVAILABLE, "the coordinator is shutting down");
  return *status;
}

v1::CoordinatorMessage WelcomeMessage(const v1::Hello& hello, const absl::Status& verdict) {
  v1::CoordinatorMessage message;
  *message.mutable_welcome() = MakeWelcome(hello, verdict);
  return message;
}

}  // namespace

AgentGatewayService::AgentGatewayService(RunStore* store, GroupCommitter* committer,
                                         ConnectedAgents* agents, CoordinatorMetrics* metrics,
                                         Clock* clock, Scheduler* scheduler,
                                         const Authorizer* authorizer)
    : store_(store),
      committer_(committer),
      agents_(agents),
      metrics_(metrics),
      clock_(clock),
      scheduler_(scheduler),
      authorizer_(authorizer) {
  stored_runs_ = std::make_unique<StoredRunsRelay>([metrics, scheduler](const std::vector<v1::RunRecord>& records) {
    for (const v1::RunRecord& record : records) metrics->RunStored(record);
    // The scheduler looks at the runs of fleet tasks (those with a task_id) and skips the others.
    const bool any_task_run = std::any_of(records.begin(), records.end(),
                                          [](const v1::RunRecord& r) { return !r.task_id().empty(); });
    if (scheduler != nullptr && any_task_run) scheduler->RunsStored(records);
  });
}

AgentGatewayService::~AgentGatewayService() = default;

void AgentGatewayService::RecordMachine(const v1::Hello& hello) {
  MachineUpdate update;
  update.agent_id = hello.agent_id();
  update.conditions = hello.conditions();
  update.agent_version =
      hello.agent_version().empty() ? hello.conditions().agent_version() : hello.agent_version();
  if (update.conditions.fingerprint().empty()) {
    update.conditions.set_fingerprint(ConditionsFingerprint(update.conditions));
  }
  update.seen = clock_->Now();
  absl::Status status = store_->UpsertMachine(update);
  if (!status.ok()) {
    metrics_->DatabaseError("upsert_machine");
    // The stream goes on: its records wait for the database like everyone's.
    Log(absl::StrCat("machine ", update.agent_id, " will be recorded later: ", status.ToString()));
    committer_->UpsertMachineLater(std::move(update));
  }
}

absl::Status AgentGatewayService::HandleBatch(const std::shared_ptr<Stream>& stream,
                                              const v1::RecordBatch& batch) {
  metrics_->BatchReceived(static_cast<uint64_t>(batch.records_size()));
  auto prepared = std::make_shared<PreparedBatch>(PrepareBatch(batch, *store_, stream->authenticated_agent_id));
  for (const std::string& code : prepared->rejection_codes) metrics_->RecordRejected(code);
  if (prepared->runs.runs.empty()) {
    v1::CoordinatorMessage message;
    *message.mutable_ack() = BuildAck(*prepared, {});
    stream->writer.Send(std::move(message));
    return absl::OkStatus();
  }

  auto work = std::make_shared<CommitWork>();
  work->runs = std::move(prepared->runs);
  work->cancelled = stream->cancelled;
  CoordinatorMetrics* metrics = metrics_;
  StoredRunsRelay* relay = stored_runs_.get();
  work->done = [stream, prepared, metrics, relay](absl::Span<const RunStoreResult> results) {
    v1::CoordinatorMessage message;
    v1::Ack& ack = *message.mutable_ack() = BuildAck(*prepared, results);
    metrics->RecordsStored(ack.stored_run_ids_size());
    metrics->RecordsDuplicated(ack.duplicate_run_ids_size());
    uint64_t conflicts = 0;
    for (const RunStoreResult& r : results) {
      if (r.outcome == StoreOutcome::kRefused) metrics->RecordRejected("refused_by_database");
      if (r.outcome == StoreOutcome::kConflict) {
        ++conflicts;
        Log(absl::StrCat("agent ", stream->agent_id, ": ", r.reason, " (not stored)"));
      }
    }
    if (conflicts > 0) metrics->RecordsConflicted(conflicts);
    stream->writer.Send(std::move(message));
    // The records parsed by PrepareBatch go on (moved, not copied) to the relay's thread: their
    // figures and the scheduler's checks cost this thread, which every agent waits on, nothing.
    // Duplicates never count: another coordinator (or an earlier send) already counted them.
    std::vector<v1::RunRecord> stored;
    for (size_t i = 0; i < results.size() && i < prepared->records.size(); ++i) {
      if (results[i].outcome == StoreOutcome::kStored) stored.push_back(std::move(prepared->records[i]));
    }
    relay->Post(std::move(stored));
    {
      std::lock_guard<std::mutex> lock(stream->mu);
      --stream->outstanding;
    }
    stream->cv.notify_all();
  };
  {
    std::lock_guard<std::mutex> lock(stream->mu);
    ++stream->outstanding;
  }
  absl::Status submitted = committer_->Submit(std::move(work));
  if (!submitted.ok()) {
    std::lock_guard<std::mutex> lock(stream->mu);
    --stream->outstanding;
  }
  return submitted;
}

void AgentGatewayService::WaitForAcks(Stream& stream) {
  std::unique_lock<std::mutex> lock(stream.mu);
  // Polled, because a client that goes away or a shutdown does not signal this condition.
  while (stream.outstanding > 0 && !stream.context->IsCancelled() && !shutting_down_) {
    stream.cv.wait_for(lock, std::chrono::milliseconds(100));
  }
}

std::string AgentGatewayService::ConnectMethodName() {
  return absl::StrCat("/", v1::AgentGateway::service_full_name(), "/Connect");
}

grpc::Status AgentGatewayService::Connect(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>* rw) {
  static const std::string* const method = new std::string(ConnectMethodName());
  grpc::Status status = ServeStream(context, rw);
  metrics_->RpcHandled(*method, StatusCodeName(status.error_code()));
  return status;
}

grpc::Status AgentGatewayService::ServeStream(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>* rw) {
  if (shutting_down_) return ShuttingDownStatus();
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(context, ConnectMethodName(), &caller); !s.ok()) return s;
  v1::AgentMessage message;
  if (!rw->Read(&message)) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "the stream ended before Hello");
  }
  if (!message.has_hello()) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "the first message on Connect must be Hello");
  }
  absl::Status verdict = CheckHello(message.hello());
  if (verdict.ok() && caller.kind == Caller::Kind::kAgent && message.hello().agent_id() != caller.agent_id) {
    verdict = absl::PermissionDeniedError(absl::StrCat("this certificate is agent ", caller.agent_id,
                                                       "'s, not agent ", message.hello().agent_id(), "'s"));
  }
  if (!verdict.ok()) {
    rw->Write(WelcomeMessage(message.hello(), verdict));
    return ToGrpcStatus(verdict);
  }

  auto stream = std::make_shared<Stream>(context, rw);
  stream->agent_id = message.hello().agent_id();
  if (caller.kind == Caller::Kind::kAgent) stream->authenticated_agent_id = caller.agent_id;
  RecordMachine(message.hello());
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams_.insert(stream);
  }
  agents_->Add(stream->agent_id);
  metrics_->AgentConnected(stream->agent_id);
  stream->writer.Send(WelcomeMessage(message.hello(), verdict));
  // After the Welcome, so the agent's pending tasks follow it down the stream. The sink holds
  // the stream weakly: the scheduler may keep it a moment after the stream ended.
  std::shared_ptr<StreamTaskSink> sink;
  if (scheduler_ != nullptr) {
    std::weak_ptr<Stream> weak = stream;
    sink = std::make_shared<StreamTaskSink>([weak](v1::CoordinatorMessage m) {
      std::shared_ptr<Stream> s = weak.lock();
      return s != nullptr && s->writer.Send(std::move(m));
    });
    scheduler_->AgentConnected(stream->agent_id, sink);
  }

  grpc::Status result = grpc::Status::OK;
  bool reading = true;
  while (reading && rw->Read(&message)) {
    switch (message.body_case()) {
      case v1::AgentMessage::kHello:
        // A later Hello updates the conditions (new driver, new labels) of the same agent.
        if (message.hello().agent_id() != stream->agent_id) {
          result = grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                absl::StrCat("this stream is agent ", stream->agent_id,
                                             "'s; a Hello for agent ", message.hello().agent_id(),
                                             " needs a stream of its own"));
          reading = false;
          break;
        }
        RecordMachine(message.hello());
        stream->writer.Send(WelcomeMessage(message.hello(), absl::OkStatus()));
        break;
      case v1::AgentMessage::kRecords:
        if (!HandleBatch(stream, message.records()).ok()) {
          result = ShuttingDownStatus();
          reading = false;
        }
        break;
      case v1::AgentMessage::kHeartbeat: {
        const absl::Time now = clock_->Now();
        committer_->TouchMachineLater(stream->agent_id, now);
        v1::CoordinatorMessage ack;
        ack.mutable_heartbeat_ack()->mutable_receive_time()->set_seconds(absl::ToUnixSeconds(now));
        ack.mutable_heartbeat_ack()->mutable_receive_time()->set_nanos(
            static_cast<int32_t>((now - absl::FromUnixSeconds(absl::ToUnixSeconds(now))) /
                                 absl::Nanoseconds(1)));
        // The lease is renewed before the ack goes: an acknowledged heartbeat has counted.
        if (scheduler_ != nullptr) scheduler_->Heartbeat(stream->agent_id);
        stream->writer.Send(std::move(ack));
        break;
      }
      case v1::AgentMessage::kTaskUpdate:
        if (scheduler_ != nullptr) scheduler_->TaskUpdated(stream->agent_id, message.task_update());
        break;
      default:
        // A newer agent's message kind: nothing to do with it here.
        break;
    }
  }
  // The agent half-closed: it may still wait for the Acks of what it sent.
  if (reading && result.ok()) WaitForAcks(*stream);

  if (sink != nullptr) scheduler_->AgentDisconnected(stream->agent_id, sink.get());
  stream->cancelled->store(true);
  stream->writer.Close();
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams_.erase(stream);
  }
  agents_->Remove(stream->agent_id);
  metrics_->AgentDisconnected(stream->agent_id);
  committer_->TouchMachineLater(stream->agent_id, clock_->Now());
  if (result.ok() && shutting_down_) return ShuttingDownStatus();
  return result;
}

int AgentGatewayService::CloseStreamsOf(const std::string& agent_id) {
  int closed = 0;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& stream : streams_) {
    if (stream->agent_id != agent_id) continue;
    stream->context->TryCancel();
    ++closed;
  }
  if (closed > 0) Log(absl::StrCat("agent ", agent_id, " revoked: closed ", closed, " stream(s)"));
  return closed;
}

void AgentGatewayService::Shutdown(absl::Duration flush_timeout) {
  std::vector<std::shared_ptr<Stream>> streams;
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutting_down_ = true;
    streams.assign(streams_.begin(), streams_.end());
  }
  const absl::Time deadline = absl::Now() + flush_timeout;
  for (const auto& stream : streams) {
    stream->writer.WaitUntilWritten(std::max(deadline - absl::Now(), absl::ZeroDuration()));
    stream->cv.notify_all();
  }
  // Only streams still registered have a live ServerContext.
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& stream : streams_) stream->context->TryCancel();
  }
  // The committer has stopped: no group will post after this.
  stored_runs_->Stop();
}

}  // namespace benchfleet::coordinator
