#include "agent/backends/comfyui/comfyui_config.h"

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "agent/backends/section.h"
#include "common/spec/series_spec.h"
#include "common/string_views.h"

namespace benchfleet::agent::comfyui {
namespace {

constexpr const char* kKeys[] = {"cache_hit_threshold", "distinct_runs", "free_settle", "height", "pid",
                                 "prompt",              "request_timeout", "run_timeout", "seeds",  "set",
                                 "steps",               "url",           "width",       "workflow"};

constexpr SectionReader kSection{"comfyui"};

}  // namespace

absl::StatusOr<ComfyUiConfig> ParseComfyUiSection(const YAML::Node& section, const AllowList& allow, Env* env,
                                                  SpecAuthor author) {
  if (absl::Status s = kSection.CheckKeys(section, kKeys); !s.ok()) return s;
  ComfyUiConfig config;

  const YAML::Node url = section["url"];
  if (!url)
    return kSection.ErrorAt(section,
                            absl::StrCat("comfyui needs ", kSection.Key("url"), ", e.g. http://127.0.0.1:8188"));
  absl::StatusOr<std::string> url_text = kSection.NonEmptyString(url, "url");
  if (!url_text.ok()) return url_text.status();
  absl::string_view base = ToAbsl(*url_text);
  while (absl::ConsumeSuffix(&base, "/")) {
  }
  if (!absl::StartsWith(base, "http://")) {
    return kSection.ErrorAt(
        url, absl::StrCat(kSection.Key("url"), " must be an http:// URL (the websocket has no TLS here), got '",
                          *url_text, "'"));
  }
  if (absl::Status s = allow.CheckUrl(ToStd(base)); !s.ok()) return s;
  config.url = std::string(base);

  const YAML::Node workflow = section["workflow"];
  if (!workflow)
    return kSection.ErrorAt(section,
                            absl::StrCat("comfyui needs ", kSection.Key("workflow"), ": the API-format workflow file"));
  absl::StatusOr<std::string> path = kSection.NonEmptyString(workflow, "workflow");
  if (!path.ok()) return path.status();
  // The graph is read and sent on to ComfyUI: a coordinator may name only a file inside
  // allow.workflow_dirs (checked before it is read). The operator's own spec is not held to it.
  if (author == SpecAuthor::kCoordinator) {
    if (absl::Status s = allow.CheckInputFile(*path); !s.ok()) return allow.WithAllowed(s);
  }
  config.workflow_path = *path;
  absl::StatusOr<std::string> text = env->ReadFile(*path);
  if (!text.ok()) {
    if (text.status().code() == absl::StatusCode::kNotFound) {
      return absl::NotFoundError(absl::StrCat("line ", workflow.Mark().line + 1, ": ", kSection.Key("workflow"), " ",
                                              *path, " does not exist"));
    }
    return kSection.ErrorAt(workflow,
                            absl::StrCat(kSection.Key("workflow"), " ", *path, ": ", text.status().message()));
  }
  absl::StatusOr<Graph> graph = Graph::Parse(*text);
  if (!graph.ok())
    return kSection.ErrorAt(workflow,
                            absl::StrCat(kSection.Key("workflow"), " ", *path, ": ", graph.status().message()));
  config.graph = std::move(*graph);

  if (const YAML::Node set = section["set"]) {
    if (!set.IsMap() || set.size() == 0) {
      return kSection.ErrorAt(
          set, absl::StrCat(kSection.Key("set"),
                            " must be a map of name: {node: ID, input: NAME}, e.g. seed: {node: \"3\", input: seed}"));
    }
    for (const auto& entry : set) {
      const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "?";
      if (std::find_if(std::begin(kSettableNames), std::end(kSettableNames), [&](const char* k) { return name == k; }) ==
          std::end(kSettableNames)) {
        return kSection.ErrorAt(entry.first, absl::StrCat(kSection.Key("set"), " names must be one of ",
                                                          absl::StrJoin(kSettableNames, ", "), ", got '", name, "'"));
      }
      const YAML::Node target = entry.second;
      const std::string key = absl::StrCat("set.", name);
      if (!target.IsMap() || !target["node"] || !target["input"] || target.size() != 2) {
        return kSection.ErrorAt(target, absl::StrCat(kSection.Key(key), " must be {node: ID, input: NAME}"));
      }
      SetTarget t;
      t.name = name;
      absl::StatusOr<std::string> node = kSection.NonEmptyString(target["node"], absl::StrCat(key, ".node"));
      if (!node.ok()) return node.status();
      absl::StatusOr<std::string> input = kSection.NonEmptyString(target["input"], absl::StrCat(key, ".input"));
      if (!input.ok()) return input.status();
      t.node = *node;
      t.input = *input;
      auto it = config.graph.nodes().find(t.node);
      if (it == config.graph.nodes().end()) {
        return kSection.ErrorAt(target["node"],
                                absl::StrCat(kSection.Key(key), ": the workflow has no node \"", t.node, "\""));
      }
      if (!it->second.inputs.contains(t.input)) {
        return kSection.ErrorAt(target["input"],
                                absl::StrCat(kSection.Key(key), ": node ", t.node, " (", it->second.class_type,
                                             ") has no input \"", t.input, "\""));
      }
      config.set.push_back(std::move(t));
    }
  }

  if (const YAML::Node seeds = section["seeds"]) {
    if (!seeds.IsSequence() || seeds.size() == 0) {
      return kSection.ErrorAt(
          seeds, absl::StrCat(kSection.Key("seeds"), " must be a non-empty list of integers, e.g. [42, 43, 44]"));
    }
    for (const YAML::Node& item : seeds) {
      uint64_t value = 0;
      if (!item.IsScalar() || !absl::SimpleAtoi(item.Scalar(), &value)) {
        return kSection.ErrorAt(item, absl::StrCat(kSection.Key("seeds"),
                                                   " must be a list of integers from 0 to 18446744073709551615, got '",
                                                   SectionReader::Shown(item), "'"));
      }
      config.seeds.push_back(value);
    }
  }
  if (const YAML::Node n = section["steps"]) {
    absl::StatusOr<int64_t> v = kSection.Integer(n, "steps", 1, 10000);
    if (!v.ok()) return v.status();
    config.steps = *v;
  }
  for (const char* dim : {"width", "height"}) {
    if (const YAML::Node n = section[dim]) {
      absl::StatusOr<int64_t> v = kSection.Integer(n, dim, 16, 16384);
      if (!v.ok()) return v.status();
      (std::string_view(dim) == "width" ? config.width : config.height) = *v;
    }
  }
  if (const YAML::Node n = section["prompt"]) {
    if (!n.IsScalar()) return kSection.ErrorAt(n, absl::StrCat(kSection.Key("prompt"), " must be a string"));
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
      return kSection.ErrorAt(section["set"][name], absl::StrCat(kSection.Key(absl::StrCat("set.", name)),
                                                                 " needs a value: ", kSection.Key(value_key)));
    }
    if (!config.sets(name) && given) {
      return kSection.ErrorAt(
          section[value_key],
          absl::StrCat(kSection.Key(value_key), " is given but ", kSection.Key("set"), " has no ", name,
                       " target: say where it goes, e.g. ", name, ": {node: \"3\", input: ", name, "}"));
    }
  }

