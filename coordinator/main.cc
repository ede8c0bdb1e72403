// benchfleet-coordinator: receives RunRecords from agents over gRPC and stores each exactly once
// in PostgreSQL (a given --database-url, or a private one it runs in --data-dir); schedules fleet
// series onto the agents connected to it.
// SIGTERM/SIGINT shut it down gracefully.
#include <pthread.h>
#include <signal.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "common/version.h"
#include "coordinator/localdb/local_postgres.h"
#include "coordinator/log.h"
#include "coordinator/server.h"
#include "coordinator/store/migrator.h"

namespace {

using benchfleet::coordinator::Log;

constexpr int kExitUsage = 2;
constexpr int kExitFailure = 1;

// Signals are blocked in every thread and taken by this one, so shutdown runs on the main
// thread in a known order instead of inside a signal handler.
class SignalWaiter {
 public:
  SignalWaiter() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);  // before any other thread exists
    thread_ = std::thread([this] {
      int signo = 0;
      sigwait(&set_, &signo);
      {
        std::lock_guard<std::mutex> lock(mu_);
        signo_ = signo;
      }
      cv_.notify_all();
    });
  }
  ~SignalWaiter() {
    if (!received()) pthread_kill(thread_.native_handle(), SIGTERM);  // ends its sigwait
    thread_.join();
  }

  bool received() {
    std::lock_guard<std::mutex> lock(mu_);
    return signo_ != 0;
  }

  // Blocks until a signal came; returns its name.
  const char* Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return signo_ != 0; });
    return signo_ == SIGINT ? "SIGINT" : "SIGTERM";
  }

 private:
  sigset_t set_;
  std::mutex mu_;
  std::condition_variable cv_;
  int signo_ = 0;  // guarded by mu_
  std::thread thread_;
};

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);

  CLI::App app{"benchfleet-coordinator: receives benchmark runs from agents (gRPC) and stores each "
               "exactly once in PostgreSQL"};
  std::string listen = "127.0.0.1:7443";
  std::string metrics_listen;
  std::string database_url;
  std::string data_dir = "./benchfleet-data";
  int database_wait_seconds = 30;
  int lease_seconds = 30;
  app.add_option("--listen", listen, "gRPC address, HOST:PORT (port 0: any free port)")
      ->capture_default_str();
  app.add_option("--metrics-listen", metrics_listen,
                 "address for Prometheus' /metrics, HOST:PORT (default: not served)");
  app.add_option("--database-url", database_url,
                 "PostgreSQL URL (default: $BENCHFLEET_DATABASE_URL; when neither is set, a "
                 "private PostgreSQL runs in --data-dir)");
  app.add_option("--data-dir", data_dir,
                 "directory of the private PostgreSQL, used without a database URL")
      ->capture_default_str();
  app.add_option("--database-wait-seconds", database_wait_seconds,
                 "how long to wait at start-up for the database to accept connections")
      ->capture_default_str()
      ->check(CLI::Range(0, 3600));
  app.add_option("--lease-seconds", lease_seconds,
                 "how long a running fleet task stays its agent's without a heartbeat; after it, "
                 "the task is LOST or retried")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  app.set_version_flag("--version", std::string(benchfleet::kVersion));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }
  if (database_url.empty()) {
    if (const char* env = std::getenv("BENCHFLEET_DATABASE_URL"); env != nullptr) database_url = env;
  }

  // A database host that drops packets would otherwise hold a connection attempt (and the stream
  // waiting on it) for minutes; an operator's own PGCONNECT_TIMEOUT wins.
  ::setenv("PGCONNECT_TIMEOUT", "10", /*overwrite=*/0);

  SignalWaiter signals;
  std::unique_ptr<benchfleet::coordinator::LocalPostgres> local_db;
  if (database_url.empty()) {
    benchfleet::coordinator::LocalPostgresOptions options;
    options.data_dir = data_dir;
    auto started = benchfleet::coordinator::LocalPostgres::Start(options);
    if (!started.ok()) {
      std::fprintf(stderr, "benchfleet-coordinator: %s\n", std::string(started.status().message()).c_str());
      return kExitFailure;
    }
    local_db = std::move(*started);
    // The private server has no password (trust, on a socket only its owner can reach), so its
    // connection string is safe to print: operators query it with psql.
    Log(absl::StrCat("private PostgreSQL running in ", local_db->data_dir(), "; psql \"",
                     local_db->database_url(), "\""));
    database_url = local_db->database_url();
  }

  // Waits for the database here, where a signal can still cut the wait short.
  absl::Status reachable = benchfleet::coordinator::MigrateWhenReachable(
      database_url, benchfleet::SystemClock(), absl::Seconds(database_wait_seconds),
      [&signals] { return signals.received(); });
  if (!reachable.ok()) {
    std::fprintf(stderr, "benchfleet-coordinator: %s\n", std::string(reachable.message()).c_str());
    return kExitFailure;
  }

  benchfleet::coordinator::CoordinatorServerOptions options;
  options.listen_address = listen;
  options.database_url = database_url;
  options.metrics_listen_address = metrics_listen;
  options.lease = absl::Seconds(lease_seconds);
  benchfleet::coordinator::CoordinatorServer server(options);
  absl::Status status = server.Start();
  if (!status.ok()) {
    std::fprintf(stderr, "benchfleet-coordinator: %s\n", std::string(status.message()).c_str());
    return kExitFailure;
  }
  if (server.metrics_port() != 0) {
    Log(absl::StrCat("metrics on port ", server.metrics_port(), " (/metrics)"));
  }
  std::fprintf(stderr, "benchfleet-coordinator listening on %s\n", server.address().c_str());
  std::fflush(stderr);

  const char* signal_name = signals.Wait();
  Log(absl::StrCat(signal_name, " received: shutting down"));
  server.Shutdown();
  if (local_db != nullptr) {
    absl::Status stopped = local_db->Stop();
    if (!stopped.ok()) {
      std::fprintf(stderr, "benchfleet-coordinator: %s\n", std::string(stopped.message()).c_str());
      return kExitFailure;
    }
  }
  Log("stopped");
  return 0;
}
