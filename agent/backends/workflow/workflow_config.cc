#include "agent/backends/workflow/workflow_config.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "agent/backends/section.h"
#include "common/spec/series_spec.h"
#include "common/string_views.h"

namespace benchfleet::agent::workflow {
namespace {

constexpr const char* kKeys[] = {"command",  "config",     "prompts", "env",     "mode",
                                 "deadline", "stop_grace", "memory",  "results", "container_sample_period",
                                 "container", "start",     "batch_size"};
constexpr int kMaxBatchSize = 1 << 20;
constexpr const char* kResultsKeys[] = {"requests",      "prompt_id", "latency_seconds", "output_tokens",
                                        "time_to_first_token_seconds", "error", "duration_seconds", "tool",
                                        "simulated"};

constexpr SectionReader kSection{"workflow"};

bool HasControl(std::string_view value) {
  return std::any_of(value.begin(), value.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

bool Uses(const CommandTemplate& command, std::string_view placeholder) {
  return std::any_of(command.argv.begin(), command.argv.end(),
                     [&](const std::string& arg) { return absl::StrContains(arg, ToAbsl(placeholder)); });
}

// True when the command, or the start command of a reused container, holds the placeholder.
bool AnyUses(const WorkflowConfig& config, std::string_view placeholder) {
  return Uses(config.command, placeholder) || (!config.start.argv.empty() && Uses(config.start, placeholder));
}

bool Lists(const CommandTemplate& command, std::string_view var) {
  return std::find(command.env.begin(), command.env.end(), var) != command.env.end();
}

// The commands a spec names, for messages: "workflow-v6" or "workflow-v6 (or start workflow-v6-up)".
std::string Named(const WorkflowConfig& config) {
  return config.start_name.empty() ? config.command_name
                                   : absl::StrCat(config.command_name, " (or start ", config.start_name, ")");
}

// Reads one env value: a string, or {label: NAME, default: VALUE} taking the agent's label.
absl::Status EnvValue(const YAML::Node& node, const std::string& var, const std::map<std::string, std::string>& labels,
                      WorkflowConfig* config) {
  const std::string key = absl::StrCat(kSection.Key("env"), ".", var);
  if (node.IsScalar()) {
    if (HasControl(node.Scalar()))
      return kSection.ErrorAt(node, absl::StrCat(key, " must be a string without control characters"));
    config->env[var] = node.Scalar();
    return absl::OkStatus();
  }
  const std::string form = absl::StrCat(key, " must be a string or {label: NAME, default: VALUE}");
  if (!node.IsMap()) return kSection.ErrorAt(node, form);
  for (const auto& entry : node) {
    const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "?";
    if (name != "label" && name != "default") {
      return kSection.ErrorAt(entry.first,
                              absl::StrCat("unknown key ", key, ".", name, " (known keys: label, default)"));
    }
    if (!entry.second.IsScalar() || HasControl(entry.second.Scalar())) {
      return kSection.ErrorAt(entry.second,
                              absl::StrCat(key, ".", name, " must be a string without control characters"));
    }
  }
  if (!node["label"]) return kSection.ErrorAt(node, form);
  const std::string label = node["label"].Scalar();
  if (auto it = labels.find(label); it != labels.end()) {
    if (HasControl(it->second)) {
      return kSection.ErrorAt(node, absl::StrCat(key, ": this agent's label ", label, " holds control characters"));
    }
    config->env[var] = it->second;
    config->env_sources[var] = absl::StrCat("agent label ", label);
    return absl::OkStatus();
  }
  if (const YAML::Node fallback = node["default"]) {
    config->env[var] = fallback.Scalar();
    config->env_sources[var] = absl::StrCat("default (this agent has no label ", label, ")");
    return absl::OkStatus();
  }
  std::vector<std::string> names;
  for (const auto& [name, value] : labels) names.push_back(name);
  return kSection.ErrorAt(
      node, absl::StrCat(key, " takes this agent's label ", label, ", which it does not have (its labels: ",
                         names.empty() ? "none" : absl::StrJoin(names, ", "), "), and gives no default"));
}

// Reads the value of {config} or {prompts}: required exactly when the command holds it.
absl::Status PathValue(const YAML::Node& section, const WorkflowConfig& config, std::string_view key,
                       const AllowList& allow, std::string* out) {
  const std::string placeholder = absl::StrCat("{", ToAbsl(key), "}");
  const YAML::Node node = section[std::string(key)];
  const bool used = AnyUses(config, placeholder);
  if (!node) {
    if (used) {
      return kSection.ErrorAt(
          section, absl::StrCat(kSection.Key(key), " is required: command ", Named(config), " holds ", placeholder));
    }
    return absl::OkStatus();
  }
  if (!used) {
    return kSection.ErrorAt(node, absl::StrCat(kSection.Key(key), " is given but command ", Named(config), " has no ",
                                               placeholder, " to fill"));
  }
  absl::StatusOr<std::string> value = kSection.String(node, key);
  if (!value.ok()) return value.status();
  if (absl::Status s = CheckPathValue(kSection.Key(key), *value); !s.ok())
    return kSection.ErrorAt(node, ToStd(s.message()));
  // The agent reads the prompts and the command reads both: a coordinator may name only files
  // the operator put in a workflow folder.
  if (absl::Status s = allow.CheckInputFile(*value); !s.ok()) return allow.WithAllowed(s);
  *out = *value;
  return absl::OkStatus();
}

// Reads workflow.container and workflow.start: a reused container needs a start command that
// names it, and a command that runs in it.
absl::Status ContainerLifecycleOf(const YAML::Node& section, const AllowList& allow, WorkflowConfig* config) {
  const YAML::Node container = section["container"];
  const YAML::Node start = section["start"];
  if (container) {
    const std::string value = container.IsScalar() ? container.Scalar() : "";
    if (value == "restart") {
      config->container = ContainerLifecycle::kRestart;
    } else if (value == "reuse") {
      config->container = ContainerLifecycle::kReuse;
    } else {
      return kSection.ErrorAt(container, absl::StrCat(kSection.Key("container"), " must be restart or reuse, got '",
                                                      value, "' (the agent names the container itself: {container})"));
    }
  }
  if (config->container == ContainerLifecycle::kRestart) {
    if (start) {
      return kSection.ErrorAt(start, absl::StrCat(kSection.Key("start"),
                                                  " is given but workflow.container is not reuse: with restart "
                                                  "every run starts the command afresh"));
    }
    return absl::OkStatus();
  }
  if (!start) {
    return kSection.ErrorAt(container, absl::StrCat(kSection.Key("container"),
                                                    " is reuse but no workflow.start names the allow-listed "
                                                    "command that starts the container (e.g. docker run -d "
                                                    "--name {container} IMAGE sleep infinity)"));
  }
  absl::StatusOr<std::string> name = kSection.String(start, "start");
  if (!name.ok()) return name.status();
  absl::StatusOr<CommandTemplate> found = allow.FindCommand(*name);
  if (!found.ok()) return allow.WithAllowed(found.status());
  if (!Uses(*found, "{container}")) {
    return kSection.ErrorAt(start, absl::StrCat(kSection.Key("start"), ": command ", *name,
                                                " has no {container} to name the container by (docker run -d --name "
                                                "{container} ...)"));
  }
  if (Uses(*found, "{output}")) {
    return kSection.ErrorAt(start,
                            absl::StrCat(kSection.Key("start"), ": command ", *name,
                                         " holds {output}, which only a run has (the start command runs at Open)"));
  }
  if (!Uses(config->command, "{container}")) {
    return kSection.ErrorAt(container,
                            absl::StrCat(kSection.Key("container"), " is reuse but command ", config->command_name,
                                         " has no {container} to run in (docker exec {container} ...)"));
  }
  config->start_name = *name;
  config->start = std::move(*found);
  return absl::OkStatus();
}

absl::StatusOr<WorkflowConfig> Parse(const YAML::Node& section, const AllowList& allow,
                                     const std::map<std::string, std::string>& labels) {
  if (absl::Status s = kSection.CheckKeys(section, kKeys); !s.ok()) return s;

  WorkflowConfig config;
  const YAML::Node command = section["command"];
  if (!command)
    return kSection.ErrorAt(section, absl::StrCat(kSection.Key("command"), " is required (a name of allow.commands)"));
  absl::StatusOr<std::string> name = kSection.String(command, "command");
  if (!name.ok()) return name.status();
  absl::StatusOr<CommandTemplate> found = allow.FindCommand(*name);
  if (!found.ok()) return allow.WithAllowed(found.status());
  config.command_name = *name;
  config.command = std::move(*found);
  if (absl::Status s = ContainerLifecycleOf(section, allow, &config); !s.ok()) return s;

  if (absl::Status s = PathValue(section, config, "config", allow, &config.config); !s.ok()) return s;
  if (absl::Status s = PathValue(section, config, "prompts", allow, &config.prompts); !s.ok()) return s;

  if (const YAML::Node env = section["env"]; env && !env.IsNull()) {
    if (!env.IsMap()) return kSection.ErrorAt(env, absl::StrCat(kSection.Key("env"), " must be a map of NAME: value"));
    for (const auto& entry : env) {
      const std::string var = entry.first.IsScalar() ? entry.first.Scalar() : "";
      if (!Lists(config.command, var) && (config.start_name.empty() || !Lists(config.start, var))) {
        return kSection.ErrorAt(
            entry.first,
            absl::StrCat(kSection.Key("env"), ": command ", config.command_name, " does not let a spec set '", var,
                         "' (allow.commands.", config.command_name, ".env lists: ",
                         config.command.env.empty() ? "none" : absl::StrJoin(config.command.env, ", "), ")"));
      }
      if (var == kBatchSizeEnv) {
        return kSection.ErrorAt(
            entry.first, absl::StrCat(kSection.Key("env"), ".", kBatchSizeEnv, ": the agent sets ", kBatchSizeEnv,
                                      " from workflow.batch_size or the matrix axis batch_size (and records "
                                      "it): give the batch size there"));
      }
      if (absl::Status s = EnvValue(entry.second, var, labels, &config); !s.ok()) return s;
    }
  }

  if (const YAML::Node mode = section["mode"]) {
    absl::StatusOr<std::string> value = kSection.String(mode, "mode");
    if (!value.ok()) return value.status();
    config.mode = *value;
  } else if (auto it = config.env.find("ACCELERATOR"); it != config.env.end()) {
    config.mode = it->second;
  } else {
    config.mode = "default";
  }
  if (config.mode.empty() || config.mode.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != std::string::npos) {
    return kSection.ErrorAt(
        section["mode"] ? section["mode"] : section,
        absl::StrCat(kSection.Key("mode"), " must be letters, digits, '.', '_' or '-', got '", config.mode, "'"));
  }

  config.batch_size_placeholder = AnyUses(config, "{batch_size}");
  config.batch_size_env =
      Lists(config.command, kBatchSizeEnv) || (!config.start_name.empty() && Lists(config.start, kBatchSizeEnv));
  if (const YAML::Node batch = section["batch_size"]) {
    absl::StatusOr<int> value = ParseBatchSize(batch.IsScalar() ? batch.Scalar() : "a non-scalar");
    if (!value.ok()) return kSection.ErrorAt(batch, absl::StrCat("workflow.", value.status().message()));
    if (!config.takes_batch_size()) {
      return kSection.ErrorAt(
          batch, absl::StrCat(kSection.Key("batch_size"), " is given but command ", Named(config),
                              " takes no batch size (no {batch_size} in its argv, no ", kBatchSizeEnv, " in its env)"));
    }
    config.batch_size = *value;
  }

  config.names_container = Uses(config.command, "{container}");
  for (auto [key, out] : {std::pair<const char*, absl::Duration*>{"deadline", &config.deadline},
                          std::pair<const char*, absl::Duration*>{"stop_grace", &config.stop_grace},
                          std::pair<const char*, absl::Duration*>{"container_sample_period",
                                                                  &config.container_sample_period}}) {
    if (const YAML::Node node = section[key]) {
      absl::StatusOr<absl::Duration> value = kSection.Duration(node, key);
      if (!value.ok()) return value.status();
      *out = *value;
    }
  }
  if (const YAML::Node memory = section["memory"]) {
    const std::string value = memory.IsScalar() ? memory.Scalar() : "";
    if (value == "auto") {
      config.memory = MemoryMethod::kAuto;
    } else if (value == "cgroup") {
      config.memory = MemoryMethod::kCgroup;
    } else if (value == "rusage") {
      config.memory = MemoryMethod::kRusage;
    } else if (value == "container") {
      if (!config.names_container) {
        return kSection.ErrorAt(memory,
                                absl::StrCat(kSection.Key("memory"), " is container but command ", config.command_name,
                                             " has no {container} to name the container by (e.g. docker run --name "
                                             "{container} ...)"));
      }
      config.memory = MemoryMethod::kContainer;
    } else {
      return kSection.ErrorAt(memory, absl::StrCat(kSection.Key("memory"),
                                                   " must be auto, cgroup, rusage or container, got '", value, "'"));
    }
  }
  if (const YAML::Node results = section["results"]; results && !results.IsNull()) {
    if (!results.IsMap())
      return kSection.ErrorAt(results, absl::StrCat(kSection.Key("results"), " must be a map of field: JSON pointer"));
    std::string* fields[] = {&config.results.requests,      &config.results.prompt_id,
                             &config.results.latency_seconds, &config.results.output_tokens,
                             &config.results.time_to_first_token_seconds, &config.results.error,
                             &config.results.duration_seconds, &config.results.tool,
                             &config.results.simulated};
    for (const auto& entry : results) {
      const std::string field = entry.first.IsScalar() ? entry.first.Scalar() : "?";
      const auto* it = std::find_if(std::begin(kResultsKeys), std::end(kResultsKeys),
                                    [&](const char* k) { return field == k; });
      if (it == std::end(kResultsKeys)) {
        return kSection.ErrorAt(entry.first, absl::StrCat("unknown key ", kSection.Key("results." + field),
                                                          " (known keys: ", absl::StrJoin(kResultsKeys, ", "), ")"));
      }
      // A JSON pointer is "" (the whole document) or starts with '/' (RFC 6901).
      if (!entry.second.IsScalar() || (!entry.second.Scalar().empty() && entry.second.Scalar()[0] != '/')) {
        return kSection.ErrorAt(entry.second, absl::StrCat(kSection.Key("results." + field),
                                                           " must be a JSON pointer such as /data/items (RFC 6901)"));
      }
      *fields[it - std::begin(kResultsKeys)] = entry.second.Scalar();
    }
  }
  return config;
}

}  // namespace

absl::Status CheckPathValue(std::string_view what, const std::string& value) {
  if (value.empty() || value[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(what), " must be an absolute path, got '", value, "'"));
  }
  if (HasControl(value)) {
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(what), " must not contain control characters"));
  }
  if (CanonicalPath(value) != value) {
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(what), " must be a canonical path (no '.', '..', '//' or final '/'): '",
                                                   value, "' is '", CanonicalPath(value), "'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> ParseBatchSize(std::string_view text) {
  int value = 0;
  if (!absl::SimpleAtoi(ToAbsl(text), &value) || value < 1 || value > kMaxBatchSize ||
      text.find_first_not_of("0123456789") != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_size must be an integer from 1 to ", kMaxBatchSize, ", got '", ToAbsl(text), "'"));
  }
  return value;
}

std::map<std::string, std::string> CommandEnv(const CommandTemplate& command,
                                              const std::map<std::string, std::string>& env,
                                              const std::string& batch_size) {
  std::map<std::string, std::string> out;
  for (const auto& [var, value] : env) {
    if (Lists(command, var)) out[var] = value;
  }
  if (!batch_size.empty() && Lists(command, kBatchSizeEnv)) out[kBatchSizeEnv] = batch_size;
  return out;
}

absl::StatusOr<std::vector<std::string>> FillCommand(const CommandTemplate& command, const std::string& config,
                                                     const std::string& prompts, const std::string& output,
                                                     const std::string& container, const std::string& batch_size) {
  const std::pair<const char*, const std::string*> values[] = {{"{config}", &config},
                                                               {"{prompts}", &prompts},
                                                               {"{output}", &output},
                                                               {"{container}", &container},
                                                               {"{batch_size}", &batch_size}};
  std::vector<std::string> argv;
  for (const std::string& arg : command.argv) {
    for (const auto& [placeholder, value] : values) {
      if (absl::StrContains(arg, placeholder) && value->empty()) {
        return absl::InvalidArgumentError(absl::StrCat("argument '", arg, "' holds ", placeholder, " but no value was given for it"));
      }
    }
    // One pass, so a value that itself holds "{output}" is not filled again.
    argv.push_back(absl::StrReplaceAll(arg, {{"{config}", config},
                                             {"{prompts}", prompts},
                                             {"{output}", output},
                                             {"{container}", container},
                                             {"{batch_size}", batch_size}}));
  }
  return argv;
}

std::string ContainerName(int64_t pid, absl::Time now, int n) {
  return absl::StrCat("benchfleet-", pid, "-", absl::ToUnixSeconds(now), "-", n);
}

absl::StatusOr<WorkflowConfig> ParseWorkflowSection(const YAML::Node& section, const AllowList& allow,
                                                    const std::map<std::string, std::string>& labels) {
  try {
    return Parse(section, allow, labels);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("line ", e.mark.line + 1, ": workflow: ", e.msg));
  }
}

}  // namespace benchfleet::agent::workflow
