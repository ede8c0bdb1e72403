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
#include <vector>

#include "absl/base/thread_annotations.h"
#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/database_url.h"
#include "common/grpc_channel.h"
#include "common/tls/certificates.h"
#include "common/tls/fleet_ca.h"
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
  int signo_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

struct TlsFlags {
  std::string cert, key, client_ca, ca_key, operator_token_file;
  bool plaintext = false;
  bool insecure = false;
};

int Fail(const absl::Status& status, int code) {
  std::fprintf(stderr, "benchfleet-coordinator: %s\n", std::string(status.message()).c_str());
  return code;
}

absl::Status LoadTls(const TlsFlags& flags, const std::string& listen,
                     benchfleet::coordinator::CoordinatorServerOptions::Tls* tls, std::string* operator_token) {
  if (flags.plaintext) {
    if (!flags.cert.empty() || !flags.key.empty() || !flags.client_ca.empty() || !flags.ca_key.empty()) {
      return absl::InvalidArgumentError("--plaintext and --tls-* / --ca-key exclude each other");
    }
    if (!benchfleet::IsLoopbackTarget(listen)) {
      if (!flags.insecure) {
        return absl::InvalidArgumentError(absl::StrCat(
            "refusing to listen in plaintext on ", listen,
            ", which is not a loopback address: anyone reaching it could read and write every record. "
            "Give --tls-cert, --tls-key and --tls-client-ca, or add --insecure if you really mean it"));
      }
      for (int i = 0; i < 3; ++i) {
        Log(absl::StrCat("WARNING: --insecure: plaintext without authentication on ", listen,
                         "; anyone who can reach this port can read, write and schedule everything"));
      }
    }
  } else {
    if (flags.insecure) return absl::InvalidArgumentError("--insecure only goes with --plaintext");
    if (flags.cert.empty() || flags.key.empty() || flags.client_ca.empty()) {
      return absl::InvalidArgumentError(
          "TLS needs --tls-cert, --tls-key and --tls-client-ca (`benchfleet-coordinator ca init --out DIR` "
          "makes them); for a demo on loopback, --plaintext");
    }
    auto cert = benchfleet::ReadCredentialFile(flags.cert, "--tls-cert");
    if (!cert.ok()) return cert.status();
    auto key = benchfleet::ReadCredentialFile(flags.key, "--tls-key");
    if (!key.ok()) return key.status();
    auto client_ca = benchfleet::ReadCredentialFile(flags.client_ca, "--tls-client-ca");
    if (!client_ca.ok()) return client_ca.status();
    if (absl::Status s = benchfleet::tls::CheckKeyMatchesCertificate(*key, *cert); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--tls-key does not go with --tls-cert: ", s.message()));
    }
    tls->server_cert_pem = std::move(*cert);
    tls->server_key_pem = std::move(*key);
    tls->client_ca_pem = std::move(*client_ca);
    if (!flags.ca_key.empty()) {
      auto ca_key = benchfleet::ReadCredentialFile(flags.ca_key, "--ca-key");
      if (!ca_key.ok()) return ca_key.status();
      if (absl::Status s = benchfleet::tls::CheckKeyMatchesCertificate(*ca_key, tls->client_ca_pem); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("--ca-key does not go with --tls-client-ca: ", s.message()));
      }
      tls->ca_key_pem = std::move(*ca_key);
    }
  }
  if (!flags.operator_token_file.empty()) {
    auto token = benchfleet::ReadCredentialFile(flags.operator_token_file, "--operator-token-file");
    if (!token.ok()) return token.status();
    *operator_token = std::move(*token);
    if (operator_token->size() < 20) {
      return absl::InvalidArgumentError("--operator-token-file: a token of at least 20 characters is needed");
    }
  }
  return absl::OkStatus();
}

