#include "coordinator/ingest/agent_gateway_service.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/conditions_fingerprint.h"
#include "common/grpc_status.h"
#include "coordinator/ingest/batch.h"
#include "coordinator/ingest/hello.h"
#include "coordinator/ingest/stream_work.h"
#include "coordinator/ingest/task_sink.h"
#include "coordinator/log.h"
#include "coordinator/metrics/rpc_metrics_interceptor.h"

namespace benchfleet::coordinator {

// One Connect stream's state, shared by its reactor (gRPC's, until OnDone), its steps on the
// StreamWork pool, the committer's `done` callbacks of its batches and (weakly) its task sink.
//
// Steps run one at a time, in order (Post). Writes: one StartWrite at a time, from a queue that
// never blocks the sender (an Ack from the committer's thread, a task from the scheduler); the
// reactor is called only while the stream is not finished, and Finish only when no write is in
// flight, so the reactor (deleted by gRPC after OnDone, which follows Finish and every operation)
// is never used after it is gone. gRPC is never called with `mu` held: a completion may run
// inline on the calling thread.
struct AgentGatewayService::Stream : std::enable_shared_from_this<Stream> {
  explicit Stream(grpc::CallbackServerContext* context) : context(context) {}

  grpc::CallbackServerContext* const context;  // valid until the reactor's OnDone
  Reactor* reactor = nullptr;                  // set once, before the first step
  v1::AgentMessage read;                       // the message being read or handled

  // Touched by the steps only (one at a time).
  std::string agent_id;
  // With enforcement on: the certificate's agent, which every record must name.
  std::string authenticated_agent_id;
  bool hello_seen = false;
  bool registered = false;  // in streams_ and the connected agents
  bool reads_done = false;  // the client's messages ended: waiting for its Acks
  bool ended = false;       // End ran
  std::shared_ptr<StreamTaskSink> sink;

  // Shared with every CommitWork of the stream: set when the stream ends.
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);

  // Runs `step` after the stream's earlier steps, on `work`.
  void Post(StreamWork* work, std::function<void()> step);

  // Queues `message` for writing. False (and dropped) once the stream is closing or broken.
  bool Send(v1::CoordinatorMessage message);
  // No more sends; Finish(status) once what is queued is written (or the stream broke).
  void CloseAndFinish(grpc::Status status);
  // The reactor's OnWriteDone.
  void WriteDone(bool ok);
  // Waits until everything queued was written (or the stream broke), at most `timeout` of real
  // time.
  void WaitUntilWritten(absl::Duration timeout);

  std::mutex mu;
  std::condition_variable written;
  int outstanding ABSL_GUARDED_BY(mu) = 0;  // batches submitted and not yet acknowledged

 private:
  // Starts the next write when none is in flight, or Finish when closing and drained. Called
  // with `lock` held; releases it.
  void Pump(std::unique_lock<std::mutex>& lock);

  std::deque<std::function<void()>> steps_ ABSL_GUARDED_BY(mu);
  bool step_running_ ABSL_GUARDED_BY(mu) = false;
  std::deque<v1::CoordinatorMessage> queue_ ABSL_GUARDED_BY(mu);
  v1::CoordinatorMessage in_flight_;  // the message of the StartWrite in flight
  bool writing_ ABSL_GUARDED_BY(mu) = false;
  bool closing_ ABSL_GUARDED_BY(mu) = false;
  bool broken_ ABSL_GUARDED_BY(mu) = false;
  bool finished_ ABSL_GUARDED_BY(mu) = false;
  grpc::Status final_status_ ABSL_GUARDED_BY(mu);
};