  if (const YAML::Node n = section["distinct_runs"]) {
    bool value = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, value)) {
      return kSection.ErrorAt(n, absl::StrCat(kSection.Key("distinct_runs"), " must be true or false, got '",
                                              SectionReader::Shown(n), "'"));
    }
    if (value && !config.sets("seed")) {
      return kSection.ErrorAt(n, absl::StrCat(kSection.Key("distinct_runs"), " needs ", kSection.Key("set.seed"),
                                              ": it gives every run a fresh seed"));
    }
    config.distinct_runs = value;
  }
  if (const YAML::Node n = section["cache_hit_threshold"]) {
    absl::StatusOr<absl::Duration> v = kSection.Duration(n, "cache_hit_threshold");
    if (!v.ok()) return v.status();
    config.cache_hit_threshold = *v;
  }
  if (const YAML::Node n = section["free_settle"]) {
    absl::StatusOr<absl::Duration> v = kSection.Duration(n, "free_settle");
    if (!v.ok()) return v.status();
    config.free_settle = *v;
  }
  if (const YAML::Node n = section["run_timeout"]) {
    absl::StatusOr<absl::Duration> v = kSection.Duration(n, "run_timeout");
    if (!v.ok()) return v.status();
    config.run_timeout = *v;
  }
  if (const YAML::Node n = section["request_timeout"]) {
    absl::StatusOr<absl::Duration> v = kSection.Duration(n, "request_timeout");
    if (!v.ok()) return v.status();
    config.request_timeout = *v;
  }
  if (const YAML::Node n = section["pid"]) {
    absl::StatusOr<int64_t> v = kSection.Integer(n, "pid", 1, 4194304);
    if (!v.ok()) return v.status();
    config.pid = *v;
  }
  return config;
}

}  // namespace benchfleet::agent::comfyui
