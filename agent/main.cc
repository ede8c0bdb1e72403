// benchfleet-agent: the program on every measured machine. Parses the command line (CLI11) and
// hands over to agent/commands/; each command prints its own errors and returns the exit code.
#include <CLI/CLI.hpp>

#include <string>

#include "agent/commands/commands.h"
#include "common/version.h"

namespace {

using benchfleet::agent::ConditionsFlags;
using benchfleet::agent::ImportFlags;
using benchfleet::agent::RunFlags;
using benchfleet::agent::EnrollFlags;
using benchfleet::agent::ServeFlags;
using benchfleet::agent::SimulateFlags;

constexpr char kConfigHelp[] =
    "agent.yaml to read (default: $BENCHFLEET_CONFIG, else /etc/benchfleet/agent.yaml when it exists)";
constexpr char kStateDirHelp[] =
    "state directory: agent id and outbox (default: state_dir of agent.yaml, else /var/lib/benchfleet "
    "for root, else $XDG_STATE_HOME/benchfleet or ~/.local/state/benchfleet)";
constexpr char kCoordinatorHelp[] =
    "coordinator's gateway address HOST:PORT, or several comma-separated, tried in order for failover "
    "(default: coordinator of agent.yaml)";
constexpr char kCaHelp[] =
    "the fleet CA certificate (PEM) that verifies the coordinator (default: ca_cert of agent.yaml, else "
    "<state dir>/tls/ca.pem once enrolled; without one, plaintext to a loopback coordinator only)";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"benchfleet-agent: measures this machine's runs and streams them to a benchfleet coordinator",
               "benchfleet-agent"};
  app.set_version_flag("--version", std::string("benchfleet-agent ") + benchfleet::kVersion);
  app.require_subcommand(1);

  ConditionsFlags conditions;
  CLI::App* conditions_cmd =
      app.add_subcommand("conditions", "Print this machine's conditions (MachineConditions) as JSON");
  conditions_cmd->add_option("--config", conditions.config, kConfigHelp);

  ServeFlags serve;
  CLI::App* serve_cmd = app.add_subcommand(
      "serve", "Run the agent: send the outbox to the coordinator and run its tasks until SIGTERM/SIGINT (outbox "
              "kept; a task in progress stops at once, after its timed run if one is under way; a second signal "
              "exits at once, exit code 1)");
  serve_cmd->add_option("--config", serve.config, kConfigHelp);
  serve_cmd->add_option("--coordinator", serve.coordinator, kCoordinatorHelp)->envname("BENCHFLEET_COORDINATOR");
  serve_cmd->add_option("--state-dir", serve.state_dir, kStateDirHelp);
  serve_cmd->add_option("--ca-cert", serve.ca_cert, kCaHelp)->envname("BENCHFLEET_CA_CERT");
  serve_cmd->add_option("--send-rate", serve.send_rate, "at most this many records per second (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  serve_cmd->add_flag("--exit-when-drained", serve.exit_when_drained, "exit 0 once the outbox is empty");
  serve_cmd->add_option("--device-sampling", serve.device_sampling,
                        "what to sample during each timed run: auto (accelerators only), off, with_cpu_load "
                        "(default: device_sampling of agent.yaml, else auto)");
  serve_cmd->add_option("--enroll-token-file", serve.enroll_token_file,
                        "enroll first (as `enroll` does) when the state directory holds no certificate yet");
  serve_cmd->add_option("--renew-before", serve.renew_before,
                        "renew the agent certificate (over TLS with the current one) when less than this is left "
                        "of it, checked at start and hourly (default: renew_before of agent.yaml, else 720h: 30 of "
                        "its 90 days)");
  serve_cmd->add_option("--metrics-listen", serve.metrics_listen,
                        "serve Prometheus /metrics on HOST:PORT (port 0 picks a free one; default: metrics_listen "
                        "of agent.yaml, else not served)");

  SimulateFlags simulate;
  CLI::App* simulate_cmd = app.add_subcommand(
      "simulate", "Generate a SIMULATED series (no measurement): write its folder, queue it, send it if a coordinator is given");
  simulate_cmd->add_option("--out", simulate.out, "series folder to write (conditions.json, runs.jsonl, runs.csv)")
      ->required();
  simulate_cmd->add_option("--runs", simulate.runs, "number of records, both modes together")
      ->capture_default_str()
      ->check(CLI::Range(1, 10'000'000));
  simulate_cmd->add_option("--series", simulate.series, "series id")->default_str("simulated-llama-qwen2.5-3b-q4km");
  simulate_cmd->add_option("--config", simulate.config, kConfigHelp);
  simulate_cmd->add_option("--state-dir", simulate.state_dir, kStateDirHelp);
  simulate_cmd->add_option("--coordinator", simulate.coordinator, kCoordinatorHelp)->envname("BENCHFLEET_COORDINATOR");
  simulate_cmd->add_option("--ca-cert", simulate.ca_cert, kCaHelp)->envname("BENCHFLEET_CA_CERT");
  simulate_cmd->add_option("--timeout", simulate.timeout_seconds, "seconds to wait for every Ack")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  simulate_cmd->add_option("--connect-attempts", simulate.connect_attempts,
                           "failed connection attempts in a row before giving up")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));

  ImportFlags import;
  CLI::App* import_cmd = app.add_subcommand(
      "import", "Send records from series folders or .jsonl files to the coordinator (provenance: file)");
  import_cmd->add_option("paths", import.paths, "series folders or .jsonl files")->required()->check(CLI::ExistingPath);
  import_cmd->add_option("--coordinator", import.coordinator, kCoordinatorHelp)->envname("BENCHFLEET_COORDINATOR");
  import_cmd->add_option("--config", import.config, kConfigHelp);
  import_cmd->add_option("--state-dir", import.state_dir, kStateDirHelp);
  import_cmd->add_option("--ca-cert", import.ca_cert, kCaHelp)->envname("BENCHFLEET_CA_CERT");
  import_cmd->add_option("--timeout", import.timeout_seconds, "seconds to wait for every Ack")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  import_cmd->add_option("--connect-attempts", import.connect_attempts,
                         "failed connection attempts in a row before giving up")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));

  EnrollFlags enroll;
  CLI::App* enroll_cmd = app.add_subcommand(
      "enroll", "Trade a one-time enrollment token (`benchfleet agents enroll` prints it) for this agent's "
                "certificate: writes <state dir>/tls/agent.pem, agent-key.pem (0600) and ca.pem");
  enroll_cmd->add_option("--coordinator", enroll.coordinator, kCoordinatorHelp)->envname("BENCHFLEET_COORDINATOR");
  enroll_cmd->add_option("--config", enroll.config, kConfigHelp);
  enroll_cmd->add_option("--state-dir", enroll.state_dir, kStateDirHelp);
  enroll_cmd->add_option("--ca-cert", enroll.ca_cert,
                         "the fleet CA certificate (PEM) that verifies the coordinator (default: ca_cert of agent.yaml)")
      ->envname("BENCHFLEET_CA_CERT");
  enroll_cmd->add_option("--token-file", enroll.token_file,
                         "file holding the enrollment token (default: $BENCHFLEET_ENROLL_TOKEN; never on the command line)");

  RunFlags run;
  CLI::App* run_cmd = app.add_subcommand(
      "run", "Run a series spec on this machine: write its series folder, stream its records if a coordinator "
             "is given, print every call's figure (SIGTERM/SIGINT: stops at once, after the timed run in "
             "progress, exit code 1; a second one exits at once)");
  run_cmd->add_option("spec", run.spec, "the series spec (YAML; see agent/README.md, \"Series spec\")")->required();
  run_cmd->add_option("--out", run.out, "series folder to write (spec.yaml, conditions.json, runs.jsonl, runs.csv, "
                                        "backend logs); must not hold a series yet")
      ->required();
  run_cmd->add_option("--coordinator", run.coordinator, kCoordinatorHelp)->envname("BENCHFLEET_COORDINATOR");
  run_cmd->add_option("--config", run.config, kConfigHelp);
  run_cmd->add_option("--state-dir", run.state_dir, kStateDirHelp);
  run_cmd->add_option("--ca-cert", run.ca_cert, kCaHelp)->envname("BENCHFLEET_CA_CERT");
  run_cmd->add_option("--timeout", run.timeout_seconds, "seconds to wait, after the series, for every Ack")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  run_cmd->add_option("--device-sampling", run.device_sampling,
                      "what to sample during each timed run: auto (accelerators only), off, with_cpu_load "
                      "(default: device_sampling of agent.yaml, else auto)");
  run_cmd->add_option("--connect-attempts", run.connect_attempts,
                      "failed connection attempts in a row before giving up")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));

  // Bad flags are exit code 2, as for every other bad input (CLI11's own codes are 100 and up).
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (*conditions_cmd) return benchfleet::agent::RunConditionsCommand(conditions);
  if (*serve_cmd) return benchfleet::agent::RunServeCommand(serve);
  if (*simulate_cmd) return benchfleet::agent::RunSimulateCommand(simulate);
  if (*import_cmd) return benchfleet::agent::RunImportCommand(import);
  if (*run_cmd) return benchfleet::agent::RunRunCommand(run);
  if (*enroll_cmd) return benchfleet::agent::RunEnrollCommand(enroll);
  return 2;
}
