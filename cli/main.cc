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
#include "cli/connection.h"
#include "cli/fleet_commands.h"
#include "cli/guide_input.h"
#include "cli/output_format.h"
#include "common/database_url.h"
#include "common/env.h"
#include "common/proto_json.h"
#include "common/proto_time.h"
#include "common/series_folder.h"
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
  std::fprintf(stderr, "benchfleet: %s\n", HideSecrets(std::string(status.message())).c_str());
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
  if (auto s = WriteGuideFiles(env, out_dir, files); !s.ok()) return Fail(s);
  for (synthesis::Lang lang : langs) {
    std::string code(synthesis::LangCode(lang));
    std::printf("%s/guide.%s.md\n%s/guide.%s.html\n", out_dir.c_str(), code.c_str(), out_dir.c_str(), code.c_str());
  }
  return 0;
}

void PrintAuditTable(const std::vector<v1::AuditEntry>& entries) {
  std::printf("%-20s  %-44s  %-8s  %-40s  %s\n", "TIME", "ACTOR", "ROLE", "ACTION", "TARGET");
  for (const v1::AuditEntry& e : entries) {
    const std::string role = e.role() == v1::ROLE_OPERATOR ? "operator" : e.role() == v1::ROLE_VIEWER ? "viewer" : "-";
    std::string action = e.action();
    if (const size_t slash = action.rfind('/'); slash != std::string::npos) {
      const size_t dot = action.rfind('.', slash);
      action = action.substr(dot == std::string::npos ? 1 : dot + 1);
    }
    std::printf("%-20s  %-44s  %-8s  %-40s  %s\n",
                FormatUtcSeconds(ToTime(e.time())).c_str(),
                e.actor().c_str(), role.c_str(), action.c_str(), e.target().c_str());
  }
}

