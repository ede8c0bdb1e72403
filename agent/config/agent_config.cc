#include "agent/config/agent_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>
#include <span>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/coordinator_address.h"
#include "common/yaml_error.h"
#include "common/string_views.h"

namespace benchfleet::agent {
namespace {

constexpr const char* kTopKeys[] = {"coordinator", "state_dir", "metrics_listen", "device_sampling", "labels",
                                     "allow",       "ca_cert",   "plaintext",      "renew_before"};
constexpr const char* kAllowKeys[] = {"backends", "executables", "model_dirs", "urls", "workflow_dirs", "commands"};
constexpr const char* kCommandKeys[] = {"argv", "env"};

using ErrorAt = YamlErrorAt;

absl::StatusOr<std::string> ScalarString(const YAML::Node& node, std::string_view name, const ErrorAt& error) {
  if (!node.IsScalar()) return error(node, absl::StrCat(ToAbsl(name), " must be a string"));
  return node.Scalar();
}

absl::StatusOr<std::vector<std::string>> StringList(const YAML::Node& node, std::string_view name,
                                                    bool absolute_paths, const ErrorAt& error) {
  std::vector<std::string> out;
  if (node.IsNull()) return out;
  if (!node.IsSequence()) return error(node, absl::StrCat(ToAbsl(name), " must be a list of strings"));
  for (const YAML::Node& item : node) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      return error(item, absl::StrCat(ToAbsl(name), " must be a list of non-empty strings"));
    }
    if (absolute_paths && item.Scalar()[0] != '/') {
      return error(item, absl::StrCat(ToAbsl(name), " entry '", item.Scalar(), "' must be an absolute path"));
    }
    out.push_back(item.Scalar());
  }
  return out;
}