// gRPC's side of a stream: hands each completion to the stream's steps.
class AgentGatewayService::Reactor final
    : public grpc::ServerBidiReactor<v1::AgentMessage, v1::CoordinatorMessage> {
 public:
  Reactor(AgentGatewayService* service, std::shared_ptr<Stream> stream)
      : service_(service), stream_(std::move(stream)) {}

  void OnReadDone(bool ok) override {
    std::shared_ptr<Stream> stream = stream_;
    AgentGatewayService* service = service_;
    stream->Post(service->work_.get(), [service, stream, ok] { service->OnRead(stream, ok); });
  }
  void OnWriteDone(bool ok) override { stream_->WriteDone(ok); }
  void OnCancel() override {
    std::shared_ptr<Stream> stream = stream_;
    AgentGatewayService* service = service_;
    stream->Post(service->work_.get(), [service, stream] { service->OnCancelled(stream); });
  }
  void OnDone() override { delete this; }

 private:
  AgentGatewayService* const service_;
  const std::shared_ptr<Stream> stream_;
};

void AgentGatewayService::Stream::Post(StreamWork* work, std::function<void()> step) {
  {
    std::lock_guard<std::mutex> lock(mu);
    steps_.push_back(std::move(step));
    if (step_running_) return;
    step_running_ = true;
  }
  // One pool task runs the stream's steps until none is left; a step posted meanwhile joins it.
  // `self` keeps the stream alive for it.
  work->Submit([this, self = shared_from_this()] {
    while (true) {
      std::function<void()> next;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (steps_.empty()) {
          step_running_ = false;
          return;
        }
        next = std::move(steps_.front());
        steps_.pop_front();
      }
      next();
    }
  });
}

bool AgentGatewayService::Stream::Send(v1::CoordinatorMessage message) {
  std::unique_lock<std::mutex> lock(mu);
  if (closing_ || broken_) return false;
  queue_.push_back(std::move(message));
  Pump(lock);
  return true;
}

void AgentGatewayService::Stream::CloseAndFinish(grpc::Status status) {
  std::unique_lock<std::mutex> lock(mu);
  if (closing_) return;
  closing_ = true;
  final_status_ = std::move(status);
  Pump(lock);
}

void AgentGatewayService::Stream::WriteDone(bool ok) {
  std::unique_lock<std::mutex> lock(mu);
  writing_ = false;
  if (!ok) {
    broken_ = true;
    queue_.clear();
  }
  written.notify_all();
  Pump(lock);
}

void AgentGatewayService::Stream::WaitUntilWritten(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu);
  // Real time on purpose: this bounds how long shutdown waits on a network peer.
  written.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                   [&] { return broken_ || finished_ || (queue_.empty() && !writing_); });
}

void AgentGatewayService::Stream::Pump(std::unique_lock<std::mutex>& lock) {
  if (writing_ || finished_) return;
  if (!queue_.empty() && !broken_) {
    writing_ = true;
    in_flight_ = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    reactor->StartWrite(&in_flight_);  // alive: OnDone cannot come while a write is in flight
    return;
  }
  if (!closing_) return;
  finished_ = true;
  grpc::Status status = final_status_;
  written.notify_all();
  lock.unlock();
  reactor->Finish(std::move(status));  // alive: OnDone follows Finish
}

namespace {

// The streams' steps block on the database and the committer's queue at times: a few threads
// keep one slow step from holding up the others, whatever the number of streams.
constexpr int kStreamWorkThreads = 8;

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
      authorizer_(authorizer),
      work_(std::make_unique<StreamWork>(kStreamWorkThreads)) {
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
    stream->Send(std::move(message));
    return absl::OkStatus();
  }