// agents enroll / revoke, tokens, audit, import: the operator's calls. nullopt when none was asked.
std::optional<int> RunAuthCommand(AdminClient& client, const CLI::App& agents_enroll, const CLI::App& agents_revoke,
                                  const CLI::App& tokens_create, const CLI::App& tokens_revoke, const CLI::App& audit,
                                  const CLI::App& import, const std::string& enroll_agent_id, uint32_t enroll_uses,
                                  const std::string& enroll_expires, const std::string& revoke_agent_id,
                                  const std::string& token_name, const std::string& token_role, uint32_t audit_limit,
                                  const std::string& format_name, const std::vector<std::string>& import_paths) {
  if (agents_enroll.parsed()) {
    absl::Duration ttl;
    if (!absl::ParseDuration(enroll_expires, &ttl) || ttl <= absl::ZeroDuration()) {
      return Fail(absl::InvalidArgumentError(absl::StrCat("--expires \"", enroll_expires, "\": use e.g. 30m, 24h")));
    }
    if (!enroll_agent_id.empty() && enroll_uses != 1) {
      return Fail(absl::InvalidArgumentError("a token bound to an agent id has one use: drop --uses or the id"));
    }
    v1::CreateEnrollmentTokenRequest request;
    request.set_agent_id(enroll_agent_id);
    request.set_uses(enroll_uses);
    request.set_ttl_seconds(static_cast<uint64_t>(absl::ToInt64Seconds(ttl)));
    auto created = client.CreateEnrollmentToken(request);
    if (!created.ok()) return Fail(created.status());
    std::printf("%s\n", created->token().c_str());
    std::fprintf(stderr,
                 "benchfleet: enrollment token for %s, %u use(s), valid until %s (shown once). On the agent:\n"
                 "  BENCHFLEET_ENROLL_TOKEN=<token> benchfleet-agent enroll --coordinator ADDR --ca-cert ca.pem\n",
                 enroll_agent_id.empty() ? "any agent" : ("agent " + enroll_agent_id).c_str(), enroll_uses,
                 FormatUtcSeconds(ToTime(created->expire_time())).c_str());
    return 0;
  }
  if (agents_revoke.parsed()) {
    auto revoked = client.RevokeAgent(revoke_agent_id);
    if (!revoked.ok()) return Fail(revoked.status());
    std::printf("agent %s revoked: %u certificate(s), %u open stream(s) closed on this coordinator\n",
                revoke_agent_id.c_str(), revoked->certificates_revoked(), revoked->streams_closed());
    return 0;
  }
  if (tokens_create.parsed()) {
    auto token = client.CreateApiToken(token_name, token_role == "operator" ? v1::ROLE_OPERATOR : v1::ROLE_VIEWER);
    if (!token.ok()) return Fail(token.status());
    std::printf("%s\n", token->c_str());
    std::fprintf(stderr, "benchfleet: %s token '%s' (shown once): keep it in a file, give it with --token-file\n",
                 token_role.c_str(), token_name.c_str());
    return 0;
  }
  if (tokens_revoke.parsed()) {
    if (absl::Status s = client.RevokeApiToken(token_name); !s.ok()) return Fail(s);
    std::printf("token '%s' revoked\n", token_name.c_str());
    return 0;
  }
  if (audit.parsed()) {
    if (format_name != "table" && format_name != "json") {
      return Fail(absl::InvalidArgumentError("audit --format: table or json"));
    }
    auto entries = client.ListAudit(audit_limit);
    if (!entries.ok()) return Fail(entries.status());
    if (format_name == "json") {
      for (const v1::AuditEntry& e : *entries) {
        auto line = MessageToJson(e);
        if (!line.ok()) return Fail(line.status());
        std::printf("%s\n", line->c_str());
      }
    } else {
      PrintAuditTable(*entries);
    }
    return 0;
  }
  if (import.parsed()) {
    Env* env = Env::Default();
    std::vector<v1::RunRecord> runs;
    for (const std::string& path : import_paths) {
      auto records = ReadRecords(env, path);
      if (!records.ok()) {
        return Fail(absl::Status(records.status().code(),
                                 absl::StrCat(records.status().message(), "; nothing was imported")));
      }
      for (SourcedRecord& sourced : *records) {
        v1::Provenance* provenance = sourced.record.mutable_provenance();
        provenance->set_kind(v1::Provenance::KIND_FILE);
        provenance->set_file(sourced.file);
        provenance->set_line(sourced.line);
        runs.push_back(std::move(sourced.record));
      }
      std::fprintf(stderr, "import: read %zu records from %s\n", records->size(), path.c_str());
    }
    auto imported = client.ImportRuns(runs);
    if (!imported.ok()) return Fail(imported.status());
    std::printf("imported %zu records: %d stored, %d already stored, %d rejected\n", runs.size(),
                imported->stored_run_ids_size(), imported->duplicate_run_ids_size(), imported->rejections_size());
    for (const std::string& r : imported->rejections()) std::printf("  rejected %s\n", r.c_str());
    return imported->rejections_size() == 0 ? 0 : kExitError;
  }
  return std::nullopt;
}

}  // namespace

