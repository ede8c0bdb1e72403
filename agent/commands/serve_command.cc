// benchfleet-agent serve: the long-running agent. Drains the outbox to the coordinator and runs
// the tasks the coordinator assigns on the same stream (agent/tasks/, each judged against this
// agent's allow-list first) until SIGTERM/SIGINT (or, with --exit-when-drained, until the outbox
// is empty and no task is running). With --metrics-listen it serves its own Prometheus /metrics
// (agent/metrics/). An enrolled agent renews its certificate before it expires (--renew-before).
#include <signal.h>

#include <cerrno>
#include <ctime>
#include <memory>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "agent/commands/agent_context.h"
#include "agent/commands/commands.h"
#include "agent/commands/stop_signals.h"
#include "agent/backends/backend.h"
#include "agent/backends/services.h"
#include "agent/config/allow_list.h"
#include "agent/metrics/prometheus_agent_metrics.h"
#include "agent/outbox/outbox.h"
#include "agent/tasks/task_executor.h"
#include "agent/uplink/enrollment.h"
#include "agent/uplink/uplink.h"
#include "common/proto_time.h"
#include "common/tls/certificates.h"
#include "common/version.h"

namespace benchfleet::agent {
namespace {

// How often the main thread looks at the uplink and the outbox (a stop signal ends the wait at once).
constexpr absl::Duration kPollInterval = absl::Milliseconds(100);
// How often a changed state is reported on stderr.
constexpr int kReportEveryPolls = 100;  // 10 s
// How often the agent certificate's expiry is looked at (after once at start).
constexpr int kRenewCheckEveryPolls = 36000;  // 1 h
constexpr absl::Duration kRenewTimeout = absl::Seconds(10);

// Renews the agent certificate when less than `renew_before` of it is left, and gives the
// uplink the new one for its next streams. Returns a line for the log, "" when nothing was due
// (or the agent has no certificate: plaintext on loopback). A failure is logged, not fatal: the
// current certificate still works, and the next check tries again.
// The certificate's expiry goes to `metrics` (when served): the old one's until a renewal
// succeeds.
std::string RenewIfDue(Env* env, const AgentConfig& config, const AgentSetup& setup, const std::string& coordinator,
                       const std::string& ca_flag, absl::Duration renew_before, Uplink* uplink,
                       PrometheusAgentMetrics* metrics) {
  auto security = ResolveChannelSecurity(env, config, setup.state_dir, ca_flag, coordinator);
  if (!security.ok()) return absl::StrCat("serve: certificate renewal: ", security.status().message());
  if (security->cert_pem.empty()) return "";
  auto current = tls::ParseCertificate(security->cert_pem);
  if (!current.ok()) return absl::StrCat("serve: certificate renewal: ", current.status().message());
  if (metrics != nullptr) metrics->SetCertificateExpiry(current->not_after);
  if (!RenewalDue(current->not_after, env->clock().Now(), renew_before)) return "";
  RenewalRequest request;
  request.coordinator = coordinator;
  request.security = *security;
  request.tls_dir = JoinPath(setup.state_dir, kTlsDirName);
  request.timeout = kRenewTimeout;
  auto renewed = RenewCertificate(request);
  if (!renewed.ok()) {
    return absl::StrCat("serve: the agent certificate (valid until ", FormatUtcSeconds(current->not_after),
                        ") could not be renewed, trying again in an hour: ", renewed.status().message());
  }
  auto now_security = ResolveChannelSecurity(env, config, setup.state_dir, ca_flag, coordinator);
  if (!now_security.ok()) return absl::StrCat("serve: certificate renewal: ", now_security.status().message());
  auto credentials = MakeChannelCredentials(coordinator, *now_security);
  if (!credentials.ok()) return absl::StrCat("serve: certificate renewal: ", credentials.status().message());
  uplink->SetCredentials(std::move(*credentials));
  if (metrics != nullptr) metrics->SetCertificateExpiry(renewed->not_after);
  return absl::StrCat("serve: agent certificate renewed (the old one was valid until ", FormatUtcSeconds(current->not_after),
                      "; the new one until ", FormatUtcSeconds(renewed->not_after), ")");
}

}  // namespace

int RunServeCommand(const ServeFlags& flags) {
  Env* env = Env::Default();
  auto config = LoadConfigFor(env, flags.config);
  if (!config.ok()) {
    PrintError("serve", config.status());
    return kExitBadInput;
  }
  const std::string coordinator = ResolveCoordinator(flags.coordinator, *config);
  if (coordinator.empty()) {
    PrintError("serve", absl::InvalidArgumentError(
                            "no coordinator: pass --coordinator, set BENCHFLEET_COORDINATOR or coordinator: in agent.yaml"));
    return kExitBadInput;
  }
  if (flags.send_rate < 0) {
    PrintError("serve", absl::InvalidArgumentError("--send-rate must be >= 0 records/s"));
    return kExitBadInput;
  }
  auto sampling_mode = ResolveDeviceSampling(flags.device_sampling, *config);
  if (!sampling_mode.ok()) {
    PrintError("serve", sampling_mode.status());
    return kExitBadInput;
  }
  absl::Duration renew_before = config->renew_before;
  if (!flags.renew_before.empty() &&
      (!absl::ParseDuration(flags.renew_before, &renew_before) || renew_before < absl::ZeroDuration())) {
    PrintError("serve", absl::InvalidArgumentError(absl::StrCat("--renew-before: '", flags.renew_before,
                                                                "' is not a duration like 720h")));
    return kExitBadInput;
  }

  // Block the stop signals before any thread starts, so every thread inherits the mask and only
  // the watcher (stop_signals.h) ever takes them: the first stops the agent (the main loop below
  // and the task in progress see it at once), the second exits at once.
  StopSignals::Block();
  // The outbox, for the signal lines, while it is open (the watcher outlives it).
  struct SignalOutbox {
    std::mutex mu;
    Outbox* outbox ABSL_GUARDED_BY(mu) = nullptr;
    std::string Depth() {
      std::lock_guard<std::mutex> l(mu);
      return outbox != nullptr ? absl::StrCat(outbox->depth()) : std::string();
    }
  } signal_outbox;
  StopSignals signals(
      "serve",
      [&signal_outbox](const char* name) {
        const std::string depth = signal_outbox.Depth();
        PrintProgress(absl::StrCat("serve: ", name, ", stopping",
                                   depth.empty() ? "" : absl::StrCat("; ", depth, " records stay in the outbox"),
                                   " (a task's pause or wait ends now, a timed run in progress finishes, its server "
                                   "is stopped; send ", name, " again to exit at once)"));
      },
      [&signal_outbox] {
        const std::string depth = signal_outbox.Depth();
        return depth.empty() ? std::string()
                             : absl::StrCat(depth, " records stay in the outbox (fsync'd), sent at the next start; "
                                            "the task in progress is not finished");
      });
  signals.Start();

  auto setup = SetUpAgent(env, *config, flags.state_dir);
  if (!setup.ok()) {
    PrintError("serve", setup.status());
    return kExitFailed;
  }
  if (!flags.enroll_token_file.empty() &&
      !env->FileExists(JoinPath(JoinPath(setup->state_dir, kTlsDirName), kAgentCertFile))) {
    absl::Status enrolled = EnrollThisAgent(env, *config, setup->state_dir, coordinator, flags.ca_cert,
                                            flags.enroll_token_file);
    if (!enrolled.ok()) {
      PrintError("serve", enrolled);
      return absl::IsInvalidArgument(enrolled) || absl::IsNotFound(enrolled) ? kExitBadInput : kExitFailed;
    }
  }
  auto outbox = Outbox::Open(env, JoinPath(setup->state_dir, "outbox"));
  if (!outbox.ok()) {
    PrintError("serve", outbox.status());
    return kExitFailed;
  }
  {
    std::lock_guard<std::mutex> l(signal_outbox.mu);
    signal_outbox.outbox = outbox->get();
  }
  // Forgotten before the outbox closes, on every way out.
  struct ForgetOutbox {
    SignalOutbox* s;
    ~ForgetOutbox() {
      std::lock_guard<std::mutex> l(s->mu);
      s->outbox = nullptr;
    }
  } forget_outbox{&signal_outbox};
  const OutboxRecovery& recovered = (*outbox)->recovery();
  PrintProgress(absl::StrCat("benchfleet-agent ", kVersion, " serve: agent ", setup->agent_id, ", state ",
                             setup->state_dir, ", coordinator ", coordinator, "; outbox holds ",
                             recovered.records, " records to send",
                             recovered.torn_bytes > 0 ? absl::StrCat(" (", recovered.torn_bytes,
                                                                     " torn bytes ignored)")
                                                      : ""));

  // The agent's own /metrics, when asked for: bound before anything runs, so a bad address fails
  // at start-up.
  const std::string metrics_listen = flags.metrics_listen.empty() ? config->metrics_listen : flags.metrics_listen;
  std::unique_ptr<PrometheusAgentMetrics> metrics;
  std::unique_ptr<AgentMetricsEndpoint> metrics_endpoint;
  if (!metrics_listen.empty()) {
    metrics = std::make_unique<PrometheusAgentMetrics>(outbox->get());
    auto endpoint = AgentMetricsEndpoint::Start(metrics_listen, *metrics);
    if (!endpoint.ok()) {
      PrintError("serve", endpoint.status());
      return kExitBadInput;
    }
    metrics_endpoint = std::move(*endpoint);
    PrintProgress(absl::StrCat("serve: metrics on port ", metrics_endpoint->port(), " (/metrics)"));
  }

  // Watches every task's timed runs; declared before the executor, which uses it.
  const RunSampling sampling =
      StartRunSampling(env, *sampling_mode, [](std::string_view line) { PrintProgress(line); });

  // Tasks from the coordinator: the executor and the uplink point at each other, so the
  // executor reaches the uplink through this pointer, set before either starts.
  const AllowList allow(*config);
  Uplink* uplink_for_tasks = nullptr;
  const AgentServices services(env);
  TaskExecutorOptions task_options;
  task_options.env = env;
  task_options.allow = &allow;
  task_options.services = services.services();
  task_options.agent_id = setup->agent_id;
  task_options.conditions = setup->conditions;
  task_options.tasks_dir = JoinPath(setup->state_dir, "tasks");
  task_options.outbox = outbox->get();
  task_options.find_backend = [](const std::string& name) { return FindBackend(name); };
  task_options.send_update = [&uplink_for_tasks](const v1::TaskUpdate& update) {
    uplink_for_tasks->SendTaskUpdate(update);
  };
  task_options.on_timed_window = [&uplink_for_tasks](bool timed) { uplink_for_tasks->SetPaused(timed); };
  // Each series' own conditions go to the coordinator as a later Hello, so the fingerprint its
  // records carry resolves there (the stream's first Hello has only the agent's base conditions).
  task_options.announce_conditions = [&uplink_for_tasks](const v1::MachineConditions& conditions) {
    uplink_for_tasks->AnnounceConditions(conditions);
  };
  task_options.run_watcher = sampling.watcher();
  task_options.log = [](std::string_view line) { PrintProgress(line); };
  task_options.metrics = metrics.get();
  TaskExecutor executor(std::move(task_options));

  auto options_or = MakeUplinkOptionsFor(env, *config, *setup, coordinator, flags.ca_cert);
  if (!options_or.ok()) {
    PrintError("serve", options_or.status());
    return kExitBadInput;
  }
  UplinkOptions options = std::move(*options_or);
  options.send_rate = flags.send_rate;
  options.metrics = metrics.get();
  options.on_assign_task = [&executor](const v1::TaskAssignment& assignment) { executor.Assign(assignment); };
  options.on_cancel_task = [&executor](const v1::TaskCancel& cancel) { executor.Cancel(cancel); };
  Uplink uplink(std::move(options), outbox->get());
  uplink_for_tasks = &uplink;
  if (auto s = executor.Start(); !s.ok()) {
    PrintError("serve", s);
    return kExitBadInput;
  }
  // The certificate is looked at before the first stream (which then uses a renewed one) and
  // every hour after.
  if (std::string line = RenewIfDue(env, *config, *setup, coordinator, flags.ca_cert, renew_before, &uplink, metrics.get());
      !line.empty()) {
    PrintProgress(line);
  }
  if (auto s = uplink.Start(); !s.ok()) {
    PrintError("serve", s);
    return kExitBadInput;
  }

  int exit_code = kExitOk;
  std::string last_report;
  for (int poll = 0;; ++poll) {
    if (env->clock().WaitForStop(signals.token(), kPollInterval)) break;
    if (absl::Status s = uplink.status(); !s.ok()) {
      PrintError("serve", s);
      exit_code = kExitFailed;
      break;
    }
    const size_t depth = (*outbox)->depth();
    if (flags.exit_when_drained && depth == 0 && executor.WaitUntilIdle(absl::ZeroDuration())) {
      PrintProgress("serve: outbox drained, exiting (--exit-when-drained)");
      break;
    }
    if (poll > 0 && poll % kRenewCheckEveryPolls == 0) {
      std::string line = RenewIfDue(env, *config, *setup, coordinator, flags.ca_cert, renew_before, &uplink, metrics.get());
      if (!line.empty()) PrintProgress(line);
    }
    if (poll % kReportEveryPolls == 0) {
      const UplinkStats stats = uplink.stats();
      std::string report = absl::StrCat("serve: outbox ", depth, " records; sent so far: ", stats.stored, " stored, ",
                                        stats.duplicates, " duplicates, ", stats.rejected, " rejected");
      if (report != last_report) PrintProgress(report);
      last_report = std::move(report);
    }
  }
  // The task in progress stops at once (a pause or a wait ends; a timed run in progress finishes
  // first) and its server is stopped; its finished update gets a moment to leave (it is kept in the
  // task's folder and sent again when the coordinator re-sends the task). A second signal meanwhile
  // exits at once.
  executor.Stop();
  for (int i = 0; i < 20 && uplink.pending_task_updates() > 0 && uplink.stats().connected; ++i) {
    env->clock().SleepFor(absl::Milliseconds(50));
  }
  uplink.Stop();
  const UplinkStats stats = uplink.stats();
  PrintProgress(absl::StrCat("serve: stopped; ", stats.stored, " stored, ", stats.duplicates, " duplicates, ",
                             stats.rejected, " rejected",
                             stats.rejected > 0 ? absl::StrCat(" (reasons in ", JoinPath((*outbox)->dir(), kOutboxRejectedFile), ")")
                                                : ""));
  return exit_code;
}

}  // namespace benchfleet::agent
