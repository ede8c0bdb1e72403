#include "agent/backends/llama_server/llama_server_config.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/spec/series_spec.h"
#include "common/string_views.h"

namespace benchfleet::agent::llama_server {
namespace {

constexpr const char* kKeys[] = {"allow_no_offload", "allow_partial_offload", "args",   "binary", "health_timeout",
                                 "model",            "modes",                 "n_predict", "prompt", "request_timeout",
                                 "seed",             "stop_grace",            "stream",    "url"};

// Arguments the agent sets itself, or that would fetch a model past the allow-list.
constexpr const char* kReservedArgs[] = {
    "-m",         "--model",         "--host",     "--port",    "-lv",      "--verbosity", "--log-verbosity",
    "-v",         "--verbose",       "--log-file", "--log-disable", "-mu",  "--model-url", "-hf",
    "-hfr",       "--hf-repo",       "-hff",       "--hf-file", "-hfd",     "--hf-repo-draft", "-dr",
    "--docker-repo"};

// Arguments whose next argument is a file llama-server reads: checked like the model.
constexpr const char* kModelFileArgs[] = {"--lora",        "--lora-scaled", "-md",     "--model-draft",
                                          "-mm",           "--mmproj",      "-mv",     "--model-vocoder",
                                          "--control-vector", "--control-vector-scaled"};

absl::Status ErrorAt(const YAML::Node& node, std::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("line ", node.Mark().line + 1, ": ", ToAbsl(message)));
}

std::string Key(std::string_view key) { return absl::StrCat("llama-server.", ToAbsl(key)); }

absl::StatusOr<std::string> Scalar(const YAML::Node& node, std::string_view key) {
  if (!node.IsScalar()) return ErrorAt(node, absl::StrCat(Key(key), " must be a string"));
  return node.Scalar();
}

absl::StatusOr<std::vector<std::string>> StringList(const YAML::Node& node, std::string_view key) {
  std::vector<std::string> out;
  if (node.IsNull()) return out;
  if (!node.IsSequence()) return ErrorAt(node, absl::StrCat(Key(key), " must be a list of strings"));
  for (const YAML::Node& item : node) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      return ErrorAt(item, absl::StrCat(Key(key), " must be a list of non-empty strings"));
    }
    out.push_back(item.Scalar());
  }
  return out;
}

absl::StatusOr<int64_t> Integer(const YAML::Node& node, std::string_view key, int64_t min, int64_t max,
                                std::string_view what) {
  int64_t value = 0;
  if (!node.IsScalar() || !absl::SimpleAtoi(node.Scalar(), &value) || value < min || value > max) {
    return ErrorAt(node, absl::StrCat(Key(key), " must be ", ToAbsl(what), ", got '",
                                      node.IsScalar() ? node.Scalar() : "a non-scalar", "'"));
  }
  return value;
}

absl::StatusOr<absl::Duration> Duration(const YAML::Node& node, std::string_view key) {
  absl::Duration value;
  if (!node.IsScalar() || !absl::ParseDuration(node.Scalar(), &value) || value <= absl::ZeroDuration() ||
      value == absl::InfiniteDuration()) {
    return ErrorAt(node, absl::StrCat(Key(key), " must be a positive duration such as 120s, 2m or 500ms, got '",
                                      node.IsScalar() ? node.Scalar() : "a non-scalar", "'"));
  }
  // The agent's stop waits out a stop grace; everything else is a timeout or a cooldown.
  const absl::Duration max = key == "stop_grace" ? kMaxStopGrace : kMaxSpecDuration;
  if (std::string above = DurationAboveBound(value, max); !above.empty()) {
    return ErrorAt(node, absl::StrCat(Key(key), " ", above));
  }
  return value;
}

