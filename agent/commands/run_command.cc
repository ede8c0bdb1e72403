// benchfleet-agent run SPEC.yaml --out DIR: runs a series on this machine with the spec's
// backend (agent/runner/), writes the series folder and, with a coordinator, queues every record
// in the outbox and streams it (paused during each timed run), then prints every call's figure.
// Exit code: 0 clean; 1 a run FAILED, a combination stopped early, the series was interrupted
// (SIGINT/SIGTERM: stops at once, or after the timed run in progress; a second one exits at once)
// or records were not delivered; 2 bad spec, flags or configuration (nothing ran).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "absl/strings/str_cat.h"
#include "agent/backends/backend.h"
#include "agent/commands/agent_context.h"
#include "agent/commands/commands.h"
#include "agent/commands/stop_signals.h"
#include "agent/backends/services.h"
#include "agent/config/allow_list.h"
#include "agent/outbox/outbox.h"
#include "agent/runner/series_runner.h"
#include "agent/runner/series_summary.h"
#include "common/spec/series_spec.h"
#include "agent/uplink/uplink.h"
#include "common/series_folder.h"

namespace benchfleet::agent {
namespace {

// How long the series waits for the uplink's first connection before its first run.
constexpr absl::Duration kConnectWait = absl::Seconds(5);
// After a stop signal, how long `run` still waits for Acks before it leaves the rest in the outbox.
constexpr absl::Duration kDrainAfterStop = absl::Seconds(1);

int Fail(const absl::Status& status, int code) {
  PrintError("run", status);
  return code;
}

}  // namespace

int RunRunCommand(const RunFlags& flags) {
  Env* env = Env::Default();
  // SIGINT/SIGTERM: the first stops the series at once (a pause or a wait ends, a timed run in
  // progress finishes and is kept, the server is stopped); the second exits at once. Blocked before
  // any thread starts, so only the watcher takes them.
  StopSignals::Block();
  StopSignals signals(
      "run",
      [](const char* name) {
        PrintProgress(absl::StrCat("benchfleet-agent run: ", name,
                                   ": stopping (a pause or a wait ends now, a timed run in progress finishes, the "
                                   "server is stopped; send the signal again to stop at once)"));
      },
      [] { return std::string("the records of the runs made so far are in the series folder"); });
  signals.Start();

  // Everything that can be wrong with the spec, flags or configuration is found before anything
  // runs: exit code 2.
  auto spec = LoadSeriesSpec(env, flags.spec);
  if (!spec.ok()) return Fail(spec.status(), kExitBadInput);
  if (flags.out.empty()) return Fail(absl::InvalidArgumentError("--out DIR is required"), kExitBadInput);
  auto config = LoadConfigFor(env, flags.config);
  if (!config.ok()) return Fail(config.status(), kExitBadInput);
  auto sampling_mode = ResolveDeviceSampling(flags.device_sampling, *config);
  if (!sampling_mode.ok()) return Fail(sampling_mode.status(), kExitBadInput);
  const AllowList allow(*config);
  if (auto s = allow.CheckBackend(spec->backend); !s.ok()) return Fail(s, kExitBadInput);
  auto factory = FindBackend(spec->backend);
  if (!factory.ok()) {
    return Fail(absl::Status(factory.status().code(), absl::StrCat(spec->source, ": ", factory.status().message())),
                kExitBadInput);
  }
  if (auto s = CheckSeriesFolderIsNew(env, flags.out); !s.ok()) return Fail(s, kExitBadInput);
  if (auto s = env->CreateDirs(flags.out); !s.ok()) {
    return Fail(absl::Status(s.code(), absl::StrCat("--out ", flags.out, ": ", s.message())), kExitBadInput);
  }
  const AgentServices services(env);
  BackendContext context;
  context.env = env;
  context.allow = &allow;
  context.services = services.services();
  context.work_dir = flags.out;
  context.labels = config->labels;
  context.log = [](std::string_view line) { PrintProgress(line); };
  context.stop = signals.token();
  // A progress bar of the current run's steps, redrawn in place, only on a terminal: logs get
  // the one line per run instead.
  if (::isatty(STDERR_FILENO)) {
    context.step_progress = [](std::string_view what, int64_t value, int64_t max) {
      constexpr int kWidth = 30;
      const int filled = max > 0 ? static_cast<int>(kWidth * std::min(value, max) / max) : 0;
      std::fprintf(stderr, "\r  [%s%s] %lld/%lld %.*s\033[K", std::string(filled, '#').c_str(),
                   std::string(kWidth - filled, '.').c_str(), static_cast<long long>(value),
                   static_cast<long long>(max), static_cast<int>(what.size()), what.data());
      if (value >= max) std::fprintf(stderr, "\r\033[K");
    };
  }
  auto backend = (*factory)(spec->backend_section, context);
  if (!backend.ok()) {
    return Fail(absl::Status(backend.status().code(), absl::StrCat(spec->source, ": ", backend.status().message())),
                kExitBadInput);
  }

  const std::string coordinator = ResolveCoordinator(flags.coordinator, *config);
  auto setup = SetUpAgent(env, *config, flags.state_dir);
  if (!setup.ok()) return Fail(setup.status(), kExitFailed);
  ChannelSecurity security;
  if (!coordinator.empty()) {
    auto resolved = ResolveChannelSecurity(env, *config, setup->state_dir, flags.ca_cert, coordinator);
    if (!resolved.ok()) return Fail(resolved.status(), kExitBadInput);
    security = std::move(*resolved);
  }

  // Declared before the runner and the uplink, which use it.
  std::unique_ptr<Outbox> outbox;
  if (!coordinator.empty()) {
    auto opened = Outbox::Open(env, JoinPath(setup->state_dir, "outbox"));
    if (!opened.ok()) return Fail(opened.status(), kExitFailed);
    outbox = std::move(*opened);
  }
  std::unique_ptr<Uplink> uplink;
  bool uplink_started = false;
  // Declared before the runner, which calls its watcher around every timed run.
  const RunSampling sampling =
      StartRunSampling(env, *sampling_mode, [](std::string_view line) { PrintProgress(line); });

  RunnerOptions options;
  options.env = env;
  options.allow = &allow;
  options.agent_id = setup->agent_id;
  options.conditions = setup->conditions;
  options.out_dir = flags.out;
  options.outbox = outbox.get();
  options.progress = [](std::string_view line) { PrintProgress(line); };
  options.stop = signals.token();
  options.run_watcher = sampling.watcher();
  if (!coordinator.empty()) {
    // Started once the conditions hold the backend's version, so the Hello carries them.
    options.on_conditions = [&](const v1::MachineConditions& conditions) -> absl::Status {
      AgentSetup final_setup = *setup;
      final_setup.conditions = conditions;
      auto made = MakeUplinkOptions(final_setup, coordinator, security);
      if (!made.ok()) return made.status();
      UplinkOptions uplink_options = std::move(*made);
      uplink_options.max_connect_failures = flags.connect_attempts;
      uplink = std::make_unique<Uplink>(std::move(uplink_options), outbox.get());
      absl::Status started = uplink->Start();
      uplink_started = started.ok();
      if (!started.ok()) return started;
      // Connect now, between runs, rather than during the first timed run. Not connected after a
      // while: the series goes on, records wait in the outbox and are sent when it connects.
      const absl::Duration give_up = env->clock().Monotonic() + kConnectWait;
      while (!uplink->stats().connected && uplink->status().ok() && env->clock().Monotonic() < give_up) {
        if (env->clock().WaitForStop(signals.token(), absl::Milliseconds(20))) break;
      }
      return uplink->status();
    };
    options.on_timed_window = [&](bool timed) {
      if (uplink != nullptr) uplink->SetPaused(timed);
    };
  }
  auto runner = SeriesRunner::Create(*spec, backend->get(), std::move(options));
  if (!runner.ok()) return Fail(runner.status(), kExitBadInput);

  auto result = (*runner)->Run();
  if (!result.ok()) {
    if (uplink_started) uplink->Stop();
    return Fail(result.status(), kExitFailed);
  }

  // Delivery: everything queued reaches the coordinator, or the operator is told what did not.
  absl::Status delivery = result->delivery_status;
  std::string delivery_line;
  if (uplink_started) {
    const absl::Duration drain = signals.signals() > 0
                                     ? std::min(kDrainAfterStop, absl::Seconds(flags.timeout_seconds))
                                     : absl::Seconds(flags.timeout_seconds);
    const absl::Status drained = uplink->WaitUntilDrained(drain);
    uplink->Stop();
    const UplinkStats stats = uplink->stats();
    delivery_line = absl::StrCat("sent to coordinator ", coordinator, ": ", stats.stored, " stored, ",
                                 stats.duplicates, " duplicates, ", stats.rejected, " rejected");
    for (const UplinkRejection& r : stats.rejections) {
      absl::StrAppend(&delivery_line, "\n  rejected run ", r.run_id, ": ", r.reason);
    }
    if (delivery.ok() && !drained.ok()) {
      delivery = absl::Status(drained.code(), absl::StrCat(drained.message(), "; ", outbox->depth(),
                                                           " records stay in the outbox for `serve`"));
    }
    if (delivery.ok() && stats.rejected > 0) {
      delivery = absl::FailedPreconditionError(
          absl::StrCat("the coordinator rejected ", stats.rejected, " records (kept in ", outbox->dir(), "/",
                       kOutboxRejectedFile, ")"));
    }
  } else if (coordinator.empty()) {
    // A local run: the records stay in the series folder only.
    delivery_line = absl::StrCat("no coordinator: send the records later with `benchfleet-agent import ",
                                 flags.out, " --coordinator ADDR`");
  }

  std::fputs(FormatSeriesSummary(*result).c_str(), stdout);
  std::printf("series folder %s: %s, %s, %s, %s\n", flags.out.c_str(), kSpecFile, kConditionsFile, kRunsJsonlFile,
              kRunsCsvFile);
  if (!delivery_line.empty()) std::printf("%s\n", delivery_line.c_str());
  std::fflush(stdout);
  if (!delivery.ok()) PrintError("run", delivery);
  return SeriesExitCode(*result, delivery);
}

}  // namespace benchfleet::agent
