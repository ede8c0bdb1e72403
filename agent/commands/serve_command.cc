// benchfleet-agent serve: the long-running agent. Drains the outbox to the coordinator and runs
// the tasks the coordinator assigns on the same stream (agent/tasks/, each judged against this
// agent's allow-list first) until SIGTERM/SIGINT (or, with --exit-when-drained, until the outbox
// is empty and no task is running). With --metrics-listen it serves its own Prometheus /metrics
// (agent/metrics/).
#include <signal.h>

#include <cerrno>
#include <ctime>
#include <memory>

#include "absl/strings/str_cat.h"
#include "agent/commands/agent_context.h"
#include "agent/commands/commands.h"
#include "agent/backends/backend.h"
#include "agent/config/allow_list.h"
#include "agent/metrics/prometheus_agent_metrics.h"
#include "agent/outbox/outbox.h"
#include "agent/tasks/task_executor.h"
#include "agent/uplink/uplink.h"
#include "common/version.h"

namespace benchfleet::agent {
namespace {

// How often the main thread looks at signals, the uplink and the outbox.
constexpr long kPollNanos = 100'000'000;
// How often a changed state is reported on stderr.
constexpr int kReportEveryPolls = 100;  // 10 s

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

  // Block the stop signals before any thread starts, so every thread inherits the mask and only
  // the sigtimedwait below ever sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

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
  TaskExecutorOptions task_options;
  task_options.env = env;
  task_options.allow = &allow;
  task_options.agent_id = setup->agent_id;
  task_options.conditions = setup->conditions;
  task_options.tasks_dir = JoinPath(setup->state_dir, "tasks");
  task_options.outbox = outbox->get();
  task_options.find_backend = [](const std::string& name) { return FindBackend(name); };
  task_options.send_update = [&uplink_for_tasks](const v1::TaskUpdate& update) {
    uplink_for_tasks->SendTaskUpdate(update);
  };
  task_options.on_timed_window = [&uplink_for_tasks](bool timed) { uplink_for_tasks->SetPaused(timed); };
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
  if (auto s = uplink.Start(); !s.ok()) {
    PrintError("serve", s);
    return kExitBadInput;
  }

  int exit_code = kExitOk;
  std::string last_report;
  for (int poll = 0;; ++poll) {
    const struct timespec wait = {0, kPollNanos};
    const int signo = sigtimedwait(&stop_signals, nullptr, &wait);
    if (signo == SIGINT || signo == SIGTERM) {
      PrintProgress(absl::StrCat("serve: ", signo == SIGINT ? "SIGINT" : "SIGTERM", ", stopping; ",
                                 (*outbox)->depth(), " records stay in the outbox"));
      break;
    }
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
    if (poll % kReportEveryPolls == 0) {
      const UplinkStats stats = uplink.stats();
      std::string report = absl::StrCat("serve: outbox ", depth, " records; sent so far: ", stats.stored, " stored, ",
                                        stats.duplicates, " duplicates, ", stats.rejected, " rejected");
      if (report != last_report) PrintProgress(report);
      last_report = std::move(report);
    }
  }
  // The task in progress ends after its current run; its finished update gets a moment to leave
  // (it is kept in the task's folder and sent again when the coordinator re-sends the task).
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