  auto work = std::make_shared<CommitWork>();
  work->runs = std::move(prepared->runs);
  work->cancelled = stream->cancelled;
  CoordinatorMetrics* metrics = metrics_;
  StoredRunsRelay* relay = stored_runs_.get();
  AgentGatewayService* service = this;
  work->done = [stream, prepared, metrics, relay, service](absl::Span<const RunStoreResult> results) {
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
    stream->Send(std::move(message));
    // The records parsed by PrepareBatch go on (moved, not copied) to the relay's thread: their
    // figures and the scheduler's checks cost this thread, which every agent waits on, nothing.
    // Duplicates never count: another coordinator (or an earlier send) already counted them.
    std::vector<v1::RunRecord> stored;
    for (size_t i = 0; i < results.size() && i < prepared->records.size(); ++i) {
      if (results[i].outcome == StoreOutcome::kStored) stored.push_back(std::move(prepared->records[i]));
    }
    relay->Post(std::move(stored));
    bool last;
    {
      std::lock_guard<std::mutex> lock(stream->mu);
      last = --stream->outstanding == 0;
    }
    // The agent may have half-closed and be waiting for this Ack: the stream ends after it.
    if (last) stream->Post(service->work_.get(), [service, stream] { service->EndWhenAcked(stream); });
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

std::string AgentGatewayService::ConnectMethodName() {
  return absl::StrCat("/", v1::AgentGateway::service_full_name(), "/Connect");
}

grpc::ServerBidiReactor<v1::AgentMessage, v1::CoordinatorMessage>* AgentGatewayService::Connect(
    grpc::CallbackServerContext* context) {
  auto stream = std::make_shared<Stream>(context);
  auto* reactor = new Reactor(this, stream);  // deletes itself in OnDone
  stream->reactor = reactor;
  // Authorization may read the database: a step, not gRPC's thread.
  stream->Post(work_.get(), [this, stream] { Begin(stream); });
  return reactor;
}

void AgentGatewayService::Begin(const std::shared_ptr<Stream>& stream) {
  if (stream->ended) return;
  if (shutting_down_) return End(stream, ShuttingDownStatus());
  Caller caller;
  if (grpc::Status s = authorizer_->Authorize(stream->context, ConnectMethodName(), &caller); !s.ok()) {
    return End(stream, s);
  }
  if (caller.kind == Caller::Kind::kAgent) stream->authenticated_agent_id = caller.agent_id;
  stream->reactor->StartRead(&stream->read);
}

bool AgentGatewayService::HandleFirstHello(const std::shared_ptr<Stream>& stream) {
  const v1::AgentMessage& message = stream->read;
  if (!message.has_hello()) {
    End(stream, grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "the first message on Connect must be Hello"));
    return false;
  }
  absl::Status verdict = CheckHello(message.hello());
  if (verdict.ok() && !stream->authenticated_agent_id.empty() &&
      message.hello().agent_id() != stream->authenticated_agent_id) {
    verdict = absl::PermissionDeniedError(absl::StrCat("this certificate is agent ", stream->authenticated_agent_id,
                                                       "'s, not agent ", message.hello().agent_id(), "'s"));
  }
  if (!verdict.ok()) {
    stream->Send(WelcomeMessage(message.hello(), verdict));
    End(stream, ToGrpcStatus(verdict));
    return false;
  }
  stream->hello_seen = true;
  stream->agent_id = message.hello().agent_id();
  RecordMachine(message.hello());
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams_.insert(stream);
  }
  stream->registered = true;
  agents_->Add(stream->agent_id);
  metrics_->AgentConnected(stream->agent_id);
  stream->Send(WelcomeMessage(message.hello(), verdict));
  // After the Welcome, so the agent's pending tasks follow it down the stream. The sink holds
  // the stream weakly: the scheduler may keep it a moment after the stream ended.
  if (scheduler_ != nullptr) {
    std::weak_ptr<Stream> weak = stream;
    stream->sink = std::make_shared<StreamTaskSink>([weak](v1::CoordinatorMessage m) {
      std::shared_ptr<Stream> s = weak.lock();
      return s != nullptr && s->Send(std::move(m));
    });
    scheduler_->AgentConnected(stream->agent_id, stream->sink);
  }
  return true;
}

