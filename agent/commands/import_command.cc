// benchfleet-agent import: sends records read from series folders or .jsonl files straight over
// the gateway (the files are the durable copy, so no outbox), with provenance KIND_FILE.
#include <cstdio>
#include <map>

#include "absl/strings/str_cat.h"
#include "agent/commands/agent_context.h"
#include "agent/commands/commands.h"
#include "agent/outbox/memory_queue.h"
#include "agent/uplink/uplink.h"
#include "common/series_folder.h"

namespace benchfleet::agent {

int RunImportCommand(const ImportFlags& flags) {
  Env* env = Env::Default();
  auto config = LoadConfigFor(env, flags.config);
  if (!config.ok()) {
    PrintError("import", config.status());
    return kExitBadInput;
  }
  const std::string coordinator = ResolveCoordinator(flags.coordinator, *config);
  if (coordinator.empty()) {
    PrintError("import", absl::InvalidArgumentError(
                             "no coordinator: pass --coordinator, set BENCHFLEET_COORDINATOR or coordinator: in agent.yaml"));
    return kExitBadInput;
  }

  // Read everything first: a bad file stops the import before anything is sent.
  MemoryRecordQueue queue;
  std::map<std::string, std::string> where;  // run_id -> "file:line", for rejections
  size_t total = 0;
  for (const std::string& path : flags.paths) {
    auto records = ReadRecords(env, path);
    if (!records.ok()) {
      PrintError("import", absl::Status(records.status().code(),
                                        absl::StrCat(records.status().message(), "; nothing was sent")));
      return kExitBadInput;
    }
    for (SourcedRecord& sourced : *records) {
      v1::Provenance* provenance = sourced.record.mutable_provenance();
      provenance->set_kind(v1::Provenance::KIND_FILE);
      provenance->set_file(sourced.file);
      provenance->set_line(sourced.line);
      where.emplace(sourced.record.run_id(), absl::StrCat(sourced.file, ":", sourced.line));
      queue.Add(sourced.record);
      ++total;
    }
    PrintProgress(absl::StrCat("import: read ", records->size(), " records from ", path));
  }
  if (total == 0) {
    std::printf("imported 0 records: 0 stored, 0 already stored, 0 rejected\n");
    return kExitOk;
  }

  auto setup = SetUpAgent(env, *config, flags.state_dir);
  if (!setup.ok()) {
    PrintError("import", setup.status());
    return kExitFailed;
  }
  auto options_or = MakeUplinkOptionsFor(env, *config, *setup, coordinator, flags.ca_cert);
  if (!options_or.ok()) {
    PrintError("import", options_or.status());
    return kExitBadInput;
  }
  UplinkOptions options = std::move(*options_or);
  options.max_connect_failures = flags.connect_attempts;
  Uplink uplink(std::move(options), &queue);
  if (auto s = uplink.Start(); !s.ok()) {
    PrintError("import", s);
    return kExitBadInput;
  }
  PrintProgress(absl::StrCat("import: sending ", total, " records to ", coordinator));
  const absl::Status drained = uplink.WaitUntilDrained(absl::Seconds(flags.timeout_seconds));
  uplink.Stop();

  const UplinkStats stats = uplink.stats();
  std::printf("imported %zu records: %llu stored, %llu already stored, %llu rejected\n", total,
              static_cast<unsigned long long>(stats.stored), static_cast<unsigned long long>(stats.duplicates),
              static_cast<unsigned long long>(stats.rejected));
  for (const UplinkRejection& r : stats.rejections) {
    auto it = where.find(r.run_id);
    std::printf("  rejected %s (run %s): %s\n", it == where.end() ? "?" : it->second.c_str(),
                r.run_id.empty() ? "?" : r.run_id.c_str(), r.reason.c_str());
  }
  if (!drained.ok()) {
    PrintError("import", absl::Status(drained.code(), absl::StrCat(drained.message(), "; ", queue.depth(), " of ",
                                                                   total, " records not acknowledged")));
    return kExitFailed;
  }
  return stats.rejected == 0 ? kExitOk : kExitFailed;
}

}  // namespace benchfleet::agent
