// benchfleet: the operator's command. Argument parsing and output formatting only; it reads
// from a coordinator's Admin service, drives its Fleet service (series, schedule, runs
// invalidate: fleet_commands.h); `guide` reads measurement files, a coordinator or its database
// and writes the sizing guide.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cli/admin_client.h"
#include "cli/fleet_commands.h"
#include "cli/guide_input.h"
#include "cli/output_format.h"
#include "common/env.h"
#include "common/proto_time.h"
#include "common/version.h"
#include "synthesis/guide.h"
#include "synthesis/render/render.h"

namespace benchfleet::cli {
namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

std::string DefaultCoordinator() {
  const char* env = std::getenv("BENCHFLEET_COORDINATOR");
  return env != nullptr && *env != '\0' ? env : "127.0.0.1:7443";
}

// Parses "2026-11-30" or an RFC 3339 time ("2026-11-30T12:00:00Z").
absl::StatusOr<absl::Time> ParseTime(const std::string& text) {
  absl::Time t;
  std::string err;
  if (absl::ParseTime(absl::RFC3339_full, text, &t, &err)) return t;
  if (absl::ParseTime("%Y-%m-%d", text, absl::UTCTimeZone(), &t, &err)) return t;
  return absl::InvalidArgumentError(
      absl::StrCat("cannot read the time \"", text, "\": use 2026-11-30 or 2026-11-30T12:00:00Z"));
}

absl::Status ParseLabels(const std::vector<std::string>& labels,
                         google::protobuf::Map<std::string, std::string>* out) {
  for (const auto& label : labels) {
    size_t eq = label.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("label \"", label, "\" is not of the form key=value"));
    }
    (*out)[label.substr(0, eq)] = label.substr(eq + 1);
  }
  return absl::OkStatus();
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "benchfleet: %s\n", std::string(status.message()).c_str());
  return status.code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitError;
}

// benchfleet guide: loads the records (guide_input.h), builds the guide (synthesis/guide.h) and
// writes its files into out_dir, each atomically.
int RunGuide(const GuideSource& source, const std::string& out_dir, const std::vector<std::string>& lang_codes) {
  std::vector<synthesis::Lang> langs;
  for (const auto& code : lang_codes) {
    auto lang = synthesis::ParseLang(code);
    if (!lang) return Fail(absl::InvalidArgumentError(absl::StrCat("unknown language \"", code, "\": use fr or en")));
    if (std::find(langs.begin(), langs.end(), *lang) == langs.end()) langs.push_back(*lang);
  }
  if (langs.empty()) return Fail(absl::InvalidArgumentError("--lang names no language: use fr, en or fr,en"));
  Env* env = Env::Default();
  auto input = LoadGuideInput(env, source);
  if (!input.ok()) return Fail(input.status());
  for (const auto& skipped : input->skipped) {
    std::string where = skipped.line == 0 ? skipped.path : skipped.path + ":" + std::to_string(skipped.line);
    std::fprintf(stderr, "benchfleet: skipped %s: %s\n", where.c_str(), skipped.reason.c_str());
  }
  std::map<std::string, std::string> files = synthesis::BuildGuideFiles(*input, langs);
  if (auto s = env->CreateDirs(out_dir); !s.ok()) return Fail(s);
  for (const auto& [name, content] : files) {
    if (auto s = env->WriteFileAtomically(out_dir + "/" + name, content); !s.ok()) return Fail(s);
  }
  for (synthesis::Lang lang : langs) {
    std::string code(synthesis::LangCode(lang));
    std::printf("%s/guide.%s.md\n%s/guide.%s.html\n", out_dir.c_str(), code.c_str(), out_dir.c_str(), code.c_str());
  }
  return 0;
}

}  // namespace

