#include "cli/fleet_commands.h"

#include <unistd.h>

#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/admin_client.h"
#include "cli/connection.h"
#include "cli/fleet_client.h"
#include "cli/fleet_format.h"
#include "cli/run_spread.h"
#include "common/env.h"
#include "common/yaml_text.h"

namespace benchfleet::cli {
namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "benchfleet: %s\n", HideSecrets(std::string(status.message())).c_str());
  return status.code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitError;
}

void Print(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

absl::StatusOr<std::string> ReadSpec(const std::string& path) {
  absl::StatusOr<std::string> text = Env::Default()->ReadFile(path);
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        absl::StrCat("cannot read the spec ", path, ": ", text.status().message()));
  }
  // Checked here, before anything is sent: a binary or non-UTF-8 file would otherwise only get a
  // libprotobuf complaint (a spec travels in a string field, which must be UTF-8).
  if (absl::Status s = CheckYamlText(*text, path); !s.ok()) return s;
  return text;
}

// `series show`'s closing block: the spread of each setting over the series' stored runs (Admin
// ListRuns), its agents named as the status names them. A coordinator that cannot list them gets a
// line saying so; the series above stands.
std::string SeriesSpread(const std::string& address, const v1::SeriesStatus& status) {
  AdminClient admin(address);
  v1::ListRunsRequest request;
  request.set_series_id(status.series_id());
  absl::StatusOr<std::vector<v1::RunRecord>> runs = admin.ListAllRuns(request);
  if (!runs.ok()) {
    return absl::StrCat("\nspread: the series' runs could not be listed: ",
                        HideSecrets(std::string(runs.status().message())), "\n");
  }
  RunAgents agents;
  for (const v1::TaskStatus& t : status.tasks()) {
    agents.by_agent_id[t.agent_id()] = AgentName{t.hostname(), t.agent_class()};
  }
  const std::string spread = FormatRunSpread(*runs, agents);
  return spread.empty() ? "" : absl::StrCat("\n", spread);
}

int Submit(FleetClient& client, const FleetCommands& c) {
  absl::StatusOr<std::string> spec = ReadSpec(c.spec_path);
  if (!spec.ok()) return Fail(spec.status());
  v1::SubmitSeriesRequest request;
  request.set_spec_yaml(*spec);
  request.set_source_name(c.spec_path);
  request.set_dry_run(c.dry_run);
  absl::StatusOr<v1::SubmitSeriesResponse> response = client.SubmitSeries(request);
  if (!response.ok()) return Fail(response.status());
  Print(FormatSubmitted(*response, c.dry_run));
  return 0;
}

int Watch(FleetClient& client, const std::string& series_id) {
  WatchRenderer renderer(::isatty(STDOUT_FILENO) == 1);
  absl::StatusOr<v1::SeriesStatus> last =
      client.WatchSeries(series_id, [&](const v1::SeriesStatus& s) { Print(renderer.Render(s)); });
  if (!last.ok()) return Fail(last.status());
  Print(FormatWatchSummary(*last));
  return EveryTaskSucceeded(*last) ? 0 : kExitError;
}

int Invalidate(FleetClient& client, const FleetCommands& c) {
  if (c.run_ids.empty() == c.invalidate_series.empty()) {
    return Fail(absl::InvalidArgumentError(
        "runs invalidate takes either RUN_ID... or --series ID (not both)"));
  }
  if (c.reason.empty()) {
    return Fail(absl::InvalidArgumentError("runs invalidate needs --reason TEXT"));
  }
  v1::InvalidateRunsRequest request;
  for (const std::string& id : c.run_ids) request.add_run_ids(id);
  request.set_series_id(c.invalidate_series);
  request.set_reason(c.reason);
  absl::StatusOr<std::vector<std::string>> ids = client.InvalidateRuns(request);
  if (!ids.ok()) return Fail(ids.status());
  Print(FormatInvalidated(*ids, c.reason));
  return 0;
}

}  // namespace

