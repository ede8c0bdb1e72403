#include "coordinator/server.h"

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <chrono>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchfleet/v1/admin.grpc.pb.h"
#include "benchfleet/v1/auth.grpc.pb.h"
#include "benchfleet/v1/fleet.grpc.pb.h"
#include "benchfleet/v1/gateway.grpc.pb.h"
#include "common/hashing.h"
#include "coordinator/admin/admin_service.h"
#include "coordinator/auth/auth_admin.h"
#include "coordinator/auth/authorizer.h"
#include "coordinator/auth/enrollment_service.h"
#include "coordinator/admin/fleet_service.h"
#include "coordinator/ingest/agent_gateway_service.h"
#include "coordinator/ingest/connected_agents.h"
#include "coordinator/log.h"
#include "coordinator/metrics/prometheus_metrics.h"
#include "coordinator/metrics/rpc_metrics_interceptor.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/store/migrator.h"
#include "coordinator/store/pg_fleet_store.h"
#include "coordinator/store/pg_notify_listener.h"
#include "coordinator/store/pg_run_store.h"
#include "coordinator/store/auth_store.h"

namespace benchfleet::coordinator {
namespace {

std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const CoordinatorServerOptions::Tls& tls) {
  if (tls.server_cert_pem.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  // Requested, verified when presented, required per method by the Authorizer: enrollment and
  // health probes come without one.
  ssl.pem_root_certs = tls.client_ca_pem;
  ssl.pem_key_cert_pairs.push_back({tls.server_key_pem, tls.server_cert_pem});
  return grpc::SslServerCredentials(ssl);
}

}  // namespace

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
                                               options_.database_connect_timeout, nullptr, &Log);
  if (!migrated.ok()) return migrated;

  coordinator_id_ = options_.coordinator_id.empty() ? NewUuid() : options_.coordinator_id;
  store_ = NewPgRunStore(PgRunStoreOptions{options_.database_url});
  PgFleetStoreOptions fleet_options;
  fleet_options.database_url = options_.database_url;
  fleet_store_ = NewPgFleetStore(fleet_options);
  SchedulerOptions scheduler_options;
  scheduler_options.clock = options_.clock;
  scheduler_options.lease = options_.lease;
  scheduler_options.coordinator_id = coordinator_id_;
  scheduler_options.metrics = metrics_.get();
  scheduler_ = std::make_unique<Scheduler>(FleetStores::Of(fleet_store_.get()), scheduler_options);
  agents_ = std::make_unique<ConnectedAgents>();
  auth_store_ = NewPgAuthStore(options_.database_url);
  const bool enforce = !options_.tls.server_cert_pem.empty();
  authorizer_ = std::make_unique<Authorizer>(auth_store_.get(), options_.clock, enforce);
  auth_admin_ = std::make_unique<AuthAdmin>(auth_store_.get(), options_.clock,
                                            CaKeyPair{options_.tls.client_ca_pem, options_.tls.ca_key_pem});
  if (!options_.bootstrap_operator_token.empty()) {
    absl::Status seeded = auth_store_->PutApiToken(ApiToken{"bootstrap", v1::ROLE_OPERATOR},
                                                   Sha256Hex(options_.bootstrap_operator_token), "local",
                                                   options_.clock->Now());
    if (!seeded.ok()) return seeded;
  }
  committer_ =
      std::make_unique<GroupCommitter>(store_.get(), options_.clock, metrics_.get(), options_.commit);
  committer_->Start();
  gateway_ = std::make_unique<AgentGatewayService>(store_.get(), committer_.get(), agents_.get(),
                                                   metrics_.get(), options_.clock, scheduler_.get(),
                                                   authorizer_.get());
  admin_ = std::make_unique<AdminService>(
      store_.get(), agents_.get(), scheduler_.get(), authorizer_.get(), auth_admin_.get(), auth_store_.get(),
      metrics_.get(), [this](const std::string& agent_id) { return gateway_->CloseStreamsOf(agent_id); });
  fleet_ = std::make_unique<FleetService>(scheduler_.get(), authorizer_.get(), store_.get());
  enrollment_ = std::make_unique<EnrollmentService>(auth_admin_.get(), authorizer_.get());
  started_ = true;  // from here on, Shutdown() has something to stop

  // grpc.health.v1.Health, SERVING while the server runs (kubelet and load-balancer probes).
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options_.listen_address, ServerCredentials(options_.tls), &port_);
  builder.RegisterService(gateway_.get());
  builder.RegisterService(admin_.get());
  builder.RegisterService(fleet_.get());
  builder.RegisterService(enrollment_.get());
  // Every method of the services above is counted, at 0 from now on.
  metrics_->RpcMethodsServed(MethodsOfServices({v1::AgentGateway::service_full_name(), v1::Admin::service_full_name(),
                                                v1::Fleet::service_full_name(), v1::Enrollment::service_full_name()}));
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  // The agents' stream counts itself (AgentGatewayService::Connect): see the interceptor's header.
  interceptors.push_back(
      NewRpcMetricsInterceptorFactory(metrics_.get(), {AgentGatewayService::ConnectMethodName()}));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
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

  if (!options_.health_listen_address.empty()) {
    // Only the health service (the default one every server gets): nothing else is reachable here.
    grpc::ServerBuilder health;
    health_only_ = std::make_unique<grpc::CallbackGenericService>();
    health.RegisterCallbackGenericService(health_only_.get());
    health.AddListeningPort(options_.health_listen_address, grpc::InsecureServerCredentials(), &health_port_);
    health_server_ = health.BuildAndStart();
    if (health_server_ == nullptr || health_port_ == 0) {
      Shutdown();
      return absl::InvalidArgumentError(absl::StrCat("cannot listen on ", options_.health_listen_address,
                                                     " for health checks (address in use or not valid)"));
    }
  }

  auth_listener_ = std::make_unique<PgNotifyListener>(
      options_.database_url, kAuthChannel,
      [this](const std::string& agent_id) { gateway_->CloseStreamsOf(agent_id); }, &Log);
  auth_listener_->Start();

  if (!options_.metrics_listen_address.empty()) {
    absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
        MetricsEndpoint::Start(options_.metrics_listen_address, metrics_->scrape_view());
    if (!endpoint.ok()) {
      Shutdown();
      return endpoint.status();
    }
    metrics_endpoint_ = std::move(*endpoint);
  }

  if (options_.tick_interval > absl::ZeroDuration()) {
    {
      std::lock_guard<std::mutex> lock(tick_mu_);
      tick_stop_ = false;
      tick_wake_ = false;
    }
    tick_thread_ = std::thread([this] { TickLoop(); });
    notify_listener_ = std::make_unique<PgNotifyListener>(
        options_.database_url, kFleetChannel, [this](const std::string&) { WakeScheduler(); }, &Log);
    notify_listener_->Start();
  }
  return absl::OkStatus();
}

