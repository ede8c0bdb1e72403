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
#include "agent/backends/section.h"
#include "common/spec/series_spec.h"
#include "common/string_views.h"

namespace benchfleet::agent::openai {
namespace {

constexpr const char* kKeys[] = {"concurrency", "endpoint", "max_tokens",      "model",       "prompts", "seed",
                                 "slo",         "stream",   "request_timeout", "temperature", "url"};
constexpr const char* kSloKeys[] = {"tpot", "ttft"};

constexpr SectionReader kSection{"openai"};

absl::StatusOr<OpenAiConfig> Parse(const YAML::Node& section, const AllowList& allow, Env* env) {
  if (absl::Status s = kSection.CheckKeys(section, kKeys); !s.ok()) return s;
  OpenAiConfig config;
  for (const char* required : {"url", "model", "prompts"}) {
    if (!section[required]) return kSection.ErrorAt(section, absl::StrCat("openai needs ", kSection.Key(required)));
  }

  const YAML::Node url = section["url"];
  absl::StatusOr<std::string> url_value = kSection.NonEmptyString(url, "url");
  if (!url_value.ok()) return url_value.status();
  absl::string_view base = ToAbsl(*url_value);
  while (absl::ConsumeSuffix(&base, "/")) {
  }
  if (!absl::StartsWith(base, "http://") && !absl::StartsWith(base, "https://")) {
    return kSection.ErrorAt(
        url, absl::StrCat(kSection.Key("url"), " must be an http:// or https:// URL, got '", *url_value, "'"));
  }
  if (absl::Status s = allow.CheckUrl(ToStd(base)); !s.ok()) return allow.WithAllowed(s);
  config.url = std::string(base);

  absl::StatusOr<std::string> model = kSection.NonEmptyString(section["model"], "model");
  if (!model.ok()) return model.status();
  config.model = *model;

  if (const YAML::Node node = section["endpoint"]) {
    if (node.IsScalar() && node.Scalar() == "completions") {
      config.endpoint = Endpoint::kCompletions;
    } else if (node.IsScalar() && node.Scalar() == "chat") {
      config.endpoint = Endpoint::kChat;
    } else {
      return kSection.ErrorAt(node, absl::StrCat(kSection.Key("endpoint"), " must be completions or chat, got '",
                                                 SectionReader::Shown(node), "'"));
    }
  }

  // The prompts are read and sent to the server: a coordinator could otherwise have any readable
  // file sent to an allowed URL, so the file must lie in allow.workflow_dirs (as the workflow
  // backend's prompts do), for `run` and coordinator tasks alike.
  const YAML::Node prompts = section["prompts"];
  absl::StatusOr<std::string> path = kSection.NonEmptyString(prompts, "prompts");
  if (!path.ok()) return path.status();
  if (absl::Status s = allow.CheckInputFile(*path); !s.ok()) return allow.WithAllowed(s);
  config.prompts_path = CanonicalPath(*path);
  absl::StatusOr<std::string> text = env->ReadFile(config.prompts_path);
  if (!text.ok()) {
    if (absl::IsNotFound(text.status())) {
      return absl::NotFoundError(absl::StrCat("line ", prompts.Mark().line + 1, ": ", kSection.Key("prompts"), " ",
                                              config.prompts_path, " does not exist"));
    }
    return kSection.ErrorAt(
        prompts, absl::StrCat(kSection.Key("prompts"), " ", config.prompts_path, ": ", text.status().message()));
  }
  absl::StatusOr<std::vector<Prompt>> parsed = ParsePromptsJsonl(*text, config.prompts_path);
  if (!parsed.ok())
    return kSection.ErrorAt(prompts, absl::StrCat(kSection.Key("prompts"), ": ", parsed.status().message()));
  config.prompts = std::move(*parsed);

  if (const YAML::Node node = section["concurrency"]) {
    absl::StatusOr<int64_t> v = kSection.Integer(node, "concurrency", 1, 1024);
    if (!v.ok()) return v.status();
    config.concurrency = static_cast<int>(*v);
  }
  if (const YAML::Node node = section["max_tokens"]) {
    absl::StatusOr<int64_t> v = kSection.Integer(node, "max_tokens", 1, 1 << 20);
    if (!v.ok()) return v.status();
    config.max_tokens = static_cast<int>(*v);
  }
  if (const YAML::Node node = section["seed"]) {
    absl::StatusOr<int64_t> v = kSection.Integer(node, "seed", 0, 4294967294LL);
    if (!v.ok()) return v.status();
    config.seed = static_cast<uint32_t>(*v);
  }
  if (const YAML::Node node = section["temperature"]) {
    if (!node.IsScalar() || !absl::SimpleAtod(node.Scalar(), &config.temperature) || config.temperature < 0 ||
        config.temperature > 2) {
      return kSection.ErrorAt(node, absl::StrCat(kSection.Key("temperature"), " must be a number from 0 to 2, got '",
                                                 SectionReader::Shown(node), "'"));
    }
  }
  if (const YAML::Node node = section["stream"]) {
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, config.stream)) {
      return kSection.ErrorAt(
          node, absl::StrCat(kSection.Key("stream"), " must be true or false, got '", SectionReader::Shown(node), "'"));
    }
  }
  if (const YAML::Node node = section["request_timeout"]) {
    absl::StatusOr<absl::Duration> v = kSection.Duration(node, "request_timeout");
    if (!v.ok()) return v.status();
    config.request_timeout = *v;
  }
  if (const YAML::Node slo = section["slo"]) {
    if (!slo.IsMap())
      return kSection.ErrorAt(slo, absl::StrCat(kSection.Key("slo"), " must be a map with the keys ttft, tpot"));
    if (absl::Status s = kSection.CheckKeys(slo, kSloKeys, "slo."); !s.ok()) return s;
    if (const YAML::Node node = slo["ttft"]) {
      absl::StatusOr<absl::Duration> v = kSection.Duration(node, "slo.ttft");
      if (!v.ok()) return v.status();
      config.slo_ttft = *v;
    }
    if (const YAML::Node node = slo["tpot"]) {
      absl::StatusOr<absl::Duration> v = kSection.Duration(node, "slo.tpot");
      if (!v.ok()) return v.status();
      config.slo_tpot = *v;
    }
    if ((config.slo_ttft.has_value() || config.slo_tpot.has_value()) && !config.stream) {
      return kSection.ErrorAt(slo, absl::StrCat(kSection.Key("slo"), " needs ", kSection.Key("stream"),
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
