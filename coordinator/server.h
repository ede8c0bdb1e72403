// CoordinatorServer: one coordinator, startable in-process (tests and the ingest benchmark run
// it on port 0). Start() waits for the database (up to database_connect_timeout), applies the
// migrations, starts the group committer and serves AgentGateway and Admin over gRPC (and
// /metrics when asked); Shutdown() stops in the order that leaves nothing half-done. Owned by
// main() or a test. Start/Shutdown from one thread; port() and metrics() from any.
#ifndef BENCHFLEET_COORDINATOR_SERVER_H_
#define BENCHFLEET_COORDINATOR_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "coordinator/ingest/group_committer.h"

namespace grpc {
class Server;
}

namespace benchfleet::coordinator {

class AdminService;
class AgentGatewayService;
class ConnectedAgents;
class MetricsEndpoint;
class PrometheusMetrics;
class RunStore;

struct CoordinatorServerOptions {
  // gRPC address, HOST:PORT; port 0 picks a free one (read it back with port()).
  std::string listen_address = "127.0.0.1:7443";

  // libpq URL or keyword string of the database. Required.
  std::string database_url;

  // Time for timestamps (last_seen, heartbeat acks) and retry backoff. Not owned.
  Clock* clock = &SystemClock();

  // How long Start() keeps trying to reach the database before it gives up.
  absl::Duration database_connect_timeout = absl::Seconds(30);

  // HOST:PORT for Prometheus' /metrics; empty: not served.
  std::string metrics_listen_address;

  // Largest message accepted from an agent (a RecordBatch); Acks may be as large.
  int max_message_bytes = 64 << 20;

  GroupCommitterOptions commit;
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

  // The port of /metrics (0 when not served).
  int metrics_port() const;

  // The metrics the coordinator counts (for tests: registry()->Collect()).
  PrometheusMetrics& metrics() { return *metrics_; }

  // Stops taking records, lets the group being committed finish (its Acks are written when the
  // agent is still there), then closes the streams and the listener. Pending, uncommitted
  // records are not acknowledged: agents re-send them. Idempotent.
  void Shutdown();

 private:
  CoordinatorServerOptions options_;
  int port_ = 0;
  bool started_ = false;
  std::unique_ptr<PrometheusMetrics> metrics_;
  std::unique_ptr<MetricsEndpoint> metrics_endpoint_;
  std::unique_ptr<RunStore> store_;
  std::unique_ptr<ConnectedAgents> agents_;
  std::unique_ptr<GroupCommitter> committer_;
  std::unique_ptr<AgentGatewayService> gateway_;
  std::unique_ptr<AdminService> admin_;
  std::unique_ptr<grpc::Server> grpc_server_;
};

}  // namespace benchfleet::coordinator

#endif  // BENCHFLEET_COORDINATOR_SERVER_H_
