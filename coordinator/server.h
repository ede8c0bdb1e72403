// CoordinatorServer: one coordinator, startable in-process (tests and the ingest benchmark run
// it on port 0). Start() waits for the database (up to database_connect_timeout), applies the
// migrations, starts the group committer and the fleet's Scheduler (a thread that ticks it every
// tick_interval and at once on a NOTIFY from another coordinator), and serves AgentGateway,
// Admin and Fleet over gRPC, every call counted by a metrics interceptor (and /metrics when
// asked); Shutdown() stops in the order that leaves
// nothing half-done. Owned by main() or a test. Start/Shutdown from one thread; port(),
// metrics(), scheduler() and WakeScheduler() from any.
#ifndef BENCHFLEET_COORDINATOR_SERVER_H_
#define BENCHFLEET_COORDINATOR_SERVER_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "coordinator/ingest/group_committer.h"

namespace grpc {
class CallbackGenericService;
class Server;
}

namespace benchfleet::coordinator {

class AdminService;
class AgentGatewayService;
class AuthAdmin;
class AuthStore;
class Authorizer;
class EnrollmentService;
class ConnectedAgents;
class FleetService;
class FleetStore;
class MetricsEndpoint;
class PgNotifyListener;
class PrometheusMetrics;
class RunStore;
class Scheduler;

struct CoordinatorServerOptions {
  // gRPC address, HOST:PORT; port 0 picks a free one (read it back with port()).
  std::string listen_address = "127.0.0.1:7443";

  // libpq URL or keyword string of the database. Required.
  std::string database_url;

  // Time for timestamps (last_seen, heartbeat acks), retry backoff and the scheduler (leases,
  // deadlines, cron). Not owned.
  Clock* clock = &SystemClock();

  // A RUNNING fleet task whose agent sent no heartbeat for this long is LOST (or retried).
  absl::Duration lease = absl::Seconds(30);

  // How often the scheduler thread calls Scheduler::Tick() when no NOTIFY wakes it sooner (real
  // time: it is a poll period, and Tick() itself reads `clock`). Zero: no scheduler thread and no
  // NOTIFY listener; a test calls scheduler()->Tick() itself.
  absl::Duration tick_interval = absl::Seconds(1);

  // This coordinator's name in the fleet tables; empty: a random UUID per Start().
  std::string coordinator_id;

  // How long Start() keeps trying to reach the database before it gives up.
  absl::Duration database_connect_timeout = absl::Seconds(30);

  // HOST:PORT for Prometheus' /metrics; empty: not served (the metrics are still counted).
  std::string metrics_listen_address;

  // The scheduler thread reads the fleet-wide gauges (agents known, tasks by state; see
  // metrics/README.md) from the database at most this often (real time). Without a scheduler
  // thread (tick_interval zero) they are never read.
  absl::Duration fleet_snapshot_interval = absl::Seconds(5);

  // Largest message accepted from an agent (a RecordBatch); Acks may be as large.
  int max_message_bytes = 64 << 20;

  GroupCommitterOptions commit;

  // TLS and who may call what (coordinator/auth/README.md). All PEM contents, not paths.
  // server_cert_pem empty: plaintext and no authentication (the demo, most tests); the
  // command-line program allows that only on loopback unless --insecure.
  struct Tls {
    std::string server_cert_pem;
    std::string server_key_pem;
    std::string client_ca_pem;  // the fleet CA: agents' certificates are verified against it
    std::string ca_key_pem;     // signs enrollment CSRs; empty: Enroll is refused
  } tls;

  // HOST:PORT of a plaintext gRPC server that serves grpc.health.v1 only (nothing else), for
  // probes that cannot speak TLS (Kubernetes' grpc probes); empty: none.
  std::string health_listen_address;

