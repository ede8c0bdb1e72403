#include "agent/uplink/uplink.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "common/string_views.h"
#include "agent/uplink/pacer.h"
#include "benchfleet/v1/gateway.grpc.pb.h"
#include "common/conditions_fingerprint.h"
#include "common/grpc_channel.h"
#include "common/grpc_status.h"
#include "common/spec/spec_limits.h"
#include "common/version.h"

namespace benchfleet::agent {
namespace {

// How often a waiting sender re-reads the Clock: heartbeats and the silence check are due by the
// injected clock, which no condition variable can wait on.
constexpr absl::Duration kClockPoll = absl::Milliseconds(50);
// Longest single Clock::SleepFor, so Stop() is honoured during a long backoff.
constexpr absl::Duration kSleepSlice = absl::Milliseconds(50);

using Stream = grpc::ClientReaderWriter<v1::AgentMessage, v1::CoordinatorMessage>;

// Returns the steady-clock time `timeout` from now; an infinite timeout is a century, which
// steady_clock can still represent.
std::chrono::steady_clock::time_point RealDeadline(absl::Duration timeout) {
  return std::chrono::steady_clock::now() +
         absl::ToChronoNanoseconds(std::min(timeout, absl::Hours(24 * 365 * 100)));
}

std::string Describe(const absl::Status& s) {
  return absl::StrCat(absl::StatusCodeToString(s.code()), ": ", s.message());
}

}  // namespace

class Uplink::Impl {
 public:
  Impl(UplinkOptions options, RecordQueue* queue)
      : options_(std::move(options)),
        queue_(queue),
        clock_(options_.clock != nullptr ? options_.clock : &SystemClock()),
        metrics_(options_.metrics != nullptr ? options_.metrics : NullAgentMetrics::Get()),
        targets_(SplitCoordinatorAddresses(options_.target)),
        backoff_(options_.backoff, options_.jitter),
        pacer_(clock_, options_.send_rate) {}

  ~Impl() { Stop(); }

  absl::Status Start() {
    if (targets_.empty()) return absl::InvalidArgumentError("uplink: no coordinator address");
    if (options_.agent_id.empty()) return absl::InvalidArgumentError("uplink: no agent id");
    if (options_.max_batch == 0 || options_.max_in_flight == 0 || options_.max_batch_bytes == 0) {
      return absl::InvalidArgumentError("uplink: max_batch, max_batch_bytes and max_in_flight must be > 0");
    }
    if (options_.send_rate < 0) return absl::InvalidArgumentError("uplink: send_rate must be >= 0");
    {
      std::lock_guard<std::mutex> l(mu_);
      if (started_) return absl::FailedPreconditionError("uplink: already started");
      started_ = true;
    }
    {
      std::lock_guard<std::mutex> l(wake_->mu);
      wake_->impl = this;
    }
    queue_->SetAppendListener([wake = wake_] {
      std::lock_guard<std::mutex> l(wake->mu);
      if (wake->impl != nullptr) wake->impl->Wake();
    });
    thread_ = std::thread([this] { Run(); });
    return absl::OkStatus();
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!started_) return;
      stopping_ = true;
      if (context_ != nullptr) context_->TryCancel();
      cv_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
    queue_->SetAppendListener({});
    // The queue may still hold a copy of the listener (called outside its lock): disarm it.
    std::lock_guard<std::mutex> l(wake_->mu);
    wake_->impl = nullptr;
  }

  void Wake() {
    std::lock_guard<std::mutex> l(mu_);
    maybe_pending_ = true;
    cv_.notify_all();
  }

  void SetCredentials(std::shared_ptr<grpc::ChannelCredentials> credentials) {
    std::lock_guard<std::mutex> l(credentials_mu_);
    options_.credentials = std::move(credentials);
  }

  void SetPaused(bool paused) {
    std::lock_guard<std::mutex> l(mu_);
    paused_ = paused;
    cv_.notify_all();
  }

