#include "coordinator/server.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "coordinator/admin/admin_service.h"
#include "coordinator/ingest/agent_gateway_service.h"
#include "coordinator/ingest/connected_agents.h"
#include "coordinator/log.h"
#include "coordinator/metrics/prometheus_metrics.h"
#include "coordinator/store/migrator.h"
#include "coordinator/store/pg_run_store.h"

namespace benchfleet::coordinator {

CoordinatorServer::CoordinatorServer(CoordinatorServerOptions options)
    : options_(std::move(options)), metrics_(std::make_unique<PrometheusMetrics>()) {}

CoordinatorServer::~CoordinatorServer() { Shutdown(); }

std::string CoordinatorServer::address() const {
  const std::string& listen = options_.listen_address;
  const size_t colon = listen.rfind(':');
  return absl::StrCat(colon == std::string::npos ? listen : listen.substr(0, colon), ":", port_);
}

int CoordinatorServer::metrics_port() const {
  return metrics_endpoint_ == nullptr ? 0 : metrics_endpoint_->port();
}

absl::Status CoordinatorServer::Start() {
  if (started_) return absl::FailedPreconditionError("the coordinator is already started");
  if (options_.database_url.empty()) return absl::InvalidArgumentError("a database URL is required");
  absl::Status migrated = MigrateWhenReachable(options_.database_url, *options_.clock,
                                               options_.database_connect_timeout);
  if (!migrated.ok()) return migrated;

  store_ = NewPgRunStore(PgRunStoreOptions{options_.database_url});
  agents_ = std::make_unique<ConnectedAgents>();
  committer_ =
      std::make_unique<GroupCommitter>(store_.get(), options_.clock, metrics_.get(), options_.commit);
  committer_->Start();
  gateway_ = std::make_unique<AgentGatewayService>(store_.get(), committer_.get(), agents_.get(),
                                                   metrics_.get(), options_.clock);
  admin_ = std::make_unique<AdminService>(store_.get(), agents_.get());
  started_ = true;  // from here on, Shutdown() has something to stop

  grpc::ServerBuilder builder;
  builder.AddListeningPort(options_.listen_address, grpc::InsecureServerCredentials(), &port_);
  builder.RegisterService(gateway_.get());
  builder.RegisterService(admin_.get());
  builder.SetMaxReceiveMessageSize(options_.max_message_bytes);
  builder.SetMaxSendMessageSize(options_.max_message_bytes);
  // Agents keep their one stream alive with pings; allow them, and find dead agents ourselves.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  grpc_server_ = builder.BuildAndStart();
  if (grpc_server_ == nullptr || port_ == 0) {
    Shutdown();
    return absl::InvalidArgumentError(
        absl::StrCat("cannot listen on ", options_.listen_address,
                     " (address in use or not valid; give HOST:PORT)"));
  }

  if (!options_.metrics_listen_address.empty()) {
    absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
        MetricsEndpoint::Start(options_.metrics_listen_address, metrics_->registry());
    if (!endpoint.ok()) {
      Shutdown();
      return endpoint.status();
    }
    metrics_endpoint_ = std::move(*endpoint);
  }
  return absl::OkStatus();
}

void CoordinatorServer::Shutdown() {
  if (!started_) return;
  started_ = false;
  // Order matters: the group in progress commits and queues its Acks; the streams get a moment
  // to write them and are cancelled; only then does the listener go.
  committer_->Stop();
  gateway_->Shutdown(absl::Seconds(2));
  if (grpc_server_ != nullptr) {
    grpc_server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    grpc_server_->Wait();
  }
  metrics_endpoint_.reset();
}

}  // namespace benchfleet::coordinator