void AgentGatewayService::OnRead(const std::shared_ptr<Stream>& stream, bool ok) {
  if (stream->ended) return;
  if (!ok) {
    if (!stream->hello_seen) {
      return End(stream, grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "the stream ended before Hello"));
    }
    // The agent half-closed (or the call ended): it may still wait for the Acks of what it sent.
    stream->reads_done = true;
    return EndWhenAcked(stream);
  }
  if (!stream->hello_seen) {
    if (!HandleFirstHello(stream)) return;
    stream->reactor->StartRead(&stream->read);
    return;
  }
  const v1::AgentMessage& message = stream->read;
  switch (message.body_case()) {
    case v1::AgentMessage::kHello:
      // A later Hello updates the conditions (new driver, new labels) of the same agent.
      if (message.hello().agent_id() != stream->agent_id) {
        return End(stream, grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                        absl::StrCat("this stream is agent ", stream->agent_id,
                                                     "'s; a Hello for agent ", message.hello().agent_id(),
                                                     " needs a stream of its own")));
      }
      RecordMachine(message.hello());
      stream->Send(WelcomeMessage(message.hello(), absl::OkStatus()));
      break;
    case v1::AgentMessage::kRecords:
      if (!HandleBatch(stream, message.records()).ok()) return End(stream, ShuttingDownStatus());
      break;
    case v1::AgentMessage::kHeartbeat: {
      const absl::Time now = clock_->Now();
      committer_->TouchMachineLater(stream->agent_id, now);
      v1::CoordinatorMessage ack;
      ack.mutable_heartbeat_ack()->mutable_receive_time()->set_seconds(absl::ToUnixSeconds(now));
      ack.mutable_heartbeat_ack()->mutable_receive_time()->set_nanos(
          static_cast<int32_t>((now - absl::FromUnixSeconds(absl::ToUnixSeconds(now))) / absl::Nanoseconds(1)));
      // The lease is renewed before the ack goes: an acknowledged heartbeat has counted.
      if (scheduler_ != nullptr) scheduler_->Heartbeat(stream->agent_id);
      stream->Send(std::move(ack));
      break;
    }
    case v1::AgentMessage::kTaskUpdate:
      if (scheduler_ != nullptr) scheduler_->TaskUpdated(stream->agent_id, message.task_update());
      break;
    default:
      // A newer agent's message kind: nothing to do with it here.
      break;
  }
  stream->reactor->StartRead(&stream->read);
}

void AgentGatewayService::OnCancelled(const std::shared_ptr<Stream>& stream) {
  // As when the agent's messages end (OnRead), but without waiting for Acks that cannot be
  // written: the same status whichever of the two completions comes first.
  if (!stream->hello_seen) {
    return End(stream, grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "the stream ended before Hello"));
  }
  End(stream, grpc::Status::OK);
}

void AgentGatewayService::EndWhenAcked(const std::shared_ptr<Stream>& stream) {
  if (stream->ended || !stream->reads_done) return;
  {
    std::lock_guard<std::mutex> lock(stream->mu);
    // A client that goes away or a shutdown cancels the call: OnCancel ends it then.
    if (stream->outstanding > 0) return;
  }
  End(stream, grpc::Status::OK);
}

void AgentGatewayService::End(const std::shared_ptr<Stream>& stream, grpc::Status status) {
  if (stream->ended) return;
  stream->ended = true;
  static const std::string* const method = new std::string(ConnectMethodName());
  if (stream->sink != nullptr) scheduler_->AgentDisconnected(stream->agent_id, stream->sink.get());
  stream->cancelled->store(true);
  if (stream->registered) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      streams_.erase(stream);
    }
    agents_->Remove(stream->agent_id);
    metrics_->AgentDisconnected(stream->agent_id);
    committer_->TouchMachineLater(stream->agent_id, clock_->Now());
  }
  if (status.ok() && shutting_down_) status = ShuttingDownStatus();
  metrics_->RpcHandled(*method, StatusCodeName(status.error_code()));
  // What is queued (the Welcome of a refused Hello, the last Acks) goes before the status.
  stream->CloseAndFinish(std::move(status));
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
    stream->WaitUntilWritten(std::max(deadline - absl::Now(), absl::ZeroDuration()));
  }
  // Only streams still registered have a live ServerContext; each cancelled ends in a step
  // (OnCancel), streams waiting for their Acks included.
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& stream : streams_) stream->context->TryCancel();
  }
  // The committer has stopped: no group will post after this.
  stored_runs_->Stop();
}

}  // namespace benchfleet::coordinator
