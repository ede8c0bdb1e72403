#include "agent/backends/workflow/workflow_config.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/string_views.h"

namespace benchfleet::agent::workflow {
namespace {

constexpr const char* kKeys[] = {"command",  "config",     "prompts", "env",     "mode",
                                 "deadline", "stop_grace", "memory",  "results", "container_sample_period"};
constexpr const char* kResultsKeys[] = {"requests",      "prompt_id", "latency_seconds", "output_tokens",
                                        "time_to_first_token_seconds", "error", "duration_seconds", "tool",
                                        "simulated"};

absl::Status ErrorAt(const YAML::Node& node, std::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("line ", node.Mark().line + 1, ": ", ToAbsl(message)));
}

std::string Key(std::string_view key) { return absl::StrCat("workflow.", ToAbsl(key)); }

absl::StatusOr<std::string> Scalar(const YAML::Node& node, std::string_view key) {
  if (!node.IsScalar()) return ErrorAt(node, absl::StrCat(Key(key), " must be a string"));
  return node.Scalar();
}

bool HasControl(std::string_view value) {
  return std::any_of(value.begin(), value.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

bool Uses(const CommandTemplate& command, std::string_view placeholder) {
  return std::any_of(command.argv.begin(), command.argv.end(),
                     [&](const std::string& arg) { return absl::StrContains(arg, ToAbsl(placeholder)); });
}

absl::StatusOr<absl::Duration> Duration(const YAML::Node& node, std::string_view key) {
  absl::Duration value;
  if (!node.IsScalar() || !absl::ParseDuration(node.Scalar(), &value) || value <= absl::ZeroDuration() ||
      value == absl::InfiniteDuration()) {
    return ErrorAt(node, absl::StrCat(Key(key), " must be a positive duration such as 30m, 90s or 500ms, got '",
                                      node.IsScalar() ? node.Scalar() : "a non-scalar", "'"));
  }
  return value;
}

// Reads the value of {config} or {prompts}: required exactly when the command holds it.
absl::Status PathValue(const YAML::Node& section, const WorkflowConfig& config, std::string_view key,
                       const AllowList& allow, std::string* out) {
  const std::string placeholder = absl::StrCat("{", ToAbsl(key), "}");
  const YAML::Node node = section[std::string(key)];
  const bool used = Uses(config.command, placeholder);
  if (!node) {
    if (used) {
      return ErrorAt(section, absl::StrCat(Key(key), " is required: command ", config.command_name, " holds ",
                                           placeholder));
    }
    return absl::OkStatus();
  }
  if (!used) {
    return ErrorAt(node, absl::StrCat(Key(key), " is given but command ", config.command_name, " has no ",
                                      placeholder, " to fill"));
  }
  absl::StatusOr<std::string> value = Scalar(node, key);
  if (!value.ok()) return value.status();
  if (absl::Status s = CheckPathValue(Key(key), *value); !s.ok()) return ErrorAt(node, ToStd(s.message()));
  // The agent reads the prompts and the command reads both: a coordinator may name only files
  // the operator put in a workflow folder.
  if (absl::Status s = allow.CheckWorkflowPath(*value); !s.ok()) return allow.WithAllowed(s);
  *out = *value;
  return absl::OkStatus();
}

absl::StatusOr<WorkflowConfig> Parse(const YAML::Node& section, const AllowList& allow) {
  if (!section.IsMap()) {
    return ErrorAt(section, absl::StrCat("workflow must be a map with the keys ", absl::StrJoin(kKeys, ", ")));
  }
  std::set<std::string> seen;
  for (const auto& entry : section) {
    const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "?";
    if (std::find_if(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return name == k; }) == std::end(kKeys)) {
      return ErrorAt(entry.first,
                     absl::StrCat("unknown key ", Key(name), " (known keys: ", absl::StrJoin(kKeys, ", "), ")"));
    }
    if (!seen.insert(name).second) return ErrorAt(entry.first, absl::StrCat("key ", Key(name), " is given twice"));
  }

  WorkflowConfig config;
  const YAML::Node command = section["command"];
  if (!command) return ErrorAt(section, absl::StrCat(Key("command"), " is required (a name of allow.commands)"));
  absl::StatusOr<std::string> name = Scalar(command, "command");
  if (!name.ok()) return name.status();
  absl::StatusOr<CommandTemplate> found = allow.FindCommand(*name);
  if (!found.ok()) return allow.WithAllowed(found.status());
  config.command_name = *name;
  config.command = std::move(*found);

  if (absl::Status s = PathValue(section, config, "config", allow, &config.config); !s.ok()) return s;
  if (absl::Status s = PathValue(section, config, "prompts", allow, &config.prompts); !s.ok()) return s;

  if (const YAML::Node env = section["env"]; env && !env.IsNull()) {
    if (!env.IsMap()) return ErrorAt(env, absl::StrCat(Key("env"), " must be a map of NAME: value"));
    for (const auto& entry : env) {
      const std::string var = entry.first.IsScalar() ? entry.first.Scalar() : "";
      if (std::find(config.command.env.begin(), config.command.env.end(), var) == config.command.env.end()) {
        return ErrorAt(entry.first,
                       absl::StrCat(Key("env"), ": command ", config.command_name, " does not let a spec set '", var,
                                    "' (allow.commands.", config.command_name, ".env lists: ",
                                    config.command.env.empty() ? "none" : absl::StrJoin(config.command.env, ", "), ")"));
      }
      if (!entry.second.IsScalar() || HasControl(entry.second.Scalar())) {
        return ErrorAt(entry.second, absl::StrCat(Key("env"), ".", var, " must be a string without control characters"));
      }
      config.env[var] = entry.second.Scalar();
    }
  }

  if (const YAML::Node mode = section["mode"]) {
    absl::StatusOr<std::string> value = Scalar(mode, "mode");
    if (!value.ok()) return value.status();
    config.mode = *value;
  } else if (auto it = config.env.find("ACCELERATOR"); it != config.env.end()) {
    config.mode = it->second;
  } else {
    config.mode = "default";
  }
  if (config.mode.empty() || config.mode.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != std::string::npos) {
    return ErrorAt(section["mode"] ? section["mode"] : section,
                   absl::StrCat(Key("mode"), " must be letters, digits, '.', '_' or '-', got '", config.mode, "'"));
  }

  config.names_container = Uses(config.command, "{container}");
  for (auto [key, out] : {std::pair<const char*, absl::Duration*>{"deadline", &config.deadline},
                          std::pair<const char*, absl::Duration*>{"stop_grace", &config.stop_grace},
                          std::pair<const char*, absl::Duration*>{"container_sample_period",
                                                                  &config.container_sample_period}}) {
    if (const YAML::Node node = section[key]) {
      absl::StatusOr<absl::Duration> value = Duration(node, key);
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
        return ErrorAt(memory, absl::StrCat(Key("memory"), " is container but command ", config.command_name,
                                            " has no {container} to name the container by (e.g. docker run --name "
                                            "{container} ...)"));
      }
      config.memory = MemoryMethod::kContainer;
    } else {
      return ErrorAt(memory,
                     absl::StrCat(Key("memory"), " must be auto, cgroup, rusage or container, got '", value, "'"));
    }
  }
  if (const YAML::Node results = section["results"]; results && !results.IsNull()) {
    if (!results.IsMap()) return ErrorAt(results, absl::StrCat(Key("results"), " must be a map of field: JSON pointer"));
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
        return ErrorAt(entry.first, absl::StrCat("unknown key ", Key("results." + field), " (known keys: ",
                                                 absl::StrJoin(kResultsKeys, ", "), ")"));
      }
      // A JSON pointer is "" (the whole document) or starts with '/' (RFC 6901).
      if (!entry.second.IsScalar() || (!entry.second.Scalar().empty() && entry.second.Scalar()[0] != '/')) {
        return ErrorAt(entry.second, absl::StrCat(Key("results." + field),
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

absl::StatusOr<std::vector<std::string>> FillCommand(const CommandTemplate& command, const std::string& config,
                                                     const std::string& prompts, const std::string& output,
                                                     const std::string& container) {
  const std::pair<const char*, const std::string*> values[] = {
      {"{config}", &config}, {"{prompts}", &prompts}, {"{output}", &output}, {"{container}", &container}};
  std::vector<std::string> argv;
  for (const std::string& arg : command.argv) {
    for (const auto& [placeholder, value] : values) {
      if (absl::StrContains(arg, placeholder) && value->empty()) {
        return absl::InvalidArgumentError(absl::StrCat("argument '", arg, "' holds ", placeholder, " but no value was given for it"));
      }
    }
    // One pass, so a value that itself holds "{output}" is not filled again.
    argv.push_back(absl::StrReplaceAll(
        arg, {{"{config}", config}, {"{prompts}", prompts}, {"{output}", output}, {"{container}", container}}));
  }
  return argv;
}

std::string ContainerName(int64_t pid, absl::Time now, int n) {
  return absl::StrCat("benchfleet-", pid, "-", absl::ToUnixSeconds(now), "-", n);
}

absl::StatusOr<WorkflowConfig> ParseWorkflowSection(const YAML::Node& section, const AllowList& allow) {
  try {
    return Parse(section, allow);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("line ", e.mark.line + 1, ": workflow: ", e.msg));
  }
}

}  // namespace benchfleet::agent::workflow
