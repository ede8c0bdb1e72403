// The fleet commands of `benchfleet`: series (submit, cancel, list, show, watch), schedule (add,
// list, rm) and runs invalidate. AddFleetCommands declares them on the CLI11 app; once parsed,
// RunFleetCommand calls the coordinator's Fleet service and prints (fleet_format.h).
// Thread-compatible.
#ifndef BENCHFLEET_CLI_FLEET_COMMANDS_H_
#define BENCHFLEET_CLI_FLEET_COMMANDS_H_

#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace benchfleet::cli {

struct FleetCommands {
  CLI::App* series_submit = nullptr;
  CLI::App* series_cancel = nullptr;
  CLI::App* series_list = nullptr;
  CLI::App* series_show = nullptr;
  CLI::App* series_watch = nullptr;
  CLI::App* schedule_add = nullptr;
  CLI::App* schedule_list = nullptr;
  CLI::App* schedule_rm = nullptr;
  CLI::App* runs_invalidate = nullptr;

  std::string spec_path;
  bool dry_run = false;
  bool active_only = false;
  std::string series_id;
  std::string cron;
  std::string schedule_id;
  std::vector<std::string> run_ids;
  std::string invalidate_series;
  std::string reason;
};

// Declares the commands: `series` and `schedule` on app, `invalidate` under `runs`.
void AddFleetCommands(CLI::App& app, CLI::App& runs, FleetCommands* commands);

// Runs the fleet command that was parsed against the coordinator at `address`; returns its exit
// code, or nullopt when no fleet command was given.
std::optional<int> RunFleetCommand(const FleetCommands& commands, const std::string& address);

}  // namespace benchfleet::cli

#endif  // BENCHFLEET_CLI_FLEET_COMMANDS_H_
