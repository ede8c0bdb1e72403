// PgNotifyListener: a thread with its own PostgreSQL connection that LISTENs on a channel
// (benchfleet_fleet) and calls a callback for every notification, so a coordinator looks again at
// once when another one changed the fleet. Reconnects after an error (once a second); polling
// stays the safety net. Owned by CoordinatorServer. Start/Stop from one thread; the callback runs
// on the listener's thread.
#ifndef BENCHFLEET_COORDINATOR_STORE_PG_NOTIFY_LISTENER_H_
#define BENCHFLEET_COORDINATOR_STORE_PG_NOTIFY_LISTENER_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace benchfleet::coordinator {

class PgNotifyListener {
 public:
  // `on_notify` receives each notification's payload, and "" each time the connection is
  // (re)established: what was sent while it was down is lost, so the caller looks again.
  // `log` (may be empty) gets one line per outage of the connection.
  PgNotifyListener(std::string database_url, std::string channel,
                   std::function<void(const std::string& payload)> on_notify,
                   std::function<void(std::string_view line)> log = nullptr);
  ~PgNotifyListener();  // Stop()s
  PgNotifyListener(const PgNotifyListener&) = delete;
  PgNotifyListener& operator=(const PgNotifyListener&) = delete;

  void Start();
  // Ends the thread and joins it (within about a second).
  void Stop();

  // True while the thread holds a LISTENing connection (for tests and health).
  bool listening() const { return listening_.load(); }

 private:
  void Loop();

  const std::string url_;
  const std::string channel_;
  const std::function<void(const std::string&)> on_notify_;
  const std::function<void(std::string_view)> log_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> listening_{false};
  std::mutex mu_;
  std::condition_variable cv_;  // wakes the reconnect wait on Stop()
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_STORE_PG_NOTIFY_LISTENER_H_
