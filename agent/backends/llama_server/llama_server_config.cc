#include "agent/backends/llama_server/llama_server_config.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "agent/backends/section.h"
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

constexpr SectionReader kSection{"llama-server"};

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
      return kSection.ErrorAt(node[i],
                              absl::StrCat(kSection.Key(key), " must not contain ", ToAbsl(name),
                                           ": the agent sets the model, host, port, log and verbosity itself"));
    }
    if (listed(name, kModelFileArgs)) {
      const bool inline_value = args[i].size() > name.size();
      if (!inline_value && i + 1 >= args.size()) {
        return kSection.ErrorAt(node[i], absl::StrCat(kSection.Key(key), ": ", ToAbsl(name), " needs a file"));
      }
      const std::string file = inline_value ? args[i].substr(name.size() + 1) : args[i + 1];
      if (absl::Status s = allow.CheckModelPath(file); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<LlamaServerConfig> Parse(const YAML::Node& section, const AllowList& allow) {
  if (absl::Status s = kSection.CheckKeys(section, kKeys); !s.ok()) return s;

  LlamaServerConfig config;
  const YAML::Node url = section["url"];
  const YAML::Node binary = section["binary"];
  const YAML::Node model = section["model"];
  if (url) {
    for (const char* key : {"binary", "model", "args", "modes", "allow_no_offload", "allow_partial_offload"}) {
      if (const YAML::Node node = section[key]) {
        return kSection.ErrorAt(node, absl::StrCat(kSection.Key(key), " cannot be combined with ", kSection.Key("url"),
                                                   ": a server given by url is not started by the agent"));
      }
    }
    absl::StatusOr<std::string> value = kSection.String(url, "url");
    if (!value.ok()) return value.status();
    absl::string_view base = ToAbsl(*value);
    while (absl::ConsumeSuffix(&base, "/")) {
    }
    if (!absl::StartsWith(base, "http://") && !absl::StartsWith(base, "https://")) {
      return kSection.ErrorAt(
          url, absl::StrCat(kSection.Key("url"), " must be an http:// or https:// URL, got '", *value, "'"));
    }
    if (absl::Status s = allow.CheckUrl(ToStd(base)); !s.ok()) return s;
    config.url = std::string(base);
  } else {
    if (!binary || !model) {
      return kSection.ErrorAt(section, absl::StrCat("llama-server needs either ", kSection.Key("url"), " or both ",
                                                    kSection.Key("binary"), " and ", kSection.Key("model")));
    }
    absl::StatusOr<std::string> binary_path = kSection.String(binary, "binary");
    if (!binary_path.ok()) return binary_path.status();
    if (absl::Status s = allow.CheckExecutable(*binary_path); !s.ok()) return s;
    config.binary = CanonicalPath(*binary_path);
    absl::StatusOr<std::string> model_path = kSection.String(model, "model");
    if (!model_path.ok()) return model_path.status();
    if (absl::Status s = allow.CheckModelPath(*model_path); !s.ok()) return s;
    config.model = CanonicalPath(*model_path);

    if (const YAML::Node args = section["args"]) {
      absl::StatusOr<std::vector<std::string>> list = kSection.StringList(args, "args");
      if (!list.ok()) return list.status();
      if (absl::Status s = CheckArgs(args, "args", *list, allow); !s.ok()) return s;
      config.args = std::move(*list);
    }
    if (const YAML::Node modes = section["modes"]; modes && !modes.IsNull()) {
      if (!modes.IsMap() || modes.size() == 0) {
        return kSection.ErrorAt(modes, absl::StrCat(kSection.Key("modes"),
                                                    " must be a map of mode name: [arguments], e.g. gpu: [-ngl, 99]"));
      }
      for (const auto& entry : modes) {
        const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "";
        if (!IsModeName(name)) {
          return kSection.ErrorAt(
              entry.first,
              absl::StrCat(kSection.Key("modes"), " names must be letters, digits, '_', '-' or '.', got '", name, "'"));
        }
        for (const auto& [existing, unused] : config.modes) {
          if (existing == name)
            return kSection.ErrorAt(entry.first,
                                    absl::StrCat("mode ", kSection.Key("modes." + name), " is given twice"));
        }
        const std::string key = absl::StrCat("modes.", name);
        absl::StatusOr<std::vector<std::string>> list = kSection.StringList(entry.second, key);
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
      absl::StatusOr<std::vector<std::string>> list = kSection.StringList(node, key);
      if (!list.ok()) return list.status();
      for (size_t i = 0; i < list->size(); ++i) {
        const std::string& mode = (*list)[i];
        if (std::none_of(config.modes.begin(), config.modes.end(), [&](const auto& m) { return m.first == mode; })) {
          std::vector<std::string> names;
          for (const auto& m : config.modes) names.push_back(m.first);
          return kSection.ErrorAt(
              node[i], absl::StrCat(kSection.Key(key), " names mode ", mode, ", which ", kSection.Key("modes"),
                                    " does not define (its modes: ", absl::StrJoin(names, ", "), ")"));
        }
      }
      out->insert(list->begin(), list->end());
    }
  }

  if (const YAML::Node prompt = section["prompt"]) {
    absl::StatusOr<std::string> value = kSection.String(prompt, "prompt");
    if (!value.ok()) return value.status();
    config.prompt = *value;
  }
  if (config.prompt.empty()) {
    return kSection.ErrorAt(section["prompt"] ? section["prompt"] : section,
                            absl::StrCat(kSection.Key("prompt"), " is required"));
  }
  if (const YAML::Node node = section["n_predict"]) {
    absl::StatusOr<int64_t> value = kSection.Integer(node, "n_predict", 1, 1 << 20, "a positive integer");
    if (!value.ok()) return value.status();
    config.n_predict = static_cast<int>(*value);
  }
  if (const YAML::Node node = section["seed"]) {
    // 4294967295 (and -1) is llama.cpp's "random seed": not reproducible.
    absl::StatusOr<int64_t> value = kSection.Integer(node, "seed", 0, 4294967294LL, "an integer from 0 to 4294967294");
    if (!value.ok()) return value.status();
    config.seed = static_cast<uint32_t>(*value);
  }
  if (const YAML::Node node = section["stream"]) {
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, config.stream)) {
      return kSection.ErrorAt(node, absl::StrCat(kSection.Key("stream"), " must be true or false, got '",
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
      absl::StatusOr<absl::Duration> value = kSection.Duration(node, d.key);
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