int Main(int argc, char** argv) {
  CLI::App app{
      "benchfleet: operate a benchfleet coordinator.\n"
      "Lists the runs agents have recorded and the agents (machines) of the fleet, runs series on the\n"
      "fleet now or on a schedule (series, schedule), and writes the sizing guide (guide)."};
  app.set_version_flag("--version", std::string(kVersion));
  app.require_subcommand(1);
  app.fallthrough();  // --coordinator may come after the subcommand too
  std::string coordinator = DefaultCoordinator();
  app.add_option("--coordinator", coordinator,
                 "Coordinator address host:port (default: $BENCHFLEET_COORDINATOR or 127.0.0.1:7443)");
  std::string format_name = "table";

  // benchfleet runs
  auto* runs = app.add_subcommand("runs", "List runs, oldest first: every run, its headline figures in the table (--format csv or json for all)");
  std::vector<std::string> agent_ids, labels;
  std::string task, backend, series, since, until;
  runs->add_option("--agent", agent_ids, "Only runs of this agent id (repeatable)");
  runs->add_option("--label", labels, "Only agents with this label, key=value (repeatable)");
  runs->add_option("--task", task, "Only runs of this task, e.g. txt2img-sd15-512-20steps");
  runs->add_option("--backend", backend, "Only runs of this backend, e.g. llama-server");
  runs->add_option("--series", series, "Only runs of this series id");
  runs->add_option("--since", since, "Only runs that started at or after this time");
  runs->add_option("--until", until, "Only runs that started before this time");
  runs->add_option("--format", format_name, "table, csv (the runs.csv form) or json (one run per line)");

  // benchfleet agents
  auto* agents = app.add_subcommand("agents", "List the agents (machines) the coordinator knows");
  std::vector<std::string> agent_labels;
  agents->add_option("--label", agent_labels, "Only agents with this label, key=value (repeatable)");
  agents->add_option("--format", format_name, "table, csv or json");

  // benchfleet guide
  auto* guide = app.add_subcommand(
      "guide",
      "Write the sizing guide: guide.<lang>.md and guide.<lang>.html, the SVG charts and sources.csv (the "
      "source of every figure) into --out, from one input: --files, --coordinator or --database-url");
  std::vector<std::string> guide_files;
  std::string guide_coordinator, guide_database_url, guide_since, guide_targets;
  std::vector<std::string> guide_tasks;
  std::string guide_out;
  std::vector<std::string> guide_langs = {"fr", "en"};
  guide->add_option("--files", guide_files,
                    "Measurement files or series folders: llama-bench json/jsonl/csv, ComfyUI or llama-server "
                    "logs, generic CSV, runs.jsonl folders");
  guide->add_option("--coordinator", guide_coordinator,
                    "Read the runs from this coordinator's Admin service, host:port (only when given here, not "
                    "from $BENCHFLEET_COORDINATOR)");
  guide->add_option("--database-url", guide_database_url,
                    "Read the runs from a coordinator's PostgreSQL database, e.g. postgresql://user@host/benchfleet "
                    "(default: $BENCHFLEET_DATABASE_URL when neither --files nor --coordinator is given)");
  guide->add_option("--task", guide_tasks, "Only runs of this task (repeatable)");
  guide->add_option("--since", guide_since,
                    "Only runs that started at or after this time: 2026-11-30 (UTC) or 2026-11-30T12:00:00Z");
  guide->add_option("--targets", guide_targets,
                    "Targets file (YAML: seconds per image, tokens/s, machine classes and prices) for the "
                    "verdicts, thresholds and cost (default: the built-in targets)");
  guide->add_option("--out", guide_out, "Folder to write the guide into (created when missing)")->required();
  guide->add_option("--lang", guide_langs, "Languages, comma-separated: fr, en (default fr,en)")->delimiter(',');

  // benchfleet series ..., schedule ..., runs invalidate ...
  FleetCommands fleet;
  AddFleetCommands(app, *runs, &fleet);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }

  if (guide->parsed()) {
    GuideSource source;
    source.files = guide_files;
    // The app's --coordinator has a default; the guide reads a coordinator only when told to.
    if (guide->get_option("--coordinator")->count() > 0) {
      source.coordinator = guide_coordinator;
    } else if (app.get_option("--coordinator")->count() > 0) {
      source.coordinator = coordinator;
    }
    source.database_url = guide_database_url;
    if (const char* env = std::getenv("BENCHFLEET_DATABASE_URL"); env != nullptr) source.database_url_from_env = env;
    source.tasks = guide_tasks;
    if (!guide_since.empty()) {
      auto t = ParseTime(guide_since);
      if (!t.ok()) return Fail(t.status());
      source.since = *t;
    }
    source.targets_path = guide_targets;
    return RunGuide(source, guide_out, guide_langs);
  }

  if (std::optional<int> code = RunFleetCommand(fleet, coordinator); code.has_value()) return *code;

  auto format = ParseFormat(format_name);
  if (!format.ok()) return Fail(format.status());
  AdminClient client(coordinator);

  if (runs->parsed()) {
    v1::ListRunsRequest request;
    for (const auto& id : agent_ids) request.add_agent_ids(id);
    if (auto s = ParseLabels(labels, request.mutable_labels()); !s.ok()) return Fail(s);
    request.set_task(task);
    request.set_backend(backend);
    request.set_series_id(series);
    if (!since.empty()) {
      auto t = ParseTime(since);
      if (!t.ok()) return Fail(t.status());
      SetTimestamp(*t, request.mutable_since());
    }
    if (!until.empty()) {
      auto t = ParseTime(until);
      if (!t.ok()) return Fail(t.status());
      SetTimestamp(*t, request.mutable_until());
    }
    auto result = client.ListAllRuns(request);
    if (!result.ok()) return Fail(result.status());
    auto text = FormatRuns(*result, *format);
    if (!text.ok()) return Fail(text.status());
    std::fwrite(text->data(), 1, text->size(), stdout);
    return 0;
  }

  v1::ListMachinesRequest request;
  if (auto s = ParseLabels(agent_labels, request.mutable_labels()); !s.ok()) return Fail(s);
  auto result = client.ListMachines(request);
  if (!result.ok()) return Fail(result.status());
  auto text = FormatAgents(*result, *format);
  if (!text.ok()) return Fail(text.status());
  std::fwrite(text->data(), 1, text->size(), stdout);
  return 0;
}

}  // namespace benchfleet::cli

int main(int argc, char** argv) { return benchfleet::cli::Main(argc, argv); }