  absl::Status WaitUntilDrained(absl::Duration timeout) {
    // The caller's patience: real time, not the injected clock.
    const auto deadline = RealDeadline(timeout);
    std::unique_lock<std::mutex> l(mu_);
    while (true) {
      if (!fatal_.ok()) return fatal_;
      const size_t depth = queue_->depth();
      if (depth == 0) return absl::OkStatus();
      if (finished_) {
        return absl::CancelledError(absl::StrCat("uplink stopped with ", depth, " records unacknowledged"));
      }
      if (cv_.wait_until(l, deadline) == std::cv_status::timeout) {
        return absl::DeadlineExceededError(absl::StrCat(
            queue_->depth(), " records still unacknowledged after ", absl::FormatDuration(timeout),
            " (coordinator ", options_.target, stats_.connected ? ", connected" : ", not connected",
            last_error_.empty() ? "" : "; last error: ", last_error_, ")"));
      }
    }
  }

  absl::Status status() {
    std::lock_guard<std::mutex> l(mu_);
    return fatal_;
  }

  void SendTaskUpdate(v1::TaskUpdate update) {
    std::lock_guard<std::mutex> l(mu_);
    if (update.has_progress()) {
      for (v1::TaskUpdate& waiting : task_updates_) {
        if (waiting.has_progress() && waiting.task_id() == update.task_id()) {
          waiting = std::move(update);
          return;
        }
      }
    }
    task_updates_.push_back(std::move(update));
    cv_.notify_all();
  }

  size_t pending_task_updates() {
    std::lock_guard<std::mutex> l(mu_);
    return task_updates_.size();
  }

  void AnnounceConditions(v1::MachineConditions conditions) {
    // The coordinator keys its conditions rows by fingerprint and fills in a missing one the
    // same way; computed here so that the set below is keyed by it too.
    if (conditions.fingerprint().empty()) conditions.set_fingerprint(ConditionsFingerprint(conditions));
    std::lock_guard<std::mutex> l(mu_);
    if (!announced_.empty() && announced_.back().conditions.fingerprint() == conditions.fingerprint()) return;
    std::erase_if(announced_, [&](const Announced& a) {
      return a.conditions.fingerprint() == conditions.fingerprint();
    });
    announced_.push_back(Announced{std::move(conditions), ++next_announcement_id_, 0});
    while (announced_.size() > Uplink::kMaxAnnouncedConditions) announced_.pop_front();
    cv_.notify_all();
  }

  UplinkStats stats() {
    std::lock_guard<std::mutex> l(mu_);
    return stats_;
  }

 private:
  // One stream's state, shared by the sending thread and the reading thread.
  struct Session {
    uint64_t serial = 0;  // this stream's number (Announced::written_on)
    grpc::ClientContext context;  // declared before stream: destroyed after it
    std::unique_ptr<Stream> stream;
    bool welcomed = false;
    v1::Welcome welcome;
    bool reader_done = false;
    absl::Duration last_received;  // clock_->Monotonic()
    std::map<uint64_t, std::vector<std::string>> in_flight;  // batch_id -> run_ids, in order
  };

  // The address the current (or next) stream goes to.
  const std::string& Target() const { return targets_[target_index_]; }

  void Log(std::string_view line) {
    if (options_.log) options_.log(line);
  }

  bool stopping() {
    std::lock_guard<std::mutex> l(mu_);
    return stopping_;
  }

  // Sleeps d by the clock; returns false when Stop() came first.
  bool SleepUnlessStopped(absl::Duration d) {
    const absl::Duration deadline = clock_->Monotonic() + d;
    while (true) {
      if (stopping()) return false;
      const absl::Duration left = deadline - clock_->Monotonic();
      if (left <= absl::ZeroDuration()) return true;
      clock_->SleepFor(std::min(left, kSleepSlice));
    }
  }

