#include "agent/backends/comfyui/comfyui_config.h"

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/spec/series_spec.h"
#include "common/string_views.h"

namespace benchfleet::agent::comfyui {
namespace {

constexpr const char* kKeys[] = {"cache_hit_threshold", "distinct_runs", "free_settle", "height", "pid",
                                 "prompt",              "request_timeout", "run_timeout", "seeds",  "set",
                                 "steps",               "url",           "width",       "workflow"};

absl::Status ErrorAt(const YAML::Node& node, std::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("line ", node.Mark().line + 1, ": ", ToAbsl(message)));
}

std::string Key(std::string_view key) { return absl::StrCat("comfyui.", ToAbsl(key)); }

std::string Shown(const YAML::Node& node) { return node.IsScalar() ? node.Scalar() : "a non-scalar"; }

absl::StatusOr<std::string> Scalar(const YAML::Node& node, std::string_view key) {
  if (!node.IsScalar() || node.Scalar().empty()) return ErrorAt(node, absl::StrCat(Key(key), " must be a non-empty string"));
  return node.Scalar();
}

absl::StatusOr<int64_t> Integer(const YAML::Node& node, std::string_view key, int64_t min, int64_t max) {
  int64_t value = 0;
  if (!node.IsScalar() || !absl::SimpleAtoi(node.Scalar(), &value) || value < min || value > max) {
    return ErrorAt(node, absl::StrCat(Key(key), " must be an integer from ", min, " to ", max, ", got '", Shown(node), "'"));
  }
  return value;
}

absl::StatusOr<absl::Duration> Duration(const YAML::Node& node, std::string_view key) {
  absl::Duration value;
  if (!node.IsScalar() || !absl::ParseDuration(node.Scalar(), &value) || value <= absl::ZeroDuration() ||
      value == absl::InfiniteDuration()) {
    return ErrorAt(node, absl::StrCat(Key(key), " must be a positive duration such as 120s, 2m or 500ms, got '",
                                      Shown(node), "'"));
  }
  // The agent's stop waits out a stop grace; everything else is a timeout or a cooldown.
  const absl::Duration max = key == "stop_grace" ? kMaxStopGrace : kMaxSpecDuration;
  if (std::string above = DurationAboveBound(value, max); !above.empty()) {
    return ErrorAt(node, absl::StrCat(Key(key), " ", above));
  }
  return value;
}

}  // namespace