bool IsModeName(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// Checks the arguments the spec passes to llama-server: none the agent sets itself, and every
// file a model-file argument names inside the allow-list.
absl::Status CheckArgs(const YAML::Node& node, std::string_view key, const std::vector<std::string>& args,
                       const AllowList& allow) {
  auto listed = [](std::string_view arg, const auto& list) {
    return std::find_if(std::begin(list), std::end(list), [&](const char* a) { return arg == a; }) != std::end(list);
  };
  for (size_t i = 0; i < args.size(); ++i) {
    // "--port=8080" is "--port".
    const std::string_view name = std::string_view(args[i]).substr(0, args[i].find('='));
    if (listed(name, kReservedArgs)) {
      return ErrorAt(node[i], absl::StrCat(Key(key), " must not contain ", ToAbsl(name),
                                           ": the agent sets the model, host, port, log and verbosity itself"));
    }
    if (listed(name, kModelFileArgs)) {
      const bool inline_value = args[i].size() > name.size();
      if (!inline_value && i + 1 >= args.size()) {
        return ErrorAt(node[i], absl::StrCat(Key(key), ": ", ToAbsl(name), " needs a file"));
      }
      const std::string file = inline_value ? args[i].substr(name.size() + 1) : args[i + 1];
      if (absl::Status s = allow.CheckModelPath(file); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<LlamaServerConfig> Parse(const YAML::Node& section, const AllowList& allow) {
  if (!section.IsMap()) {
    return ErrorAt(section, absl::StrCat("llama-server must be a map with the keys ", absl::StrJoin(kKeys, ", ")));
  }
  std::set<std::string> seen;
  for (const auto& entry : section) {
    const YAML::Node& key = entry.first;
    const std::string name = key.IsScalar() ? key.Scalar() : "?";
    if (std::find_if(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return name == k; }) == std::end(kKeys)) {
      return ErrorAt(key, absl::StrCat("unknown key ", Key(name), " (known keys: ", absl::StrJoin(kKeys, ", "), ")"));
    }
    if (!seen.insert(name).second) return ErrorAt(key, absl::StrCat("key ", Key(name), " is given twice"));
  }

  LlamaServerConfig config;
  const YAML::Node url = section["url"];
  const YAML::Node binary = section["binary"];
  const YAML::Node model = section["model"];
  if (url) {
    for (const char* key : {"binary", "model", "args", "modes", "allow_no_offload", "allow_partial_offload"}) {
      if (const YAML::Node node = section[key]) {
        return ErrorAt(node, absl::StrCat(Key(key), " cannot be combined with ", Key("url"),
                                          ": a server given by url is not started by the agent"));
      }
    }
    absl::StatusOr<std::string> value = Scalar(url, "url");
    if (!value.ok()) return value.status();
    absl::string_view base = ToAbsl(*value);
    while (absl::ConsumeSuffix(&base, "/")) {
    }
    if (!absl::StartsWith(base, "http://") && !absl::StartsWith(base, "https://")) {
      return ErrorAt(url, absl::StrCat(Key("url"), " must be an http:// or https:// URL, got '", *value, "'"));
    }
    if (absl::Status s = allow.CheckUrl(ToStd(base)); !s.ok()) return s;
    config.url = std::string(base);
  } else {
    if (!binary || !model) {
      return ErrorAt(section, absl::StrCat("llama-server needs either ", Key("url"), " or both ", Key("binary"),
                                           " and ", Key("model")));
    }
    absl::StatusOr<std::string> binary_path = Scalar(binary, "binary");
    if (!binary_path.ok()) return binary_path.status();
    if (absl::Status s = allow.CheckExecutable(*binary_path); !s.ok()) return s;
    config.binary = CanonicalPath(*binary_path);
    absl::StatusOr<std::string> model_path = Scalar(model, "model");
    if (!model_path.ok()) return model_path.status();
    if (absl::Status s = allow.CheckModelPath(*model_path); !s.ok()) return s;
    config.model = CanonicalPath(*model_path);

    if (const YAML::Node args = section["args"]) {
      absl::StatusOr<std::vector<std::string>> list = StringList(args, "args");
      if (!list.ok()) return list.status();
      if (absl::Status s = CheckArgs(args, "args", *list, allow); !s.ok()) return s;
      config.args = std::move(*list);
    }
    if (const YAML::Node modes = section["modes"]; modes && !modes.IsNull()) {
      if (!modes.IsMap() || modes.size() == 0) {
        return ErrorAt(modes, absl::StrCat(Key("modes"), " must be a map of mode name: [arguments], e.g. gpu: [-ngl, 99]"));
      }
      for (const auto& entry : modes) {
        const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "";
        if (!IsModeName(name)) {
          return ErrorAt(entry.first, absl::StrCat(Key("modes"), " names must be letters, digits, '_', '-' or '.', got '",
                                                   name, "'"));
        }
        for (const auto& [existing, unused] : config.modes) {
          if (existing == name) return ErrorAt(entry.first, absl::StrCat("mode ", Key("modes." + name), " is given twice"));
        }
        const std::string key = absl::StrCat("modes.", name);
        absl::StatusOr<std::vector<std::string>> list = StringList(entry.second, key);
        if (!list.ok()) return list.status();
        if (absl::Status s = CheckArgs(entry.second, key, *list, allow); !s.ok()) return s;
        config.modes.emplace_back(name, std::move(*list));
      }
    } else {
      config.modes.emplace_back("default", std::vector<std::string>{});
    }
    // Modes that may run without the GPU offload they ask for, or with part of it.
    for (auto [key, out] : {std::pair{"allow_no_offload", &config.allow_no_offload},
                            std::pair{"allow_partial_offload", &config.allow_partial_offload}}) {
      const YAML::Node node = section[key];
      if (!node) continue;
      absl::StatusOr<std::vector<std::string>> list = StringList(node, key);
      if (!list.ok()) return list.status();
      for (size_t i = 0; i < list->size(); ++i) {
        const std::string& mode = (*list)[i];
        if (std::none_of(config.modes.begin(), config.modes.end(), [&](const auto& m) { return m.first == mode; })) {
          std::vector<std::string> names;
          for (const auto& m : config.modes) names.push_back(m.first);
          return ErrorAt(node[i], absl::StrCat(Key(key), " names mode ", mode, ", which ", Key("modes"),
                                               " does not define (its modes: ", absl::StrJoin(names, ", "), ")"));
        }
      }
      out->insert(list->begin(), list->end());
    }
  }

  if (const YAML::Node prompt = section["prompt"]) {
    absl::StatusOr<std::string> value = Scalar(prompt, "prompt");
    if (!value.ok()) return value.status();
    config.prompt = *value;
  }
  if (config.prompt.empty()) {
    return ErrorAt(section["prompt"] ? section["prompt"] : section, absl::StrCat(Key("prompt"), " is required"));
  }
  if (const YAML::Node node = section["n_predict"]) {
    absl::StatusOr<int64_t> value = Integer(node, "n_predict", 1, 1 << 20, "a positive integer");
    if (!value.ok()) return value.status();
    config.n_predict = static_cast<int>(*value);
  }
  if (const YAML::Node node = section["seed"]) {
    // 4294967295 (and -1) is llama.cpp's "random seed": not reproducible.
    absl::StatusOr<int64_t> value = Integer(node, "seed", 0, 4294967294LL, "an integer from 0 to 4294967294");
    if (!value.ok()) return value.status();
    config.seed = static_cast<uint32_t>(*value);
  }
  if (const YAML::Node node = section["stream"]) {
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, config.stream)) {
      return ErrorAt(node, absl::StrCat(Key("stream"), " must be true or false, got '",
                                        node.IsScalar() ? node.Scalar() : "a non-scalar", "'"));
    }
  }
  struct DurationKey {
    const char* key;
    absl::Duration* out;
  };
  for (const DurationKey& d : {DurationKey{"health_timeout", &config.health_timeout},
                               DurationKey{"request_timeout", &config.request_timeout},
                               DurationKey{"stop_grace", &config.stop_grace}}) {
    if (const YAML::Node node = section[d.key]) {
      absl::StatusOr<absl::Duration> value = Duration(node, d.key);
      if (!value.ok()) return value.status();
      *d.out = *value;
    }
  }
  return config;
}

}  // namespace

absl::StatusOr<LlamaServerConfig> ParseLlamaServerSection(const YAML::Node& section, const AllowList& allow) {
  // yaml-cpp reports misuse by exception; none may cross this boundary.
  try {
    return Parse(section, allow);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("line ", e.mark.line + 1, ": llama-server: ", e.msg));
  }
}

}  // namespace benchfleet::agent::llama_server