  void Run() {
    int failures = 0;  // consecutive attempts without a Welcome
    while (!stopping()) {
      bool welcomed = false;
      const absl::Status s = RunOneStream(&welcomed);
      if (stopping()) break;
      {
        std::lock_guard<std::mutex> l(mu_);
        if (!fatal_.ok()) break;
        last_error_ = Describe(s);
        if (!welcomed) ++stats_.connect_failures;
      }
      if (welcomed) {
        backoff_.Reset();
        failures = 0;
      } else if (++failures == options_.max_connect_failures) {
        std::lock_guard<std::mutex> l(mu_);
        fatal_ = absl::UnavailableError(absl::StrCat("coordinator ", options_.target, " unreachable after ",
                                                     failures, " attempts: ", last_error_));
        Log(ToStd(fatal_.message()));
        break;
      }
      const absl::Duration delay = backoff_.Next();
      const std::string tried = Target();
      // Several coordinators: the next one gets the next attempt (failover), in order, round.
      if (targets_.size() > 1) target_index_ = (target_index_ + 1) % targets_.size();
      Log(absl::StrCat(welcomed ? "stream to " : "cannot reach coordinator ", tried, ": ", Describe(s),
                       targets_.size() > 1 ? absl::StrCat("; trying coordinator ", Target(), " in ")
                                           : std::string("; retrying in "),
                       absl::FormatDuration(delay)));
      if (!SleepUnlessStopped(delay)) break;
    }
    std::lock_guard<std::mutex> l(mu_);
    finished_ = true;
    cv_.notify_all();
  }

  std::shared_ptr<grpc::Channel> NewChannel() {
    grpc::ChannelArguments args;
    // A channel of our own per attempt, not a shared subchannel with gRPC's own reconnect backoff:
    // our Backoff alone decides when to try again.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    // From the one spec limit the coordinator enforces at submit (common/spec/spec_limits.h): no
    // TaskAssignment it sends is over what this stream receives.
    args.SetMaxReceiveMessageSize(kAgentMaxReceiveBytes);
    std::shared_ptr<grpc::ChannelCredentials> credentials;
    {
      std::lock_guard<std::mutex> l(credentials_mu_);
      credentials = options_.credentials;
    }
    return grpc::CreateCustomChannel(Target(),
                                     credentials != nullptr ? credentials : grpc::InsecureChannelCredentials(), args);
  }

