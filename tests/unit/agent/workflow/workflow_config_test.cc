#include "agent/backends/workflow/workflow_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "agent/config/agent_config.h"

namespace benchfleet::agent::workflow {
namespace {

using ::testing::ElementsAre;

constexpr char kAgentYaml[] = "/etc/benchfleet/agent.yaml";

AllowList Allow() {
  AllowConfig allow;
  allow.backends = {"workflow"};
  allow.workflow_dirs = {"/srv/workflows"};
  allow.commands["workflow-v6"] = CommandTemplate{
      {"/opt/workflow/bin/workflow", "run", "-c", "{config}", "--task", "inference", "--input={prompts}", "--output",
       "{output}"},
      {"ACCELERATOR"}};
  allow.commands["bare"] = CommandTemplate{{"/opt/bare", "--out", "{output}"}, {}};
  allow.commands["in-docker"] = CommandTemplate{
      {"/usr/bin/docker", "run", "--rm", "--name", "{container}", "-v", "/srv/workflows:/srv/workflows",
       "workflow:6", "--input", "{prompts}", "--output", "{output}"},
      {}};
  // The batch size as a placeholder, and as BATCH_SIZE.
  allow.commands["batched"] = CommandTemplate{
      {"/opt/workflow/bin/workflow", "run", "--input", "{prompts}", "--batch-size={batch_size}", "--output", "{output}"},
      {"ACCELERATOR"}};
  allow.commands["batched-env"] = CommandTemplate{{"/opt/bare", "--out", "{output}"}, {"ACCELERATOR", "BATCH_SIZE"}};
  // A reused container: started once, the runs executed in it.
  allow.commands["up"] = CommandTemplate{
      {"/usr/bin/docker", "run", "-d", "--name", "{container}", "-e", "ACCELERATOR", "workflow:6", "sleep", "infinity"},
      {"ACCELERATOR"}};
  allow.commands["in-it"] = CommandTemplate{
      {"/usr/bin/docker", "exec", "{container}", "workflow", "run", "--input", "{prompts}", "--output", "{output}"}, {}};
  allow.commands["up-with-output"] = CommandTemplate{{"/usr/bin/docker", "run", "-d", "--name", "{container}",
                                                      "workflow:6", "--output", "{output}"}, {}};
  return AllowList(allow, kAgentYaml);
}

absl::StatusOr<WorkflowConfig> ParseSpec(const std::string& spec,
                                         const std::map<std::string, std::string>& labels = {}) {
  return ParseWorkflowSection(YAML::Load(spec)["workflow"], Allow(), labels);
}

void ExpectError(const std::string& spec, absl::StatusCode code, const std::string& message,
                 const std::map<std::string, std::string>& labels = {}) {
  absl::StatusOr<WorkflowConfig> config = ParseSpec(spec, labels);
  EXPECT_EQ(config.status().code(), code) << spec;
  EXPECT_EQ(config.status().message(), message) << spec;
}

constexpr char kHead[] =
    "workflow:\n  command: workflow-v6\n  config: /srv/workflows/llm.yaml\n  prompts: /srv/workflows/p.jsonl\n";

TEST(WorkflowConfigTest, ParsesAFullSectionAndFillsTheCommand) {
  absl::StatusOr<WorkflowConfig> config = ParseSpec(std::string(kHead) + R"(  env: {ACCELERATOR: amd}
  deadline: 90s
  stop_grace: 500ms
  memory: rusage
  results: {requests: /data/items, latency_seconds: /timing/total}
)");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->command_name, "workflow-v6");
  EXPECT_EQ(config->mode, "amd");  // from ACCELERATOR when no mode is given
  EXPECT_EQ(config->deadline, absl::Seconds(90));
  EXPECT_EQ(config->stop_grace, absl::Milliseconds(500));
  EXPECT_EQ(config->memory, MemoryMethod::kRusage);
  EXPECT_EQ(config->results.requests, "/data/items");
  EXPECT_EQ(config->results.latency_seconds, "/timing/total");
  EXPECT_EQ(config->results.output_tokens, "/output_tokens");
  absl::StatusOr<std::vector<std::string>> argv =
      FillCommand(config->command, config->config, config->prompts, "/var/lib/out/r1.json");
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_THAT(*argv, ElementsAre("/opt/workflow/bin/workflow", "run", "-c", "/srv/workflows/llm.yaml", "--task",
                                 "inference", "--input=/srv/workflows/p.jsonl", "--output", "/var/lib/out/r1.json"));
}

TEST(WorkflowConfigTest, DefaultsWithoutEnv) {
  absl::StatusOr<WorkflowConfig> config = ParseSpec("workflow:\n  command: bare\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->mode, "default");
  EXPECT_EQ(config->deadline, absl::Hours(1));
  EXPECT_EQ(config->memory, MemoryMethod::kAuto);
}

TEST(WorkflowConfigTest, ACommandOutsideTheAllowListIsRefusedWithWhatIsListed) {
  ExpectError("workflow:\n  command: rm-everything\n", absl::StatusCode::kPermissionDenied,
              "command rm-everything is not in this agent's allow-list (allow.commands in /etc/benchfleet/agent.yaml); "
              "allow.commands lists: bare, batched, batched-env, in-docker, in-it, up, up-with-output, workflow-v6");
}

TEST(WorkflowConfigTest, PlaceholderValuesAreChecked) {
  ExpectError("workflow:\n  command: workflow-v6\n  prompts: /srv/workflows/p.jsonl\n",
              absl::StatusCode::kInvalidArgument, "line 2: workflow.config is required: command workflow-v6 holds {config}");
  ExpectError("workflow:\n  command: bare\n  prompts: /srv/workflows/p.jsonl\n", absl::StatusCode::kInvalidArgument,
              "line 3: workflow.prompts is given but command bare has no {prompts} to fill");
  ExpectError("workflow:\n  command: workflow-v6\n  config: relative.yaml\n", absl::StatusCode::kInvalidArgument,
              "line 3: workflow.config must be an absolute path, got 'relative.yaml'");
  ExpectError("workflow:\n  command: workflow-v6\n  config: /srv/workflows/../../etc/shadow\n",
              absl::StatusCode::kInvalidArgument,
              "line 3: workflow.config must be a canonical path (no '.', '..', '//' or final '/'): "
              "'/srv/workflows/../../etc/shadow' is '/etc/shadow'");
  ExpectError("workflow:\n  command: workflow-v6\n  config: \"/srv/workflows/a\\nb\"\n",
              absl::StatusCode::kInvalidArgument, "line 3: workflow.config must not contain control characters");
  ExpectError("workflow:\n  command: workflow-v6\n  config: /etc/passwd\n", absl::StatusCode::kPermissionDenied,
              "workflow path /etc/passwd is not in this agent's allow-list (allow.workflow_dirs in "
              "/etc/benchfleet/agent.yaml); allow.workflow_dirs lists: /srv/workflows");
}

TEST(WorkflowConfigTest, OnlyTheEnvironmentTheCommandListsMayBeSet) {
  ExpectError(std::string(kHead) + "  env: {LD_PRELOAD: /tmp/evil.so}\n", absl::StatusCode::kInvalidArgument,
              "line 5: workflow.env: command workflow-v6 does not let a spec set 'LD_PRELOAD' "
              "(allow.commands.workflow-v6.env lists: ACCELERATOR)");
  ExpectError("workflow:\n  command: bare\n  env: {ACCELERATOR: nvidia}\n", absl::StatusCode::kInvalidArgument,
              "line 3: workflow.env: command bare does not let a spec set 'ACCELERATOR' "
              "(allow.commands.bare.env lists: none)");
}

TEST(WorkflowConfigTest, BadKeysAndValuesNameTheirLine) {
  ExpectError("workflow:\n  command: bare\n  dedline: 5s\n", absl::StatusCode::kInvalidArgument,
              "line 3: unknown key workflow.dedline (known keys: command, config, prompts, env, mode, deadline, "
              "stop_grace, memory, results, container_sample_period, container, start, batch_size)");
  ExpectError("workflow:\n  command: bare\n  deadline: soon\n", absl::StatusCode::kInvalidArgument,
              "line 3: workflow.deadline must be a positive duration such as 120s, 2m or 500ms, got 'soon'");
  // Issue 19 case 6: every duration has an upper bound.
  ExpectError("workflow:\n  command: bare\n  deadline: 25h\n", absl::StatusCode::kInvalidArgument,
              "line 3: workflow.deadline must be at most 24h, got 25h");
  ExpectError("workflow:\n  command: bare\n  stop_grace: 11m\n", absl::StatusCode::kInvalidArgument,
              "line 3: workflow.stop_grace must be at most 10m, got 11m");
  ExpectError("workflow:\n  command: bare\n  memory: docker\n", absl::StatusCode::kInvalidArgument,
              "line 3: workflow.memory must be auto, cgroup, rusage or container, got 'docker'");
  ExpectError("workflow:\n  command: bare\n  results: {requests: data}\n", absl::StatusCode::kInvalidArgument,
              "line 3: workflow.results.requests must be a JSON pointer such as /data/items (RFC 6901)");
  ExpectError("workflow:\n  deadline: 5s\n", absl::StatusCode::kInvalidArgument,
              "line 2: workflow.command is required (a name of allow.commands)");
  ExpectError("workflow:\n  command: bare\n  mode: 'a b'\n", absl::StatusCode::kInvalidArgument,
              "line 3: workflow.mode must be letters, digits, '.', '_' or '-', got 'a b'");
}

TEST(WorkflowConfigTest, FillCommandRefusesAPlaceholderWithoutValue) {
  const CommandTemplate command{{"/opt/t", "--in={prompts}", "--out", "{output}"}, {}};
  absl::StatusOr<std::vector<std::string>> argv = FillCommand(command, "", "", "/o.json");
  EXPECT_EQ(argv.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(argv.status().message(), "argument '--in={prompts}' holds {prompts} but no value was given for it");
  // A value holding a placeholder is not filled again.
  argv = FillCommand(command, "", "/p/{output}", "/o.json");
  ASSERT_TRUE(argv.ok());
  EXPECT_THAT(*argv, ElementsAre("/opt/t", "--in=/p/{output}", "--out", "/o.json"));
}

TEST(WorkflowConfigTest, ACommandNamingItsContainerIsSampledFromTheRuntime) {
  absl::StatusOr<WorkflowConfig> config =
      ParseSpec("workflow:\n  command: in-docker\n  prompts: /srv/workflows/p.jsonl\n"
                "  container_sample_period: 250ms\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->names_container);
  EXPECT_EQ(config->memory, MemoryMethod::kAuto);
  EXPECT_EQ(config->container_sample_period, absl::Milliseconds(250));
  const std::string name = ContainerName(4242, absl::FromUnixSeconds(1767225600), 3);
  EXPECT_EQ(name, "benchfleet-4242-1767225600-3");
  absl::StatusOr<std::vector<std::string>> argv =
      FillCommand(config->command, config->config, config->prompts, "/var/lib/out/r1.json", name);
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_THAT(*argv, ElementsAre("/usr/bin/docker", "run", "--rm", "--name", "benchfleet-4242-1767225600-3", "-v",
                                 "/srv/workflows:/srv/workflows", "workflow:6", "--input", "/srv/workflows/p.jsonl",
                                 "--output", "/var/lib/out/r1.json"));
  // Never run with the container unnamed.
  EXPECT_EQ(FillCommand(config->command, "", config->prompts, "/o.json").status().message(),
            "argument '{container}' holds {container} but no value was given for it");

  config = ParseSpec("workflow:\n  command: in-docker\n  prompts: /srv/workflows/p.jsonl\n  memory: container\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->memory, MemoryMethod::kContainer);
  EXPECT_EQ(config->container_sample_period, absl::Seconds(1));

  ExpectError("workflow:\n  command: bare\n  memory: container\n", absl::StatusCode::kInvalidArgument,
              "line 3: workflow.memory is container but command bare has no {container} to name the container by "
              "(e.g. docker run --name {container} ...)");
  ExpectError("workflow:\n  command: bare\n  memory: sometimes\n", absl::StatusCode::kInvalidArgument,
              "line 3: workflow.memory must be auto, cgroup, rusage or container, got 'sometimes'");
  ExpectError("workflow:\n  command: in-docker\n  prompts: /srv/workflows/p.jsonl\n  container_sample_period: 0s\n",
              absl::StatusCode::kInvalidArgument,
              "line 4: workflow.container_sample_period must be a positive duration such as 120s, 2m or 500ms, got '0s'");
  // A spec cannot name the container: the agent does.
  ExpectError("workflow:\n  command: in-docker\n  prompts: /srv/workflows/p.jsonl\n  container: mine\n",
              absl::StatusCode::kInvalidArgument,
              "line 4: workflow.container must be restart or reuse, got 'mine' (the agent names the container "
              "itself: {container})");
}

TEST(WorkflowConfigTest, TheBatchSizeIsAPlaceholderOrAnEnvironmentVariable) {
  absl::StatusOr<WorkflowConfig> config =
      ParseSpec("workflow:\n  command: batched\n  prompts: /srv/workflows/p.jsonl\n  batch_size: 8\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->batch_size, 8);
  EXPECT_TRUE(config->batch_size_placeholder);
  EXPECT_FALSE(config->batch_size_env);
  absl::StatusOr<std::vector<std::string>> argv =
      FillCommand(config->command, "", config->prompts, "/out/r1.json", "", "16");
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_THAT(*argv, ElementsAre("/opt/workflow/bin/workflow", "run", "--input", "/srv/workflows/p.jsonl",
                                 "--batch-size=16", "--output", "/out/r1.json"));
  EXPECT_EQ(FillCommand(config->command, "", config->prompts, "/out/r1.json").status().message(),
            "argument '--batch-size={batch_size}' holds {batch_size} but no value was given for it");
  // No BATCH_SIZE for a command that does not list it; the spec's variables it lists.
  EXPECT_EQ(CommandEnv(config->command, {{"ACCELERATOR", "amd"}}, "16"),
            (std::map<std::string, std::string>{{"ACCELERATOR", "amd"}}));

  config = ParseSpec("workflow:\n  command: batched-env\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->batch_size.has_value());  // the matrix may give it
  EXPECT_TRUE(config->batch_size_env);
  EXPECT_EQ(CommandEnv(config->command, {{"ACCELERATOR", "none"}}, "4"),
            (std::map<std::string, std::string>{{"ACCELERATOR", "none"}, {"BATCH_SIZE", "4"}}));
  EXPECT_EQ(CommandEnv(config->command, {}, ""), (std::map<std::string, std::string>{}));

  ExpectError("workflow:\n  command: bare\n  batch_size: 8\n", absl::StatusCode::kInvalidArgument,
              "line 3: workflow.batch_size is given but command bare takes no batch size (no {batch_size} in its "
              "argv, no BATCH_SIZE in its env)");
  ExpectError("workflow:\n  command: batched-env\n  batch_size: 0\n", absl::StatusCode::kInvalidArgument,
              "line 3: workflow.batch_size must be an integer from 1 to 1048576, got '0'");
  ExpectError("workflow:\n  command: batched-env\n  batch_size: eight\n", absl::StatusCode::kInvalidArgument,
              "line 3: workflow.batch_size must be an integer from 1 to 1048576, got 'eight'");
  ExpectError("workflow:\n  command: batched-env\n  env: {BATCH_SIZE: '8'}\n", absl::StatusCode::kInvalidArgument,
              "line 3: workflow.env.BATCH_SIZE: the agent sets BATCH_SIZE from workflow.batch_size or the matrix axis "
              "batch_size (and records it): give the batch size there");
  EXPECT_EQ(ParseBatchSize("16").value(), 16);
  EXPECT_EQ(ParseBatchSize("-4").status().message(), "batch_size must be an integer from 1 to 1048576, got '-4'");
  EXPECT_EQ(ParseBatchSize("4.5").status().message(), "batch_size must be an integer from 1 to 1048576, got '4.5'");
}

TEST(WorkflowConfigTest, AnEnvValueCanComeFromTheAgentsLabel) {
  const std::string section =
      "workflow:\n  command: batched-env\n  env:\n    ACCELERATOR: {label: accelerator, default: none}\n";
  absl::StatusOr<WorkflowConfig> config = ParseSpec(section, {{"accelerator", "amd"}, {"class", "mi300"}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->env.at("ACCELERATOR"), "amd");
  EXPECT_EQ(config->env_sources.at("ACCELERATOR"), "agent label accelerator");
  EXPECT_EQ(config->mode, "amd");  // the records' mode: per machine

  config = ParseSpec(section, {{"class", "c5"}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->env.at("ACCELERATOR"), "none");
  EXPECT_EQ(config->env_sources.at("ACCELERATOR"), "default (this agent has no label accelerator)");
  EXPECT_EQ(config->mode, "none");

  ExpectError("workflow:\n  command: batched-env\n  env:\n    ACCELERATOR: {label: accelerator}\n",
              absl::StatusCode::kInvalidArgument,
              "line 4: workflow.env.ACCELERATOR takes this agent's label accelerator, which it does not have (its "
              "labels: class, fleet), and gives no default",
              {{"class", "c5"}, {"fleet", "demo"}});
  ExpectError("workflow:\n  command: batched-env\n  env:\n    ACCELERATOR: {lable: accelerator}\n",
              absl::StatusCode::kInvalidArgument,
              "line 4: unknown key workflow.env.ACCELERATOR.lable (known keys: label, default)");
  ExpectError("workflow:\n  command: batched-env\n  env:\n    ACCELERATOR: [nvidia]\n",
              absl::StatusCode::kInvalidArgument,
              "line 4: workflow.env.ACCELERATOR must be a string or {label: NAME, default: VALUE}");
}

TEST(WorkflowConfigTest, AReusedContainerIsStartedByAnAllowListedCommand) {
  absl::StatusOr<WorkflowConfig> config =
      ParseSpec("workflow:\n  command: in-it\n  prompts: /srv/workflows/p.jsonl\n  container: reuse\n"
                "  start: up\n  env: {ACCELERATOR: nvidia}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->container, ContainerLifecycle::kReuse);
  EXPECT_EQ(config->start_name, "up");
  EXPECT_TRUE(config->names_container);
  EXPECT_EQ(config->memory, MemoryMethod::kAuto);
  // ACCELERATOR is listed by the start command only: the container gets it, docker exec not.
  EXPECT_EQ(CommandEnv(config->start, config->env, ""), (std::map<std::string, std::string>{{"ACCELERATOR", "nvidia"}}));
  EXPECT_TRUE(CommandEnv(config->command, config->env, "").empty());

  config = ParseSpec("workflow:\n  command: in-docker\n  prompts: /srv/workflows/p.jsonl\n  container: restart\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->container, ContainerLifecycle::kRestart);

  const std::string head = "workflow:\n  command: in-it\n  prompts: /srv/workflows/p.jsonl\n";
  ExpectError(head + "  container: reuse\n", absl::StatusCode::kInvalidArgument,
              "line 4: workflow.container is reuse but no workflow.start names the allow-listed command that starts "
              "the container (e.g. docker run -d --name {container} IMAGE sleep infinity)");
  ExpectError(head + "  start: up\n", absl::StatusCode::kInvalidArgument,
              "line 4: workflow.start is given but workflow.container is not reuse: with restart every run starts the "
              "command afresh");
  ExpectError(head + "  container: reuse\n  start: bare\n", absl::StatusCode::kInvalidArgument,
              "line 5: workflow.start: command bare has no {container} to name the container by (docker run -d "
              "--name {container} ...)");
  ExpectError(head + "  container: reuse\n  start: up-with-output\n", absl::StatusCode::kInvalidArgument,
              "line 5: workflow.start: command up-with-output holds {output}, which only a run has (the start "
              "command runs at Open)");
  ExpectError(head + "  container: reuse\n  start: rm-rf\n", absl::StatusCode::kPermissionDenied,
              "command rm-rf is not in this agent's allow-list (allow.commands in /etc/benchfleet/agent.yaml); "
              "allow.commands lists: bare, batched, batched-env, in-docker, in-it, up, up-with-output, workflow-v6");
  ExpectError("workflow:\n  command: bare\n  container: reuse\n  start: up\n", absl::StatusCode::kInvalidArgument,
              "line 3: workflow.container is reuse but command bare has no {container} to run in (docker exec "
              "{container} ...)");
}

TEST(AllowCommandsConfigTest, ParsesCommandsAndRefusesBadOnes) {
  absl::StatusOr<AgentConfig> config = ParseAgentConfig(R"(allow:
  commands:
    workflow-v6:
      argv: [/opt/workflow/bin/workflow, run, -c, "{config}", --output, "{output}"]
      env: [ACCELERATOR]
)", "agent.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->allow.commands.count("workflow-v6"), 1u);
  EXPECT_THAT(config->allow.commands["workflow-v6"].argv,
              ElementsAre("/opt/workflow/bin/workflow", "run", "-c", "{config}", "--output", "{output}"));
  EXPECT_THAT(config->allow.commands["workflow-v6"].env, ElementsAre("ACCELERATOR"));

  auto error = [](const std::string& yaml) { return std::string(ParseAgentConfig(yaml, "agent.yaml").status().message()); };
  EXPECT_EQ(error("allow:\n  commands:\n    x:\n      argv: [bin/x]\n"),
            "agent.yaml:4: allow.commands.x.argv must start with the program's absolute path");
  EXPECT_EQ(error("allow:\n  commands:\n    x:\n      argv: [/bin/x, '{input}']\n"),
            "agent.yaml:4: allow.commands.x.argv: unknown placeholder '{input}' in '{input}' (known placeholders: "
            "{config}, {prompts}, {output}, {container}, {batch_size})");
  EXPECT_EQ(error("allow:\n  commands:\n    x:\n      argv: [/bin/x]\n      env: [LD-PRELOAD]\n"),
            "agent.yaml:5: allow.commands.x.env entry 'LD-PRELOAD' is not a variable name");
  EXPECT_EQ(error("allow:\n  commands:\n    x:\n      args: [/bin/x]\n"),
            "agent.yaml:4: unknown key 'allow.commands.x.args' (known keys: argv, env)");
  EXPECT_EQ(error("allow:\n  commands:\n    x:\n      env: [A]\n"), "agent.yaml:4: allow.commands.x.argv is required");
}

}  // namespace
}  // namespace benchfleet::agent::workflow