absl::StatusOr<ComfyUiConfig> ParseComfyUiSection(const YAML::Node& section, const AllowList& allow, Env* env) {
  if (!section.IsMap()) {
    return ErrorAt(section, absl::StrCat("comfyui must be a map with the keys ", absl::StrJoin(kKeys, ", ")));
  }
  std::set<std::string> seen;
  for (const auto& entry : section) {
    const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "?";
    if (std::find_if(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return name == k; }) == std::end(kKeys)) {
      return ErrorAt(entry.first, absl::StrCat("unknown key ", Key(name), " (known keys: ", absl::StrJoin(kKeys, ", "), ")"));
    }
    if (!seen.insert(name).second) return ErrorAt(entry.first, absl::StrCat("key ", Key(name), " is given twice"));
  }
  ComfyUiConfig config;

  const YAML::Node url = section["url"];
  if (!url) return ErrorAt(section, absl::StrCat("comfyui needs ", Key("url"), ", e.g. http://127.0.0.1:8188"));
  absl::StatusOr<std::string> url_text = Scalar(url, "url");
  if (!url_text.ok()) return url_text.status();
  absl::string_view base = ToAbsl(*url_text);
  while (absl::ConsumeSuffix(&base, "/")) {
  }
  if (!absl::StartsWith(base, "http://")) {
    return ErrorAt(url, absl::StrCat(Key("url"), " must be an http:// URL (the websocket has no TLS here), got '",
                                     *url_text, "'"));
  }
  if (absl::Status s = allow.CheckUrl(ToStd(base)); !s.ok()) return s;
  config.url = std::string(base);

  const YAML::Node workflow = section["workflow"];
  if (!workflow) return ErrorAt(section, absl::StrCat("comfyui needs ", Key("workflow"), ": the API-format workflow file"));
  absl::StatusOr<std::string> path = Scalar(workflow, "workflow");
  if (!path.ok()) return path.status();
  config.workflow_path = *path;
  absl::StatusOr<std::string> text = env->ReadFile(*path);
  if (!text.ok()) {
    if (text.status().code() == absl::StatusCode::kNotFound) {
      return absl::NotFoundError(absl::StrCat("line ", workflow.Mark().line + 1, ": ", Key("workflow"), " ", *path,
                                              " does not exist"));
    }
    return ErrorAt(workflow, absl::StrCat(Key("workflow"), " ", *path, ": ", text.status().message()));
  }
  absl::StatusOr<Workflow> graph = Workflow::Parse(*text);
  if (!graph.ok()) return ErrorAt(workflow, absl::StrCat(Key("workflow"), " ", *path, ": ", graph.status().message()));
  config.workflow = std::move(*graph);

  if (const YAML::Node set = section["set"]) {
    if (!set.IsMap() || set.size() == 0) {
      return ErrorAt(set, absl::StrCat(Key("set"), " must be a map of name: {node: ID, input: NAME}, e.g. seed: {node: \"3\", input: seed}"));
    }
    for (const auto& entry : set) {
      const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "?";
      if (std::find_if(std::begin(kSettableNames), std::end(kSettableNames), [&](const char* k) { return name == k; }) ==
          std::end(kSettableNames)) {
        return ErrorAt(entry.first, absl::StrCat(Key("set"), " names must be one of ", absl::StrJoin(kSettableNames, ", "),
                                                 ", got '", name, "'"));
      }
      const YAML::Node target = entry.second;
      const std::string key = absl::StrCat("set.", name);
      if (!target.IsMap() || !target["node"] || !target["input"] || target.size() != 2) {
        return ErrorAt(target, absl::StrCat(Key(key), " must be {node: ID, input: NAME}"));
      }
      SetTarget t;
      t.name = name;
      absl::StatusOr<std::string> node = Scalar(target["node"], absl::StrCat(key, ".node"));
      if (!node.ok()) return node.status();
      absl::StatusOr<std::string> input = Scalar(target["input"], absl::StrCat(key, ".input"));
      if (!input.ok()) return input.status();
      t.node = *node;
      t.input = *input;
      auto it = config.workflow.nodes().find(t.node);
      if (it == config.workflow.nodes().end()) {
        return ErrorAt(target["node"], absl::StrCat(Key(key), ": the workflow has no node \"", t.node, "\""));
      }
      if (!it->second.inputs.contains(t.input)) {
        return ErrorAt(target["input"], absl::StrCat(Key(key), ": node ", t.node, " (", it->second.class_type,
                                                     ") has no input \"", t.input, "\""));
      }
      config.set.push_back(std::move(t));
    }
  }

  if (const YAML::Node seeds = section["seeds"]) {
    if (!seeds.IsSequence() || seeds.size() == 0) {
      return ErrorAt(seeds, absl::StrCat(Key("seeds"), " must be a non-empty list of integers, e.g. [42, 43, 44]"));
    }
    for (const YAML::Node& item : seeds) {
      uint64_t value = 0;
      if (!item.IsScalar() || !absl::SimpleAtoi(item.Scalar(), &value)) {
        return ErrorAt(item, absl::StrCat(Key("seeds"), " must be a list of integers from 0 to 18446744073709551615, got '",
                                          Shown(item), "'"));
      }
      config.seeds.push_back(value);
    }
  }
  if (const YAML::Node n = section["steps"]) {
    absl::StatusOr<int64_t> v = Integer(n, "steps", 1, 10000);
    if (!v.ok()) return v.status();
    config.steps = *v;
  }
  for (const char* dim : {"width", "height"}) {
    if (const YAML::Node n = section[dim]) {
      absl::StatusOr<int64_t> v = Integer(n, dim, 16, 16384);
      if (!v.ok()) return v.status();
      (std::string_view(dim) == "width" ? config.width : config.height) = *v;
    }
  }
  if (const YAML::Node n = section["prompt"]) {
    if (!n.IsScalar()) return ErrorAt(n, absl::StrCat(Key("prompt"), " must be a string"));
    config.prompt = n.Scalar();
  }
  // A value without a target, or a target without a value, is a spec mistake either way.
  const std::pair<const char*, bool> values[] = {{"seed", !config.seeds.empty()},
                                                 {"steps", config.steps.has_value()},
                                                 {"prompt", config.prompt.has_value()},
                                                 {"width", config.width.has_value()},
                                                 {"height", config.height.has_value()}};
  for (const auto& [name, given] : values) {
    const std::string value_key = std::string_view(name) == "seed" ? "seeds" : name;
    if (config.sets(name) && !given) {
      return ErrorAt(section["set"][name], absl::StrCat(Key(absl::StrCat("set.", name)), " needs a value: ",
                                                        Key(value_key)));
    }
    if (!config.sets(name) && given) {
      return ErrorAt(section[value_key], absl::StrCat(Key(value_key), " is given but ", Key("set"), " has no ", name,
                                                      " target: say where it goes, e.g. ", name,
                                                      ": {node: \"3\", input: ", name, "}"));
    }
  }

  if (const YAML::Node n = section["distinct_runs"]) {
    bool value = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, value)) {
      return ErrorAt(n, absl::StrCat(Key("distinct_runs"), " must be true or false, got '", Shown(n), "'"));
    }
    if (value && !config.sets("seed")) {
      return ErrorAt(n, absl::StrCat(Key("distinct_runs"), " needs ", Key("set.seed"), ": it gives every run a fresh seed"));
    }
    config.distinct_runs = value;
  }
  if (const YAML::Node n = section["cache_hit_threshold"]) {
    absl::StatusOr<absl::Duration> v = Duration(n, "cache_hit_threshold");
    if (!v.ok()) return v.status();
    config.cache_hit_threshold = *v;
  }
  if (const YAML::Node n = section["free_settle"]) {
    absl::StatusOr<absl::Duration> v = Duration(n, "free_settle");
    if (!v.ok()) return v.status();
    config.free_settle = *v;
  }
  if (const YAML::Node n = section["run_timeout"]) {
    absl::StatusOr<absl::Duration> v = Duration(n, "run_timeout");
    if (!v.ok()) return v.status();
    config.run_timeout = *v;
  }
  if (const YAML::Node n = section["request_timeout"]) {
    absl::StatusOr<absl::Duration> v = Duration(n, "request_timeout");
    if (!v.ok()) return v.status();
    config.request_timeout = *v;
  }
  if (const YAML::Node n = section["pid"]) {
    absl::StatusOr<int64_t> v = Integer(n, "pid", 1, 4194304);
    if (!v.ok()) return v.status();
    config.pid = *v;
  }
  return config;
}

}  // namespace benchfleet::agent::comfyui