  // Opens one stream and serves it until it ends. *welcomed tells whether the coordinator
  // accepted it (which resets the backoff).
  absl::Status RunOneStream(bool* welcomed) {
    auto stub = v1::AgentGateway::NewStub(NewChannel());
    Session session;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopping_) return absl::CancelledError("stopping");
      context_ = &session.context;
      session.last_received = clock_->Monotonic();
      session.serial = ++streams_opened_;
    }
    session.stream = stub->Connect(&session.context);

    // The base conditions, not the latest announced ones: the coordinator judges the agent by
    // this Hello, and its machine row ends with the latest announced ones anyway (re-announced
    // right after the Welcome).
    const bool hello_sent = session.stream->Write(HelloMessage(options_.conditions));

    std::thread reader([this, &session] { ReadLoop(&session); });
    absl::Status result;
    if (!hello_sent) {
      result = absl::UnavailableError("could not send Hello");
    } else {
      result = WaitForWelcome(&session);
      if (result.ok()) {
        *welcomed = true;
        result = SendLoop(&session);
      }
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      // Anything left unacknowledged is sent again on the next stream.
      session.in_flight.clear();
      if (stats_.connected) metrics_->CoordinatorDisconnected();
      stats_.connected = false;
      if (!session.reader_done) session.context.TryCancel();
    }
    reader.join();
    const grpc::Status finish = session.stream->Finish();
    std::lock_guard<std::mutex> l(mu_);
    context_ = nullptr;
    // The coordinator's own status says more than our side's view of a broken stream.
    if (!finish.ok() && finish.error_code() != grpc::StatusCode::CANCELLED) return FromGrpcStatus(finish);
    if (result.ok()) result = absl::UnavailableError("the coordinator closed the stream");
    return result;
  }

  v1::AgentMessage HelloMessage(const v1::MachineConditions& conditions) const {
    v1::AgentMessage message;
    v1::Hello* hello = message.mutable_hello();
    hello->set_agent_id(options_.agent_id);
    hello->set_agent_version(kVersion);
    hello->set_api_revision(kApiRevision);
    *hello->mutable_conditions() = conditions;
    return message;
  }

  // Returns OK once an accepting Welcome arrived. A refusal sets fatal_ (no reconnection).
  absl::Status WaitForWelcome(Session* session) {
    const auto deadline = RealDeadline(options_.welcome_timeout);
    std::unique_lock<std::mutex> l(mu_);
    while (!session->welcomed && !session->reader_done && !stopping_) {
      if (cv_.wait_until(l, deadline) == std::cv_status::timeout) break;
    }
    if (stopping_) return absl::CancelledError("stopping");
    if (!session->welcomed) {
      return session->reader_done ? absl::UnavailableError("stream closed before Welcome")
                                  : absl::DeadlineExceededError(absl::StrCat(
                                        "no Welcome within ", absl::FormatDuration(options_.welcome_timeout)));
    }
    const v1::Welcome& welcome = session->welcome;
    if (!welcome.accepted()) {
      fatal_ = absl::FailedPreconditionError(absl::StrCat("coordinator ", Target(),
                                                          " refused this agent: ", welcome.reason()));
      Log(ToStd(fatal_.message()));
      cv_.notify_all();
      return fatal_;
    }
    ++stats_.sessions;
    stats_.connected = true;
    metrics_->CoordinatorConnected(/*reconnect=*/stats_.sessions > 1);
    stats_.coordinator_version = welcome.coordinator_version();
    stats_.coordinator = Target();
    maybe_pending_ = true;
    Log(absl::StrCat("connected to coordinator ", Target(), " (version ", welcome.coordinator_version(),
                     ", API revision ", welcome.api_revision(), ")"));
    return absl::OkStatus();
  }

  void ReadLoop(Session* session) {
    v1::CoordinatorMessage message;
    while (session->stream->Read(&message)) {
      {
        std::lock_guard<std::mutex> l(mu_);
        session->last_received = clock_->Monotonic();
      }
      switch (message.body_case()) {
        case v1::CoordinatorMessage::kWelcome: {
          std::lock_guard<std::mutex> l(mu_);
          if (session->welcomed) {
            // The answer to an announcement (a later Hello): the stream was accepted already.
            if (!message.welcome().accepted()) {
              Log(absl::StrCat("coordinator ", Target(), " did not take announced conditions: ",
                               message.welcome().reason()));
            }
            break;
          }
          session->welcome = message.welcome();
          session->welcomed = true;
          cv_.notify_all();
          break;
        }
        case v1::CoordinatorMessage::kAck:
          HandleAck(session, message.ack());
          break;
        case v1::CoordinatorMessage::kHeartbeatAck: {
          std::lock_guard<std::mutex> l(mu_);
          ++stats_.heartbeat_acks;
          break;
        }
        case v1::CoordinatorMessage::kAssignTask:
          if (options_.on_assign_task) {
            options_.on_assign_task(message.assign_task());
          } else {
            Log(absl::StrCat("task ", message.assign_task().task_id(), " ignored: this uplink runs no tasks"));
          }
          break;
        case v1::CoordinatorMessage::kCancelTask:
          if (options_.on_cancel_task) {
            options_.on_cancel_task(message.cancel_task());
          } else {
            Log(absl::StrCat("cancel of task ", message.cancel_task().task_id(), " ignored: this uplink runs no tasks"));
          }
          break;
        default:
          break;  // a newer coordinator's message: not ours to handle
      }
    }
    std::lock_guard<std::mutex> l(mu_);
    session->reader_done = true;
    cv_.notify_all();
  }

  void HandleAck(Session* session, const v1::Ack& ack) {
    std::vector<std::string> batch;
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = session->in_flight.find(ack.batch_id());
      if (it == session->in_flight.end()) {
        Log(absl::StrCat("Ack for unknown batch ", ack.batch_id(), " ignored"));
        return;
      }
      batch = std::move(it->second);
      session->in_flight.erase(it);
    }
    // The queue is called without mu_: it has its own lock, and its listener takes mu_.
    std::vector<std::string> done(ack.stored_run_ids().begin(), ack.stored_run_ids().end());
    done.insert(done.end(), ack.duplicate_run_ids().begin(), ack.duplicate_run_ids().end());
    if (auto s = queue_->Ack(done); !s.ok()) Log(ToStd(s.message()));
    std::vector<UplinkRejection> rejections;
    for (const v1::Rejection& rejection : ack.rejections()) {
      // Our own list says which record sat at that index, even when its run_id was unreadable.
      const std::string& run_id =
          rejection.index() < batch.size() ? batch[rejection.index()] : rejection.run_id();
      if (auto s = queue_->Reject(run_id, rejection.reason()); !s.ok() && !absl::IsNotFound(s)) {
        Log(ToStd(s.message()));
      }
      rejections.push_back(UplinkRejection{run_id, rejection.reason()});
    }
    const size_t accounted = done.size() + rejections.size();
    if (accounted < batch.size()) {
      Log(absl::StrCat("Ack for batch ", ack.batch_id(), " accounts for ", accounted, " of ", batch.size(),
                       " records; the others are sent again on the next stream"));
    }
    std::lock_guard<std::mutex> l(mu_);
    stats_.stored += ack.stored_run_ids_size();
    stats_.duplicates += ack.duplicate_run_ids_size();
    stats_.rejected += rejections.size();
    for (auto& r : rejections) stats_.rejections.push_back(std::move(r));
    cv_.notify_all();
  }

  // Sends batches and heartbeats until the stream ends or Stop().
  absl::Status SendLoop(Session* session) {
    uint64_t cursor = 0;  // last seq sent on this stream: a new stream re-sends from the start
    absl::Duration next_heartbeat = clock_->Monotonic() + options_.heartbeat_interval;
    while (true) {
      bool heartbeat_due = false;
      bool may_send = false;
      bool updates_due = false;
      bool announcements_due = false;
      {
        std::unique_lock<std::mutex> l(mu_);
        auto ready = [&] {
          const absl::Duration now = clock_->Monotonic();
          return stopping_ || session->reader_done || now >= next_heartbeat || !task_updates_.empty() ||
                 AnnouncementDue(*session) ||
                 now - session->last_received >= options_.silence_timeout ||
                 (maybe_pending_ && !paused_ && session->in_flight.size() < options_.max_in_flight);
        };
        while (!ready()) cv_.wait_for(l, absl::ToChronoNanoseconds(kClockPoll));
        if (stopping_) return absl::CancelledError("stopping");
        if (session->reader_done) return absl::UnavailableError("stream closed");
        const absl::Duration now = clock_->Monotonic();
        if (now - session->last_received >= options_.silence_timeout) {
          return absl::DeadlineExceededError(
              absl::StrCat("nothing from the coordinator for ", absl::FormatDuration(now - session->last_received)));
        }
        heartbeat_due = now >= next_heartbeat;
        updates_due = !task_updates_.empty();
        announcements_due = AnnouncementDue(*session);
        may_send = maybe_pending_ && !paused_ && session->in_flight.size() < options_.max_in_flight;
        if (may_send) maybe_pending_ = false;
      }
      if (heartbeat_due) {
        v1::AgentMessage message;
        v1::Heartbeat* heartbeat = message.mutable_heartbeat();
        const absl::Time now = clock_->Now();
        heartbeat->mutable_send_time()->set_seconds(absl::ToUnixSeconds(now));
        heartbeat->mutable_send_time()->set_nanos(
            static_cast<int32_t>((now - absl::FromUnixSeconds(absl::ToUnixSeconds(now))) / absl::Nanoseconds(1)));
        heartbeat->set_outbox_depth(queue_->depth());
        if (!session->stream->Write(message)) return absl::UnavailableError("write failed");
        next_heartbeat = clock_->Monotonic() + options_.heartbeat_interval;
        std::lock_guard<std::mutex> l(mu_);
        ++stats_.heartbeats_sent;
      }
      if (updates_due) {
        if (auto s = SendTaskUpdates(session); !s.ok()) return s;
      }
      if (announcements_due) {
        if (auto s = SendAnnouncements(session); !s.ok()) return s;
      }
      if (may_send) {
        if (auto s = SendBatches(session, &cursor); !s.ok()) return s;
      }
    }
  }

  // Writes the waiting task updates, oldest first. Each stays queued until its write succeeded,
  // so a broken stream loses none (it is written again on the next stream). Only this thread
  // writes on the stream and removes from the front of the queue.
  absl::Status SendTaskUpdates(Session* session) {
    while (true) {
      v1::AgentMessage message;
      {
        std::lock_guard<std::mutex> l(mu_);
        if (stopping_) return absl::CancelledError("stopping");
        if (task_updates_.empty()) return absl::OkStatus();
        *message.mutable_task_update() = task_updates_.front();
      }
      if (!session->stream->Write(message)) return absl::UnavailableError("write failed");
      std::lock_guard<std::mutex> l(mu_);
      // A progress update may have replaced the front meanwhile: drop it only when it is the one
      // written, else write the newer one on the next turn.
      if (!task_updates_.empty() &&
          task_updates_.front().SerializeAsString() == message.task_update().SerializeAsString()) {
        task_updates_.pop_front();
      }
      ++stats_.task_updates_sent;
    }
  }

  // True when an announced conditions entry has not been written on this stream. Needs mu_.
  bool AnnouncementDue(const Session& session) const {
    return std::any_of(announced_.begin(), announced_.end(),
                       [&](const Announced& a) { return a.written_on != session.serial; });
  }

  // Writes a Hello for each announced conditions entry not yet written on this stream, oldest
  // first (so the latest announced ends as the machine's conditions). An entry re-announced
  // while its write was on the way is written again (it has a new id).
  absl::Status SendAnnouncements(Session* session) {
    while (true) {
      v1::AgentMessage message;
      uint64_t id = 0;
      {
        std::lock_guard<std::mutex> l(mu_);
        if (stopping_) return absl::CancelledError("stopping");
        auto it = std::find_if(announced_.begin(), announced_.end(),
                               [&](const Announced& a) { return a.written_on != session->serial; });
        if (it == announced_.end()) return absl::OkStatus();
        message = HelloMessage(it->conditions);
        id = it->id;
      }
      if (!session->stream->Write(message)) return absl::UnavailableError("write failed");
      std::lock_guard<std::mutex> l(mu_);
      for (Announced& a : announced_) {
        if (a.id == id) a.written_on = session->serial;
      }
      ++stats_.conditions_announced;
    }
  }

  // Sends pending records after *cursor until the queue has no more or the window is full.
  absl::Status SendBatches(Session* session, uint64_t* cursor) {
    while (true) {
      {
        std::lock_guard<std::mutex> l(mu_);
        if (stopping_) return absl::CancelledError("stopping");
        if (session->in_flight.size() >= options_.max_in_flight || paused_) {
          maybe_pending_ = true;  // resume when an Ack frees a slot, or on SetPaused(false)
          return absl::OkStatus();
        }
      }
      std::vector<PendingRecord> records =
          queue_->Pending(pacer_.BatchLimit(options_.max_batch), options_.max_batch_bytes, *cursor);
      if (records.empty()) return absl::OkStatus();
      {
        // Checked after Pending: conditions announced before these records were queued are
        // visible now, and go first (the cursor stays, so these records are read again).
        std::lock_guard<std::mutex> l(mu_);
        if (AnnouncementDue(*session)) {
          maybe_pending_ = true;
          return absl::OkStatus();
        }
      }
      if (!SleepUnlessStopped(pacer_.Reserve(records.size()))) return absl::CancelledError("stopping");

      v1::AgentMessage message;
      v1::RecordBatch* batch = message.mutable_records();
      std::vector<std::string> run_ids;
      run_ids.reserve(records.size());
      for (PendingRecord& record : records) {
        run_ids.push_back(std::move(record.run_id));
        batch->add_records(std::move(record.bytes));
      }
      const size_t count = records.size();
      {
        std::lock_guard<std::mutex> l(mu_);
        batch->set_batch_id(++next_batch_id_);
        // Registered before the write: the Ack can come back before Write() returns.
        session->in_flight[batch->batch_id()] = std::move(run_ids);
      }
      if (!session->stream->Write(message)) return absl::UnavailableError("write failed");
      *cursor = records.back().seq;
      std::lock_guard<std::mutex> l(mu_);
      stats_.records_sent += count;
      ++stats_.batches_sent;
      metrics_->RecordsSent(count);
    }
  }

  // What the queue's append listener holds: lets Stop() cut the listener off even when the queue
  // is about to call a copy of it.
  struct WakeHandle {
    std::mutex mu;
    Impl* impl ABSL_GUARDED_BY(mu) = nullptr;
  };

  UplinkOptions options_;  // constant but for credentials (guarded by credentials_mu_)
  std::mutex credentials_mu_;
  RecordQueue* const queue_;
  const std::shared_ptr<WakeHandle> wake_ = std::make_shared<WakeHandle>();
  Clock* const clock_;
  AgentMetrics* const metrics_;  // called under mu_ (it returns at once)
  // The coordinator addresses of options_.target, tried in order from targets_[target_index_].
  const std::vector<std::string> targets_;
  std::atomic<size_t> target_index_{0};  // written by the connection thread only
  Backoff backoff_;  // connection thread only
  Pacer pacer_;      // connection thread only
  std::thread thread_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool paused_ ABSL_GUARDED_BY(mu_) = false;
  // Set when the queue may hold records not yet sent on this stream.
  bool maybe_pending_ ABSL_GUARDED_BY(mu_) = true;
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;
  uint64_t next_batch_id_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status fatal_ ABSL_GUARDED_BY(mu_);
  std::string last_error_ ABSL_GUARDED_BY(mu_);
  // Task updates not yet written on a stream, in order.
  std::deque<v1::TaskUpdate> task_updates_ ABSL_GUARDED_BY(mu_);
  // Conditions given to AnnounceConditions, oldest first, distinct fingerprints, at most
  // kMaxAnnouncedConditions; written_on is the serial of the last stream that took the entry.
  struct Announced {
    v1::MachineConditions conditions;
    uint64_t id = 0;
    uint64_t written_on = 0;
  };
  std::deque<Announced> announced_ ABSL_GUARDED_BY(mu_);
  uint64_t next_announcement_id_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t streams_opened_ ABSL_GUARDED_BY(mu_) = 0;
  UplinkStats stats_ ABSL_GUARDED_BY(mu_);
};

Uplink::Uplink(UplinkOptions options, RecordQueue* queue)
    : impl_(std::make_unique<Impl>(std::move(options), queue)) {}
Uplink::~Uplink() = default;
absl::Status Uplink::Start() { return impl_->Start(); }
void Uplink::Stop() { impl_->Stop(); }
void Uplink::SetPaused(bool paused) { impl_->SetPaused(paused); }

void Uplink::SetCredentials(std::shared_ptr<grpc::ChannelCredentials> credentials) {
  impl_->SetCredentials(std::move(credentials));
}
absl::Status Uplink::WaitUntilDrained(absl::Duration timeout) { return impl_->WaitUntilDrained(timeout); }
absl::Status Uplink::status() { return impl_->status(); }
void Uplink::SendTaskUpdate(v1::TaskUpdate update) { impl_->SendTaskUpdate(std::move(update)); }
size_t Uplink::pending_task_updates() { return impl_->pending_task_updates(); }
void Uplink::AnnounceConditions(const v1::MachineConditions& conditions) { impl_->AnnounceConditions(conditions); }
UplinkStats Uplink::stats() { return impl_->stats(); }

}  // namespace benchfleet::agent