  // Stored (its SHA-256) as the operator token named "bootstrap" at Start; empty: none.
  std::string bootstrap_operator_token;
};

class CoordinatorServer {
 public:
  explicit CoordinatorServer(CoordinatorServerOptions options);
  ~CoordinatorServer();  // Shutdown()
  CoordinatorServer(const CoordinatorServer&) = delete;
  CoordinatorServer& operator=(const CoordinatorServer&) = delete;

  // Returns once serving. UNAVAILABLE when the database stays unreachable, INVALID_ARGUMENT for
  // an address that cannot be bound, INTERNAL when a migration fails.
  absl::Status Start();

  // The gRPC port actually bound (0 before Start).
  int port() const { return port_; }

  // "HOST:PORT" of the gRPC listener with the real port, e.g. "127.0.0.1:40123".
  std::string address() const;

  // The port of the plaintext health server (0 when not served).
  int health_port() const { return health_port_; }

  // The port of /metrics (0 when not served).
  int metrics_port() const;

  // The metrics the coordinator counts (for tests: registry()->Collect()).
  PrometheusMetrics& metrics() { return *metrics_; }

  // The fleet's scheduler (null before Start), for in-process tests.
  Scheduler* scheduler() { return scheduler_.get(); }

  // This coordinator's id in the fleet tables (set by Start()).
  const std::string& coordinator_id() const { return coordinator_id_; }

  // Makes the scheduler thread tick now instead of at the end of its interval (the NOTIFY
  // listener calls it when another coordinator changed the fleet).
  void WakeScheduler();

  // True while the NOTIFY listener holds a LISTENing connection (false without a scheduler
  // thread). Tests wait for it before they count on a NOTIFY.
  bool listening_for_notify() const;

  // True while the revocation listener (NOTIFY benchfleet_auth) holds a LISTENing connection.
  bool listening_for_revocations() const;

  // Stops taking records, lets the group being committed finish (its Acks are written when the
  // agent is still there), then closes the streams and the listener. Pending, uncommitted
  // records are not acknowledged: agents re-send them. The scheduler thread and the NOTIFY
  // listener stop first. Idempotent.
  void Shutdown();

 private:
  void TickLoop();
  // Reads the fleet snapshot into the metrics (on the scheduler thread).
  void ObserveFleet();
  void StopTicking();

  CoordinatorServerOptions options_;
  int port_ = 0;
  bool started_ = false;
  std::unique_ptr<PrometheusMetrics> metrics_;
  std::unique_ptr<MetricsEndpoint> metrics_endpoint_;
  std::string coordinator_id_;
  std::unique_ptr<RunStore> store_;
  std::unique_ptr<FleetStore> fleet_store_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<ConnectedAgents> agents_;
  std::unique_ptr<GroupCommitter> committer_;
  std::unique_ptr<AgentGatewayService> gateway_;
  std::unique_ptr<AdminService> admin_;
  std::unique_ptr<FleetService> fleet_;
  std::unique_ptr<AuthStore> auth_store_;
  std::unique_ptr<Authorizer> authorizer_;
  std::unique_ptr<AuthAdmin> auth_admin_;
  std::unique_ptr<EnrollmentService> enrollment_;
  std::unique_ptr<grpc::Server> grpc_server_;
  std::unique_ptr<grpc::Server> health_server_;  // health_listen_address
  // Answers every other method on the health port UNIMPLEMENTED (and gives that server the
  // callback queue a server with no service of its own needs).
  std::unique_ptr<grpc::CallbackGenericService> health_only_;
  int health_port_ = 0;
  // Closes a revoked agent's streams when any coordinator revokes it (NOTIFY benchfleet_auth).
  std::unique_ptr<PgNotifyListener> auth_listener_;

  std::unique_ptr<PgNotifyListener> notify_listener_;
  std::thread tick_thread_;
  std::mutex tick_mu_;
  std::condition_variable tick_cv_;
  bool tick_stop_ ABSL_GUARDED_BY(tick_mu_) = false;
  bool tick_wake_ ABSL_GUARDED_BY(tick_mu_) = false;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_SERVER_H_