void AddFleetCommands(CLI::App& app, CLI::App& runs, FleetCommands* c) {
  CLI::App* series = app.add_subcommand(
      "series",
      "Fleet series: one spec run on every matching agent (submit, list, show, watch, "
      "cancel)");
  series->require_subcommand(1);
  c->series_submit = series->add_subcommand(
      "submit",
      "Validate SPEC.yaml, store it and send it to every agent its `targets` select; "
      "prints the series id and the agents");
  c->series_submit->add_option("spec", c->spec_path,
                               "The series spec (YAML), at most 1 MiB (exit 2 when larger, nothing stored): "
                               "large inputs such as prompt lists go in files the agents' allow.workflow_dirs "
                               "hold, named in the spec")
      ->required();
  c->series_submit->add_flag("--dry-run", c->dry_run,
                             "Only show the agents the series would go to; store nothing");
  c->series_cancel =
      series->add_subcommand("cancel", "Cancel a series: tasks not ended are CANCELLED");
  c->series_cancel->add_option("id", c->series_id, "Series id")->required();
  c->series_list = series->add_subcommand("list", "List the series, newest first");
  c->series_list->add_flag("--active", c->active_only, "Only series that have not ended");
  c->series_show = series->add_subcommand(
      "show", "One series: per agent its state, runs done/total, failures, flags, regressions");
  c->series_show->add_option("id", c->series_id, "Series id")->required();
  c->series_watch = series->add_subcommand(
      "watch",
      "Follow a series live, one line per agent, until it ends; exit 0 only when every "
      "agent succeeded");
  c->series_watch->add_option("id", c->series_id, "Series id")->required();

  CLI::App* schedule =
      app.add_subcommand("schedule", "Fleet-wide series on a cron schedule, UTC (add, list, rm)");
  schedule->require_subcommand(1);
  c->schedule_add =
      schedule->add_subcommand("add", "Run SPEC.yaml on the fleet at every slot of --cron");
  c->schedule_add->add_option("--cron", c->cron, "5 fields, UTC, e.g. \"0 3 * * *\"")->required();
  c->schedule_add->add_option("spec", c->spec_path, "The series spec (YAML)")->required();
  c->schedule_list = schedule->add_subcommand("list", "List the schedules");
  c->schedule_rm = schedule->add_subcommand("rm", "Remove a schedule (its past series stay)");
  c->schedule_rm->add_option("id", c->schedule_id, "Schedule id")->required();

  c->runs_invalidate =
      runs.add_subcommand("invalidate",
                          "Mark runs invalid (kept, shown with the reason, left out of baselines, "
                          "aggregates and the guide)");
  c->runs_invalidate->add_option("run_ids", c->run_ids, "Run ids");
  c->runs_invalidate->add_option("--series", c->invalidate_series, "Every run of this series");
  c->runs_invalidate->add_option("--reason", c->reason, "Why, e.g. \"bad PCIe cable\"")->required();
}

std::optional<int> RunFleetCommand(const FleetCommands& c, const std::string& address) {
  const bool any = c.series_submit->parsed() || c.series_cancel->parsed() ||
                   c.series_list->parsed() || c.series_show->parsed() || c.series_watch->parsed() ||
                   c.schedule_add->parsed() || c.schedule_list->parsed() ||
                   c.schedule_rm->parsed() || c.runs_invalidate->parsed();
  if (!any) return std::nullopt;
  FleetClient client(address);
  if (c.series_submit->parsed()) return Submit(client, c);
  if (c.series_watch->parsed()) return Watch(client, c.series_id);
  if (c.runs_invalidate->parsed()) return Invalidate(client, c);
  if (c.series_cancel->parsed() || c.series_show->parsed()) {
    absl::StatusOr<v1::SeriesStatus> status = c.series_cancel->parsed()
                                                  ? client.CancelSeries(c.series_id)
                                                  : client.GetSeries(c.series_id);
    if (!status.ok()) return Fail(status.status());
    Print(FormatSeries(*status));
    if (c.series_show->parsed()) Print(SeriesSpread(address, *status));
    return 0;
  }
  if (c.series_list->parsed()) {
    absl::StatusOr<std::vector<v1::SeriesStatus>> series = client.ListSeries(c.active_only);
    if (!series.ok()) return Fail(series.status());
    Print(FormatSeriesList(*series));
    return 0;
  }
  if (c.schedule_add->parsed()) {
    absl::StatusOr<std::string> spec = ReadSpec(c.spec_path);
    if (!spec.ok()) return Fail(spec.status());
    v1::AddScheduleRequest request;
    request.set_cron(c.cron);
    request.set_spec_yaml(*spec);
    request.set_source_name(c.spec_path);
    absl::StatusOr<v1::Schedule> schedule = client.AddSchedule(request);
    if (!schedule.ok()) return Fail(schedule.status());
    Print(FormatScheduleAdded(*schedule));
    return 0;
  }
  if (c.schedule_list->parsed()) {
    absl::StatusOr<std::vector<v1::Schedule>> schedules = client.ListSchedules();
    if (!schedules.ok()) return Fail(schedules.status());
    Print(FormatSchedules(*schedules));
    return 0;
  }
  absl::Status removed = client.RemoveSchedule(c.schedule_id);
  if (!removed.ok()) return Fail(removed);
  Print(absl::StrCat("schedule ", c.schedule_id, " removed\n"));
  return 0;
}

}  // namespace benchfleet::cli