int InitCa(const std::string& out, const std::vector<std::string>& server_names, int server_days) {
  benchfleet::tls::FleetCaOptions options;
  options.out_dir = out;
  if (!server_names.empty()) options.server_names = server_names;
  options.server_days = server_days;
  options.now = absl::Now();
  auto files = benchfleet::tls::InitFleetCa(options);
  if (!files.ok()) return Fail(files.status(), kExitFailure);
  std::printf("fleet CA:            %s\nCA key (keep secret): %s\nserver certificate:  %s\nserver key:          %s\n",
              files->ca_cert.c_str(), files->ca_key.c_str(), files->server_cert.c_str(), files->server_key.c_str());
  std::printf("start: benchfleet-coordinator --tls-cert %s --tls-key %s --tls-client-ca %s --ca-key %s\n",
              files->server_cert.c_str(), files->server_key.c_str(), files->ca_cert.c_str(), files->ca_key.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);

  CLI::App app{"benchfleet-coordinator: receives benchmark runs from agents (gRPC, TLS) and stores each "
               "exactly once in PostgreSQL. `benchfleet-coordinator ca init` makes a fleet CA first."};
  std::string listen = "127.0.0.1:7443";
  std::string metrics_listen;
  std::string database_url;
  std::string database_url_file;
  std::string data_dir = "./benchfleet-data";
  int database_wait_seconds = 30;
  int lease_seconds = 30;
  TlsFlags tls;
  app.add_option("--listen", listen, "gRPC address, HOST:PORT (port 0: any free port)")
      ->capture_default_str();
  app.add_option("--metrics-listen", metrics_listen,
                 "address for Prometheus' /metrics, HOST:PORT (default: not served)");
  std::string health_listen;
  app.add_option("--health-listen", health_listen,
                 "address of a plaintext gRPC server with grpc.health.v1 only, HOST:PORT, for probes "
                 "that cannot speak TLS such as Kubernetes' (default: none; the main port serves health too)");
  app.add_option("--database-url", database_url,
                 "PostgreSQL URL without a password (default: $BENCHFLEET_DATABASE_URL; when neither "
                 "is set, a private PostgreSQL runs in --data-dir). A URL with a password goes in "
                 "--database-url-file or the environment, never on the command line");
  app.add_option("--database-url-file", database_url_file,
                 "file holding the PostgreSQL URL (it may hold the password)");
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
  app.add_option("--tls-cert", tls.cert, "the coordinator's TLS certificate (PEM)");
  app.add_option("--tls-key", tls.key, "its private key (PEM)");
  app.add_option("--tls-client-ca", tls.client_ca,
                 "the fleet CA certificate (PEM): agents' certificates must be signed by it");
  app.add_option("--ca-key", tls.ca_key,
                 "the fleet CA's private key (PEM), to sign enrolling agents' certificates "
                 "(default: enrollment refused)");
  app.add_option("--operator-token-file", tls.operator_token_file,
                 "file holding an operator API token, stored (hashed) as the token 'bootstrap'");
  app.add_flag("--plaintext", tls.plaintext,
               "no TLS and no authentication: for a demo on a loopback address only");
  app.add_flag("--insecure", tls.insecure,
               "with --plaintext, allow a non-loopback address (anyone who reaches the port can "
               "read and write everything)");
  CLI::App* ca = app.add_subcommand("ca", "The fleet's certificate authority");
  CLI::App* ca_init = ca->add_subcommand(
      "init", "Write a new fleet CA (ca.pem, ca-key.pem) and a server certificate (server.pem, "
              "server-key.pem) into --out; never overwrites an existing CA");
  std::string ca_out;
  std::vector<std::string> server_names;
  int server_days = 825;
  ca_init->add_option("--out", ca_out, "directory to write into (created, mode 0700)")->required();
  ca_init->add_option("--server-name", server_names,
                      "a DNS name or IP address of the coordinator, repeatable (default: localhost, 127.0.0.1)");
  ca_init->add_option("--days", server_days, "validity of the server certificate in days")
      ->capture_default_str()
      ->check(CLI::Range(1, 3650));
  ca->require_subcommand(1);
  app.set_version_flag("--version", std::string(benchfleet::kVersion));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }
  if (ca_init->parsed()) return InitCa(ca_out, server_names, server_days);

  if (!database_url.empty() && benchfleet::DatabaseUrlHasPassword(database_url)) {
    std::fprintf(stderr,
                 "benchfleet-coordinator: --database-url holds a password, which any user can read "
                 "in the process list: put the URL in --database-url-file or BENCHFLEET_DATABASE_URL\n");
    return kExitUsage;
  }
  if (!database_url_file.empty()) {
    if (!database_url.empty()) {
      std::fprintf(stderr, "benchfleet-coordinator: give --database-url or --database-url-file, not both\n");
      return kExitUsage;
    }
    auto url = benchfleet::ReadCredentialFile(database_url_file, "--database-url-file");
    if (!url.ok()) return Fail(url.status(), kExitUsage);
    database_url = std::move(*url);
  }
  if (database_url.empty()) {
    if (const char* env = std::getenv("BENCHFLEET_DATABASE_URL"); env != nullptr) database_url = env;
  }
  benchfleet::coordinator::CoordinatorServerOptions::Tls server_tls;
  std::string bootstrap_token;
  if (absl::Status s = LoadTls(tls, listen, &server_tls, &bootstrap_token); !s.ok()) return Fail(s, kExitUsage);

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
      [&signals] { return signals.received(); }, &benchfleet::coordinator::Log);
  if (!reachable.ok()) {
    std::fprintf(stderr, "benchfleet-coordinator: %s\n", std::string(reachable.message()).c_str());
    return kExitFailure;
  }

  benchfleet::coordinator::CoordinatorServerOptions options;
  options.listen_address = listen;
  options.database_url = database_url;
  options.metrics_listen_address = metrics_listen;
  options.health_listen_address = health_listen;
  options.lease = absl::Seconds(lease_seconds);
  options.tls = std::move(server_tls);
  options.bootstrap_operator_token = std::move(bootstrap_token);
  benchfleet::coordinator::CoordinatorServer server(options);
  absl::Status status = server.Start();
  if (!status.ok()) {
    std::fprintf(stderr, "benchfleet-coordinator: %s\n", std::string(status.message()).c_str());
    return kExitFailure;
  }
  if (server.metrics_port() != 0) {
    Log(absl::StrCat("metrics on port ", server.metrics_port(), " (/metrics)"));
  }
  std::fprintf(stderr, "benchfleet-coordinator listening on %s (%s)\n", server.address().c_str(),
               tls.plaintext ? "plaintext, no authentication" : "TLS, client certificates and API tokens");
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