bool CoordinatorServer::listening_for_notify() const {
  return notify_listener_ != nullptr && notify_listener_->listening();
}

bool CoordinatorServer::listening_for_revocations() const {
  return auth_listener_ != nullptr && auth_listener_->listening();
}

void CoordinatorServer::WakeScheduler() {
  {
    std::lock_guard<std::mutex> lock(tick_mu_);
    tick_wake_ = true;
  }
  tick_cv_.notify_one();
}

void CoordinatorServer::ObserveFleet() {
  // "Seen lately" is the clock's (a test's simulated time), like the last_seen it is compared to.
  absl::StatusOr<FleetSnapshot> snapshot =
      fleet_store_->ReadFleetSnapshot(options_.clock->Now() - absl::Hours(24));
  if (!snapshot.ok()) {
    metrics_->DatabaseError("fleet_snapshot");
    return;
  }
  metrics_->FleetObserved(*snapshot);
}

void CoordinatorServer::TickLoop() {
  // Real time, like the tick's own period: the snapshot is a poll of the database.
  std::optional<std::chrono::steady_clock::time_point> last_snapshot;
  std::unique_lock<std::mutex> lock(tick_mu_);
  while (!tick_stop_) {
    tick_wake_ = false;
    lock.unlock();
    scheduler_->Tick();
    const auto now = std::chrono::steady_clock::now();
    if (!last_snapshot.has_value() ||
        now - *last_snapshot >= absl::ToChronoNanoseconds(options_.fleet_snapshot_interval)) {
      last_snapshot = now;
      ObserveFleet();
    }
    lock.lock();
    // A condition variable, not clock->SleepFor: Shutdown() and a NOTIFY must cut the wait
    // short, and a SimulatedClock's sleep would only end when a test advances it.
    tick_cv_.wait_for(lock, absl::ToChronoMilliseconds(options_.tick_interval),
                      [&] { return tick_stop_ || tick_wake_; });
  }
}

void CoordinatorServer::StopTicking() {
  if (notify_listener_ != nullptr) {
    notify_listener_->Stop();
    notify_listener_.reset();
  }
  {
    std::lock_guard<std::mutex> lock(tick_mu_);
    tick_stop_ = true;
  }
  tick_cv_.notify_one();
  if (tick_thread_.joinable()) tick_thread_.join();
}

void CoordinatorServer::Shutdown() {
  if (!started_) return;
  started_ = false;
  // Order matters: no tick starts new work on streams being closed; the group in progress
  // commits and queues its Acks; the streams get a moment to write them and are cancelled;
  // only then does the listener go.
  StopTicking();
  if (auth_listener_ != nullptr) auth_listener_->Stop();
  for (grpc::Server* server : {grpc_server_.get(), health_server_.get()}) {
    if (server != nullptr && server->GetHealthCheckService() != nullptr) server->GetHealthCheckService()->Shutdown();
  }
  committer_->Stop();
  gateway_->Shutdown(absl::Seconds(2));
  if (grpc_server_ != nullptr) {
    grpc_server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    grpc_server_->Wait();
  }
  if (health_server_ != nullptr) {
    health_server_->Shutdown(std::chrono::system_clock::now());
    health_server_->Wait();
    health_server_.reset();
  }
  metrics_endpoint_.reset();
}

}  // namespace benchfleet::coordinator
