#include "coordinator/store/pg_notify_listener.h"

#include <chrono>

#include <pqxx/connection>
#include <pqxx/notification>

#include "absl/strings/str_cat.h"
#include "coordinator/store/pg_errors.h"

namespace benchfleet::coordinator {
namespace {

class Receiver : public pqxx::notification_receiver {
 public:
  Receiver(pqxx::connection_base& conn, const std::string& channel,
           const std::function<void(const std::string&)>& on_notify)
      : pqxx::notification_receiver(conn, channel), on_notify_(on_notify) {}

  void operator()(const std::string& payload, int /*backend_pid*/) override { on_notify_(payload); }

 private:
  const std::function<void(const std::string&)>& on_notify_;
};

}  // namespace

PgNotifyListener::PgNotifyListener(std::string database_url, std::string channel,
                                   std::function<void(const std::string& payload)> on_notify,
                                   std::function<void(std::string_view line)> log)
    : url_(std::move(database_url)),
      channel_(std::move(channel)),
      on_notify_(std::move(on_notify)),
      log_(std::move(log)) {}

PgNotifyListener::~PgNotifyListener() { Stop(); }

void PgNotifyListener::Start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void PgNotifyListener::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PgNotifyListener::Loop() {
  bool logged = false;
  while (!stop_) {
    try {
      pqxx::connection conn(url_);
      Receiver receiver(conn, channel_, on_notify_);
      listening_ = true;
      logged = false;
      // A notification that came while the connection was down is lost: say "look again" once.
      on_notify_("");
      // await_notification returns after at most a second, so Stop() is seen promptly.
      while (!stop_) conn.await_notification(1, 0);
    } catch (const std::exception& e) {
      listening_ = false;
      if (!logged) {
        // PqxxStatus never carries the URL; log once per outage.
        if (log_) {
          log_(absl::StrCat("LISTEN ", channel_, " lost: ", PqxxStatus(e, "listening").message(),
                            "; retrying every second"));
        }
        logged = true;
      }
      // Real time on purpose: this is a reconnect pause of an I/O thread, not a scheduling
      // decision; leases and schedules take their time from the Clock.
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_.load(); });
    }
  }
  listening_ = false;
}

}  // namespace benchfleet::coordinator
