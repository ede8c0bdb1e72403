#include "agent/backends/openai/openai_config.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/spec/series_spec.h"
#include "common/string_views.h"

namespace benchfleet::agent::openai {
namespace {

constexpr const char* kKeys[] = {"concurrency", "endpoint", "max_tokens",      "model",       "prompts", "seed",
                                 "slo",         "stream",   "request_timeout", "temperature", "url"};
constexpr const char* kSloKeys[] = {"tpot", "ttft"};

absl::Status ErrorAt(const YAML::Node& node, std::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("line ", node.Mark().line + 1, ": ", ToAbsl(message)));
}

std::string Key(std::string_view key) { return absl::StrCat("openai.", ToAbsl(key)); }

std::string Shown(const YAML::Node& node) { return node.IsScalar() ? node.Scalar() : "a non-scalar"; }

absl::StatusOr<std::string> Scalar(const YAML::Node& node, std::string_view key) {
  if (!node.IsScalar() || node.Scalar().empty())
    return ErrorAt(node, absl::StrCat(Key(key), " must be a non-empty string"));
  return node.Scalar();
}

absl::StatusOr<int64_t> Integer(const YAML::Node& node, std::string_view key, int64_t min, int64_t max) {
  int64_t value = 0;
  if (!node.IsScalar() || !absl::SimpleAtoi(node.Scalar(), &value) || value < min || value > max) {
    return ErrorAt(node,
                   absl::StrCat(Key(key), " must be an integer from ", min, " to ", max, ", got '", Shown(node), "'"));
  }
  return value;
}

absl::StatusOr<absl::Duration> Duration(const YAML::Node& node, std::string_view key) {
  absl::Duration value;
  if (!node.IsScalar() || !absl::ParseDuration(node.Scalar(), &value) || value <= absl::ZeroDuration() ||
      value == absl::InfiniteDuration()) {
    return ErrorAt(
        node, absl::StrCat(Key(key), " must be a positive duration such as 30s, 2m or 500ms, got '", Shown(node), "'"));
  }
  // The agent's stop waits out a stop grace; everything else is a timeout or a cooldown.
  const absl::Duration max = key == "stop_grace" ? kMaxStopGrace : kMaxSpecDuration;
  if (std::string above = DurationAboveBound(value, max); !above.empty()) {
    return ErrorAt(node, absl::StrCat(Key(key), " ", above));
  }
  return value;
}

template <size_t N>
absl::Status CheckKeys(const YAML::Node& map, const char* const (&keys)[N], std::string_view prefix) {
  std::set<std::string> seen;
  for (const auto& entry : map) {
    const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "?";
    if (std::find_if(std::begin(keys), std::end(keys), [&](const char* k) { return name == k; }) == std::end(keys)) {
      return ErrorAt(entry.first, absl::StrCat("unknown key ", Key(absl::StrCat(ToAbsl(prefix), name)),
                                               " (known keys: ", absl::StrJoin(keys, ", "), ")"));
    }
    if (!seen.insert(name).second) {
      return ErrorAt(entry.first, absl::StrCat("key ", Key(absl::StrCat(ToAbsl(prefix), name)), " is given twice"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<OpenAiConfig> Parse(const YAML::Node& section, const AllowList& allow, Env* env) {
  if (!section.IsMap()) {
    return ErrorAt(section, absl::StrCat("openai must be a map with the keys ", absl::StrJoin(kKeys, ", ")));
  }
  if (absl::Status s = CheckKeys(section, kKeys, ""); !s.ok()) return s;
  OpenAiConfig config;
  for (const char* required : {"url", "model", "prompts"}) {
    if (!section[required]) return ErrorAt(section, absl::StrCat("openai needs ", Key(required)));
  }

  const YAML::Node url = section["url"];
  absl::StatusOr<std::string> url_value = Scalar(url, "url");
  if (!url_value.ok()) return url_value.status();
  absl::string_view base = ToAbsl(*url_value);
  while (absl::ConsumeSuffix(&base, "/")) {
  }
  if (!absl::StartsWith(base, "http://") && !absl::StartsWith(base, "https://")) {
    return ErrorAt(url, absl::StrCat(Key("url"), " must be an http:// or https:// URL, got '", *url_value, "'"));
  }
  if (absl::Status s = allow.CheckUrl(ToStd(base)); !s.ok()) return allow.WithAllowed(s);
  config.url = std::string(base);

  absl::StatusOr<std::string> model = Scalar(section["model"], "model");
  if (!model.ok()) return model.status();
  config.model = *model;

  if (const YAML::Node node = section["endpoint"]) {
    if (node.IsScalar() && node.Scalar() == "completions") {
      config.endpoint = Endpoint::kCompletions;
    } else if (node.IsScalar() && node.Scalar() == "chat") {
      config.endpoint = Endpoint::kChat;
    } else {
      return ErrorAt(node, absl::StrCat(Key("endpoint"), " must be completions or chat, got '", Shown(node), "'"));
    }
  }

  // The prompts are read and sent to the server: a coordinator could otherwise have any readable
  // file sent to an allowed URL, so the file must lie in allow.workflow_dirs (as the workflow
  // backend's prompts do), for `run` and coordinator tasks alike.
  const YAML::Node prompts = section["prompts"];
  absl::StatusOr<std::string> path = Scalar(prompts, "prompts");
  if (!path.ok()) return path.status();
  if (absl::Status s = allow.CheckWorkflowPath(*path); !s.ok()) return allow.WithAllowed(s);
  config.prompts_path = CanonicalPath(*path);
  absl::StatusOr<std::string> text = env->ReadFile(config.prompts_path);
  if (!text.ok()) {
    if (absl::IsNotFound(text.status())) {
      return absl::NotFoundError(absl::StrCat("line ", prompts.Mark().line + 1, ": ", Key("prompts"), " ",
                                              config.prompts_path, " does not exist"));
    }
    return ErrorAt(prompts, absl::StrCat(Key("prompts"), " ", config.prompts_path, ": ", text.status().message()));
  }
  absl::StatusOr<std::vector<Prompt>> parsed = ParsePromptsJsonl(*text, config.prompts_path);
  if (!parsed.ok()) return ErrorAt(prompts, absl::StrCat(Key("prompts"), ": ", parsed.status().message()));
  config.prompts = std::move(*parsed);

  if (const YAML::Node node = section["concurrency"]) {
    absl::StatusOr<int64_t> v = Integer(node, "concurrency", 1, 1024);
    if (!v.ok()) return v.status();
    config.concurrency = static_cast<int>(*v);
  }
  if (const YAML::Node node = section["max_tokens"]) {
    absl::StatusOr<int64_t> v = Integer(node, "max_tokens", 1, 1 << 20);
    if (!v.ok()) return v.status();
    config.max_tokens = static_cast<int>(*v);
  }
  if (const YAML::Node node = section["seed"]) {
    absl::StatusOr<int64_t> v = Integer(node, "seed", 0, 4294967294LL);
    if (!v.ok()) return v.status();
    config.seed = static_cast<uint32_t>(*v);
  }
  if (const YAML::Node node = section["temperature"]) {
    if (!node.IsScalar() || !absl::SimpleAtod(node.Scalar(), &config.temperature) || config.temperature < 0 ||
        config.temperature > 2) {
      return ErrorAt(node, absl::StrCat(Key("temperature"), " must be a number from 0 to 2, got '", Shown(node), "'"));
    }
  }
  if (const YAML::Node node = section["stream"]) {
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, config.stream)) {
      return ErrorAt(node, absl::StrCat(Key("stream"), " must be true or false, got '", Shown(node), "'"));
    }
  }
  if (const YAML::Node node = section["request_timeout"]) {
    absl::StatusOr<absl::Duration> v = Duration(node, "request_timeout");
    if (!v.ok()) return v.status();
    config.request_timeout = *v;
  }
  if (const YAML::Node slo = section["slo"]) {
    if (!slo.IsMap()) return ErrorAt(slo, absl::StrCat(Key("slo"), " must be a map with the keys ttft, tpot"));
    if (absl::Status s = CheckKeys(slo, kSloKeys, "slo."); !s.ok()) return s;
    if (const YAML::Node node = slo["ttft"]) {
      absl::StatusOr<absl::Duration> v = Duration(node, "slo.ttft");
      if (!v.ok()) return v.status();
      config.slo_ttft = *v;
    }
    if (const YAML::Node node = slo["tpot"]) {
      absl::StatusOr<absl::Duration> v = Duration(node, "slo.tpot");
      if (!v.ok()) return v.status();
      config.slo_tpot = *v;
    }
    if ((config.slo_ttft.has_value() || config.slo_tpot.has_value()) && !config.stream) {
      return ErrorAt(slo, absl::StrCat(Key("slo"), " needs ", Key("stream"),
                                       " true: TTFT and TPOT are measured on streamed answers only"));
    }
  }
  return config;
}

}  // namespace

absl::StatusOr<std::vector<Prompt>> ParsePromptsJsonl(std::string_view text, std::string_view source) {
  std::vector<Prompt> prompts;
  std::set<std::string> ids;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(ToAbsl(text), '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    auto error = [&](std::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat(ToAbsl(source), ":", line_number, ": ", ToAbsl(why)));
    };
    const nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return error("not a JSON object");
    auto prompt = j.find("prompt");
    if (prompt == j.end() || !prompt->is_string() || prompt->get<std::string>().empty()) {
      return error("needs \"prompt\": a non-empty string");
    }
    Prompt p;
    p.text = prompt->get<std::string>();
    auto id = j.find("id");
    if (id == j.end() || id->is_null()) {
      p.id = absl::StrCat(line_number);
    } else if (id->is_string()) {
      p.id = id->get<std::string>();
    } else if (id->is_number_integer()) {
      p.id = id->dump();
    } else {
      return error("\"id\" must be a string or an integer");
    }
    if (!ids.insert(p.id).second) return error(absl::StrCat("id \"", p.id, "\" is given twice"));
    prompts.push_back(std::move(p));
  }
  if (prompts.empty()) return absl::InvalidArgumentError(absl::StrCat(ToAbsl(source), ": no prompts"));
  return prompts;
}

absl::StatusOr<OpenAiConfig> ParseOpenAiSection(const YAML::Node& section, const AllowList& allow, Env* env) {
  try {
    return Parse(section, allow, env);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("line ", e.mark.line + 1, ": openai: ", e.msg));
  }
}

}  // namespace benchfleet::agent::openai
