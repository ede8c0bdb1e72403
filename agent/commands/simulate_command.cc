// benchfleet-agent simulate: generates a SIMULATED series (agent/simulate/), writes its series
// folder, queues it in the outbox and, with a coordinator, sends it and waits for the Acks.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "agent/commands/agent_context.h"
#include "agent/commands/commands.h"
#include "agent/outbox/outbox.h"
#include "agent/simulate/simulated_series.h"
#include "agent/uplink/uplink.h"
#include "common/conditions_fingerprint.h"
#include "common/hashing.h"
#include "common/series_folder.h"

namespace benchfleet::agent {
namespace {

// Records per outbox fsync: large enough that 10,000 runs queue in well under a second.
constexpr size_t kAppendChunk = 1000;

}  // namespace

int RunSimulateCommand(const SimulateFlags& flags) {
  Env* env = Env::Default();
  if (flags.runs < 1) {
    PrintError("simulate", absl::InvalidArgumentError(absl::StrCat("--runs must be at least 1 (got ", flags.runs, ")")));
    return kExitBadInput;
  }
  auto config = LoadConfigFor(env, flags.config);
  if (!config.ok()) {
    PrintError("simulate", config.status());
    return kExitBadInput;
  }
  const std::string coordinator = ResolveCoordinator(flags.coordinator, *config);
  auto setup = SetUpAgent(env, *config, flags.state_dir);
  if (!setup.ok()) {
    PrintError("simulate", setup.status());
    return kExitFailed;
  }
  // The series was measured under "simulated" conditions: say so where the fingerprint sees it.
  (*setup->conditions.mutable_backend_versions())[kSimulatedBackend] = "SIMULATED";
  setup->conditions.set_fingerprint(ConditionsFingerprint(setup->conditions));

  SimulatedSeriesOptions options;
  options.series_id = flags.series.empty() ? kDefaultSimulatedSeries : flags.series;
  options.task_id = NewUuid();
  options.runs = flags.runs;
  options.agent_id = setup->agent_id;
  options.conditions_fingerprint = setup->conditions.fingerprint();
  options.end_time = env->clock().Now();
  const std::vector<v1::RunRecord> records = GenerateSimulatedSeries(options);
  PrintProgress(absl::StrCat("simulate: generated ", records.size(), " SIMULATED records of series ",
                             options.series_id, " (task ", kSimulatedTask, ", modes gpu and cpu)"));

  auto folder = SeriesFolderWriter::Open(env, flags.out, setup->conditions);
  absl::Status folder_status = folder.ok() ? (*folder)->AddBatch(records) : folder.status();
  if (auto s = folder_status; !s.ok()) {
    PrintError("simulate", absl::Status(s.code(), absl::StrCat("series folder ", flags.out, ": ", s.message())));
    return kExitFailed;
  }

  auto outbox = Outbox::Open(env, JoinPath(setup->state_dir, "outbox"));
  if (!outbox.ok()) {
    PrintError("simulate", outbox.status());
    return kExitFailed;
  }
  for (size_t i = 0; i < records.size(); i += kAppendChunk) {
    const size_t n = std::min(kAppendChunk, records.size() - i);
    if (auto s = (*outbox)->AppendBatch(std::span<const v1::RunRecord>(records.data() + i, n)); !s.ok()) {
      PrintError("simulate", absl::Status(s.code(), absl::StrCat(s.message(), " (", i, " of ", records.size(),
                                                                 " records were queued)")));
      return kExitFailed;
    }
    if (records.size() > kAppendChunk) {
      PrintProgress(absl::StrCat("simulate: queued ", i + n, "/", records.size(), " records in the outbox"));
    }
  }
  std::printf("SIMULATED series %s: %zu records written to %s (%s, %s, %s)\n", options.series_id.c_str(),
              records.size(), flags.out.c_str(), kConditionsFile, kRunsJsonlFile, kRunsCsvFile);

  if (coordinator.empty()) {
    std::printf("SIMULATED records kept in the outbox %s (%zu waiting): no coordinator given; "
                "`benchfleet-agent serve` sends them\n",
                (*outbox)->dir().c_str(), (*outbox)->depth());
    return kExitOk;
  }

  auto uplink_options_or = MakeUplinkOptionsFor(env, *config, *setup, coordinator, flags.ca_cert);
  if (!uplink_options_or.ok()) {
    PrintError("simulate", uplink_options_or.status());
    return kExitBadInput;
  }
  UplinkOptions uplink_options = std::move(*uplink_options_or);
  uplink_options.max_connect_failures = flags.connect_attempts;
  Uplink uplink(std::move(uplink_options), outbox->get());
  if (auto s = uplink.Start(); !s.ok()) {
    PrintError("simulate", s);
    return kExitBadInput;
  }
  const absl::Status drained = uplink.WaitUntilDrained(absl::Seconds(flags.timeout_seconds));
  uplink.Stop();
  const UplinkStats stats = uplink.stats();
  std::printf("SIMULATED records sent to coordinator %s: %llu stored, %llu duplicates, %llu rejected\n",
              coordinator.c_str(), static_cast<unsigned long long>(stats.stored),
              static_cast<unsigned long long>(stats.duplicates), static_cast<unsigned long long>(stats.rejected));
  for (const UplinkRejection& r : stats.rejections) {
    std::printf("  rejected run %s: %s\n", r.run_id.c_str(), r.reason.c_str());
  }
  if (!drained.ok()) {
    PrintError("simulate", absl::Status(drained.code(), absl::StrCat(drained.message(), "; ", (*outbox)->depth(),
                                                                     " records stay in the outbox for `serve`")));
    return kExitFailed;
  }
  return stats.rejected == 0 ? kExitOk : kExitFailed;
}

}  // namespace benchfleet::agent