// Checks that every "{...}" of a template argument is a known placeholder.
absl::Status CheckPlaceholders(const YAML::Node& node, const std::string& arg, std::string_view name,
                               const ErrorAt& error) {
  for (size_t open = arg.find('{'); open != std::string::npos; open = arg.find('{', open + 1)) {
    const size_t close = arg.find('}', open);
    const std::string placeholder = arg.substr(open, close == std::string::npos ? std::string::npos : close - open + 1);
    bool known = false;
    for (const char* p : kCommandPlaceholders) known = known || placeholder == p;
    if (!known) {
      return error(node, absl::StrCat(ToAbsl(name), ": unknown placeholder '", placeholder, "' in '", arg,
                                      "' (known placeholders: ", absl::StrJoin(kCommandPlaceholders, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

// Checks that node is a map with only known keys, none twice.
absl::Status CheckKeys(const YAML::Node& node, std::string_view where, std::span<const char* const> known,
                       const ErrorAt& error) {
  std::set<std::string> seen;
  for (const auto& entry : node) {
    const YAML::Node& key = entry.first;
    const std::string name = key.IsScalar() ? key.Scalar() : "?";
    if (std::find_if(known.begin(), known.end(), [&](const char* k) { return name == k; }) == known.end()) {
      return error(key, absl::StrCat("unknown key '", ToAbsl(where), name, "' (known keys: ",
                                     absl::StrJoin(known, ", "), ")"));
    }
    if (!seen.insert(name).second) {
      return error(key, absl::StrCat("key '", ToAbsl(where), name, "' is given twice"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<AgentConfig> Parse(const YAML::Node& root, std::string_view source) {
  const ErrorAt error(source);
  AgentConfig config;
  config.source = std::string(source);
  if (root.IsNull()) return config;  // an empty file: all defaults
  if (!root.IsMap()) {
    return error(root, absl::StrCat("the top level must be a map with the keys ", absl::StrJoin(kTopKeys, ", ")));
  }
  if (auto s = CheckKeys(root, "", kTopKeys, error); !s.ok()) return s;

  if (const YAML::Node node = root["coordinator"]; node && !node.IsNull()) {
    if (node.IsSequence()) {
      // Several coordinators, tried in order: each entry one address (a list in YAML, not commas).
      std::vector<std::string> addresses;
      for (const YAML::Node& item : node) {
        if (!item.IsScalar() || item.Scalar().empty() || item.Scalar().find(',') != std::string::npos ||
            SplitCoordinatorAddresses(item.Scalar()).size() != 1) {
          return error(item, "coordinator: each entry of the list must be one address, HOST:PORT");
        }
        addresses.push_back(SplitCoordinatorAddresses(item.Scalar())[0]);
      }
      if (addresses.empty()) return error(node, "coordinator: the list names no address");
      config.coordinator = absl::StrJoin(addresses, ",");
    } else {
      auto value = ScalarString(node, "coordinator", error);
      if (!value.ok()) return value.status();
      if (SplitCoordinatorAddresses(*value).empty()) return error(node, "coordinator: no address given");
      config.coordinator = *value;
    }
  }
  if (const YAML::Node node = root["state_dir"]; node && !node.IsNull()) {
    auto value = ScalarString(node, "state_dir", error);
    if (!value.ok()) return value.status();
    config.state_dir = *value;
  }
  if (const YAML::Node node = root["metrics_listen"]; node && !node.IsNull()) {
    auto value = ScalarString(node, "metrics_listen", error);
    if (!value.ok()) return value.status();
    config.metrics_listen = *value;
  }
  if (const YAML::Node node = root["device_sampling"]; node && !node.IsNull()) {
    auto value = ScalarString(node, "device_sampling", error);
    if (!value.ok()) return value.status();
    auto sampling = ParseDeviceSampling(*value);
    if (!sampling.ok()) return error(node, absl::StrCat("device_sampling: ", sampling.status().message()));
    config.device_sampling = *sampling;
  }
  if (const YAML::Node node = root["ca_cert"]; node && !node.IsNull()) {
    auto value = ScalarString(node, "ca_cert", error);
    if (!value.ok()) return value.status();
    config.ca_cert = *value;
  }
  if (const YAML::Node node = root["plaintext"]; node && !node.IsNull()) {
    if (!node.IsScalar() || (node.Scalar() != "true" && node.Scalar() != "false")) {
      return error(node, "plaintext must be true or false");
    }
    config.plaintext = node.Scalar() == "true";
  }
  if (const YAML::Node node = root["renew_before"]; node && !node.IsNull()) {
    auto value = ScalarString(node, "renew_before", error);
    if (!value.ok()) return value.status();
    if (!absl::ParseDuration(*value, &config.renew_before) || config.renew_before < absl::ZeroDuration()) {
      return error(node, absl::StrCat("renew_before: '", *value, "' is not a duration like 720h"));
    }
  }
  if (const YAML::Node node = root["labels"]; node && !node.IsNull()) {
    if (!node.IsMap()) return error(node, "labels must be a map of name: value");
    for (const auto& entry : node) {
      if (!entry.first.IsScalar() || entry.first.Scalar().empty()) {
        return error(entry.first, "label names must be non-empty strings");
      }
      if (!entry.second.IsScalar()) {
        return error(entry.second, absl::StrCat("label '", entry.first.Scalar(), "' must have a string value"));
      }
      if (!config.labels.emplace(entry.first.Scalar(), entry.second.Scalar()).second) {
        return error(entry.first, absl::StrCat("label '", entry.first.Scalar(), "' is given twice"));
      }
    }
  }
  if (const YAML::Node allow = root["allow"]; allow && !allow.IsNull()) {
    if (!allow.IsMap()) {
      return error(allow, absl::StrCat("allow must be a map with the keys ", absl::StrJoin(kAllowKeys, ", ")));
    }
    if (auto s = CheckKeys(allow, "allow.", kAllowKeys, error); !s.ok()) return s;
    struct Field {
      const char* key;
      std::vector<std::string>* out;
      bool absolute_paths;
    };
    for (const Field& field : {Field{"backends", &config.allow.backends, false},
                               Field{"executables", &config.allow.executables, true},
                               Field{"model_dirs", &config.allow.model_dirs, true},
                               Field{"urls", &config.allow.urls, false},
                               Field{"workflow_dirs", &config.allow.workflow_dirs, true}}) {
      const YAML::Node node = allow[field.key];
      if (!node) continue;
      auto list = StringList(node, absl::StrCat("allow.", field.key), field.absolute_paths, error);
      if (!list.ok()) return list.status();
      *field.out = std::move(*list);
    }
  }
  if (const YAML::Node commands = root["allow"] ? root["allow"]["commands"] : YAML::Node();
      commands && !commands.IsNull()) {
    if (!commands.IsMap()) {
      return error(commands, "allow.commands must be a map of name: {argv: [program, args...], env: [NAMES]}");
    }
    for (const auto& entry : commands) {
      const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "";
      const std::string where = absl::StrCat("allow.commands.", name);
      if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
                              std::string::npos) {
        return error(entry.first, absl::StrCat("allow.commands names must be letters, digits, '.', '_' or '-', got '",
                                               name, "'"));
      }
      if (config.allow.commands.count(name) > 0) return error(entry.first, absl::StrCat("key '", where, "' is given twice"));
      const YAML::Node& body = entry.second;
      if (!body.IsMap()) return error(body, absl::StrCat(where, " must be a map with the keys argv, env"));
      if (auto s = CheckKeys(body, where + ".", kCommandKeys, error); !s.ok()) return s;
      CommandTemplate command;
      if (!body["argv"]) return error(body, absl::StrCat(where, ".argv is required"));
      auto argv = StringList(body["argv"], where + ".argv", false, error);
      if (!argv.ok()) return argv.status();
      if (argv->empty() || (*argv)[0][0] != '/') {
        return error(body["argv"], absl::StrCat(where, ".argv must start with the program's absolute path"));
      }
      for (size_t i = 0; i < argv->size(); ++i) {
        if (auto s = CheckPlaceholders(body["argv"][i], (*argv)[i], where + ".argv", error); !s.ok()) return s;
      }
      command.argv = std::move(*argv);
      if (body["env"]) {
        auto env = StringList(body["env"], where + ".env", false, error);
        if (!env.ok()) return env.status();
        for (size_t i = 0; i < env->size(); ++i) {
          const std::string& var = (*env)[i];
          if (var.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos ||
              absl::ascii_isdigit(static_cast<unsigned char>(var[0]))) {
            return error(body["env"][i], absl::StrCat(where, ".env entry '", var, "' is not a variable name"));
          }
        }
        command.env = std::move(*env);
      }
      config.allow.commands.emplace(name, std::move(command));
    }
  }
  return config;
}

}  // namespace

absl::StatusOr<DeviceSampling> ParseDeviceSampling(std::string_view text) {
  if (text == "auto") return DeviceSampling::kAuto;
  if (text == "off") return DeviceSampling::kOff;
  if (text == "with_cpu_load") return DeviceSampling::kWithCpuLoad;
  return absl::InvalidArgumentError(
      absl::StrCat("'", ToAbsl(text), "' is not one of auto, off, with_cpu_load"));
}

absl::StatusOr<AgentConfig> ParseAgentConfig(std::string_view yaml, std::string_view source) {
  // yaml-cpp reports everything by exception; none may cross this boundary.
  try {
    return Parse(YAML::Load(std::string(yaml)), source);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(source), ":", e.mark.line + 1, ":", e.mark.column + 1,
                                                   ": not valid YAML: ", e.msg));
  }
}

absl::StatusOr<AgentConfig> LoadAgentConfig(Env* env, const std::string& path) {
  auto text = env->ReadFile(path);
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        absl::StrCat("cannot read agent config: ", text.status().message()));
  }
  return ParseAgentConfig(*text, path);
}

}  // namespace benchfleet::agent