int Main(int argc, char** argv) {
  NoteCommandLineSecrets(argc, argv);
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
  std::string ca_cert_flag, token_file_flag;
  app.add_option("--ca-cert", ca_cert_flag,
                 "Fleet CA certificate (PEM) that verifies a TLS coordinator (default: $BENCHFLEET_CA_CERT; "
                 "without one, plaintext to a loopback coordinator only)");
  app.add_option("--token-file", token_file_flag,
                 "File holding your API token (default: $BENCHFLEET_TOKEN_FILE, else $BENCHFLEET_TOKEN; "
                 "never on the command line)");

  // benchfleet runs
  auto* runs = app.add_subcommand("runs", "List runs, oldest first: every run with its machine (hostname, class, short id), mode, phase "
                                  "and call and its headline figures in the table (--format csv or json for all)");
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
  auto* agents_enroll = agents->add_subcommand(
      "enroll", "Print a one-time enrollment token for an agent (operator); the agent runs "
                "`benchfleet-agent enroll` with it. Shown once, stored hashed");
  std::string enroll_agent_id;
  uint32_t enroll_uses = 1;
  std::string enroll_expires = "24h";
  agents_enroll->add_option("agent_id", enroll_agent_id,
                            "Bind the token to this agent id (`benchfleet-agent conditions` shows it); without "
                            "one, each use binds the agent that presents it");
  agents_enroll->add_option("--uses", enroll_uses, "Enrollments the token allows (only without an agent id)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  agents_enroll->add_option("--expires", enroll_expires, "Lifetime, e.g. 30m, 24h, 168h")->capture_default_str();
  auto* agents_revoke = agents->add_subcommand(
      "revoke", "Revoke an agent (operator): its certificates stop working at once and its open streams close");
  std::string revoke_agent_id;
  agents_revoke->add_option("agent_id", revoke_agent_id, "The agent id")->required();

  // benchfleet tokens
  auto* tokens = app.add_subcommand("tokens", "API tokens for people and tools (operator)");
  tokens->require_subcommand(1);
  auto* tokens_create = tokens->add_subcommand("create", "Create a token and print it (shown once, stored hashed)");
  std::string token_name, token_role;
  tokens_create->add_option("--name", token_name, "A name for the token, e.g. grafana or alice")->required();
  tokens_create->add_option("--role", token_role, "viewer (reads) or operator (also changes)")
      ->required()
      ->check(CLI::IsMember({"viewer", "operator"}));
  auto* tokens_revoke = tokens->add_subcommand("revoke", "Revoke a token by name; refused from the next call on");
  tokens_revoke->add_option("name", token_name, "The token's name")->required();

  // benchfleet audit
  auto* audit = app.add_subcommand("audit", "Every change made through the API, newest first (operator)");
  uint32_t audit_limit = 100;
  audit->add_option("--limit", audit_limit, "At most this many entries")->capture_default_str()->check(CLI::Range(1, 10000));
  audit->add_option("--format", format_name, "table or json");

  // benchfleet import
  auto* import = app.add_subcommand(
      "import", "Import other machines' measurements (operator): series folders or runs.jsonl files, each "
                "record stored exactly once with its file:line as provenance");
  std::vector<std::string> import_paths;
  import->add_option("paths", import_paths, "Series folders or .jsonl files")->required()->check(CLI::ExistingPath);

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
                    "(default: $BENCHFLEET_DATABASE_URL when neither --files nor --coordinator is given); a URL "
                    "with a password goes in --database-url-file or the environment");
  std::string guide_database_url_file;
  guide->add_option("--database-url-file", guide_database_url_file, "File holding the PostgreSQL URL");
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
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // CLI11 quotes the arguments it did not expect: a token typed there must not come back.
    std::fprintf(stderr, "%s\nRun with --help for more information.\n", HideSecrets(e.what()).c_str());
    return kExitUsage;
  }

  auto security = ResolveClientSecurity(ca_cert_flag, token_file_flag);
  if (!security.ok()) return Fail(security.status());
  SetClientSecurity(*security);

  if (guide->parsed()) {
    if (DatabaseUrlHasPassword(guide_database_url)) {
      return Fail(absl::InvalidArgumentError(
          "--database-url holds a password, which any user can read in the process list: put the URL in "
          "--database-url-file or BENCHFLEET_DATABASE_URL"));
    }
    if (!guide_database_url_file.empty()) {
      if (!guide_database_url.empty()) {
        return Fail(absl::InvalidArgumentError("give --database-url or --database-url-file, not both"));
      }
      auto url = ReadCredentialFile(guide_database_url_file, "--database-url-file");
      if (!url.ok()) return Fail(absl::InvalidArgumentError(url.status().message()));
      guide_database_url = std::move(*url);
    }
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

  AdminClient client(coordinator);
  if (std::optional<int> code = RunAuthCommand(client, *agents_enroll, *agents_revoke, *tokens_create, *tokens_revoke,
                                               *audit, *import, enroll_agent_id, enroll_uses, enroll_expires,
                                               revoke_agent_id, token_name, token_role, audit_limit, format_name,
                                               import_paths);
      code.has_value()) {
    return *code;
  }

  auto format = ParseFormat(format_name);
  if (!format.ok()) return Fail(format.status());

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
    auto agents = LookUpRunAgents(client, *result);
    if (!agents.ok()) return Fail(agents.status());
    auto text = FormatRuns(*result, *format, *agents);
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
