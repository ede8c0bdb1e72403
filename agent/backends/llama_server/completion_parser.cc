#include "agent/backends/llama_server/completion_parser.h"

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/string_views.h"

namespace benchfleet::agent::llama_server {
namespace {

// ordered_json keeps the server's order of the timings fields.
using Json = nlohmann::ordered_json;

// Parses JSON without letting nlohmann's exceptions out.
absl::StatusOr<Json> ParseJson(std::string_view text) {
  Json json = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    // Parse again only to get the parser's message, which says where it went wrong.
    try {
      Json ignored = Json::parse(text.begin(), text.end());
    } catch (const Json::exception& e) {
      return absl::InvalidArgumentError(e.what());
    }
    return absl::InvalidArgumentError("not JSON");
  }
  return json;
}

std::optional<int64_t> IntField(const Json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<int64_t>();
}

std::string StringField(const Json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

// Fills everything but content from a completion object (the body, or the stream's last event).
absl::Status FillFinal(const Json& object, Completion* completion) {
  completion->stop_type = StringField(object, "stop_type");
  completion->tokens_predicted = IntField(object, "tokens_predicted");
  completion->tokens_evaluated = IntField(object, "tokens_evaluated");
  completion->tokens_cached = IntField(object, "tokens_cached");
  auto timings = object.find("timings");
  if (timings == object.end() || !timings->is_object()) {
    return absl::FailedPreconditionError("the answer has no timings object");
  }
  for (auto it = timings->begin(); it != timings->end(); ++it) {
    if (it.value().is_number()) completion->timings.emplace_back(it.key(), it.value().get<double>());
  }
  return absl::OkStatus();
}

absl::Status ErrorEventStatus(const Json& error) {
  if (error.is_object()) {
    const std::string type = StringField(error, "type");
    const std::string message = StringField(error, "message");
    return absl::InternalError(absl::StrCat("the stream carried an error", type.empty() ? "" : " (", type,
                                            type.empty() ? "" : ")", ": ", message));
  }
  return absl::InternalError(absl::StrCat("the stream carried an error: ", error.dump()));
}

// One server-sent event: its `data:` lines joined, or its `error:` line.
struct SseEvent {
  std::string data;
  std::string error;
};

// Splits off the complete events at the start of *buffer ('\r' already removed), leaving a
// partial event in it.
std::vector<SseEvent> TakeEvents(std::string* buffer) {
  std::vector<SseEvent> events;
  size_t start = 0;
  while (true) {
    const size_t end = buffer->find("\n\n", start);
    if (end == std::string::npos) break;
    SseEvent event;
    std::string_view block(buffer->data() + start, end - start);
    while (!block.empty()) {
      const size_t nl = block.find('\n');
      std::string_view line = block.substr(0, nl);
      block = nl == std::string_view::npos ? std::string_view() : block.substr(nl + 1);
      auto field = [&](std::string_view name) -> std::optional<std::string_view> {
        if (line.substr(0, name.size()) != name) return std::nullopt;
        std::string_view value = line.substr(name.size());
        if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        return value;
      };
      if (auto data = field("data:")) {
        if (!event.data.empty()) event.data += '\n';
        event.data += *data;
      } else if (auto error = field("error:")) {
        event.error = std::string(*error);
      }
    }
    events.push_back(std::move(event));
    start = end + 2;
  }
  buffer->erase(0, start);
  return events;
}

std::string WithoutCarriageReturns(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c != '\r') out += c;
  }
  return out;
}

}  // namespace

std::optional<double> Completion::timing(std::string_view name) const {
  for (const auto& [field, value] : timings) {
    if (field == name) return value;
  }
  return std::nullopt;
}

absl::StatusOr<Completion> ParseCompletionJson(std::string_view body) {
  absl::StatusOr<Json> json = ParseJson(body);
  if (!json.ok()) return json.status();
  if (!json->is_object()) return absl::InvalidArgumentError("the answer is JSON but not an object");
  Completion completion;
  completion.content = StringField(*json, "content");
  if (absl::Status s = FillFinal(*json, &completion); !s.ok()) return s;
  return completion;
}

absl::StatusOr<Completion> ParseCompletionStream(std::string_view body) {
  std::string buffer = WithoutCarriageReturns(body);
  // A stream may end without the blank line after its last event.
  if (!buffer.empty() && !absl::EndsWith(buffer, "\n\n")) buffer += absl::EndsWith(buffer, "\n") ? "\n" : "\n\n";
  Completion completion;
  int events = 0;
  for (const SseEvent& event : TakeEvents(&buffer)) {
    if (!event.error.empty()) {
      absl::StatusOr<Json> error = ParseJson(event.error);
      if (!error.ok()) return absl::InternalError(absl::StrCat("the stream carried an error: ", event.error));
      return ErrorEventStatus(error->contains("error") ? (*error)["error"] : *error);
    }
    if (event.data.empty() || event.data == "[DONE]") continue;
    ++events;
    absl::StatusOr<Json> json = ParseJson(event.data);
    if (!json.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("event ", events, " of the stream is not JSON: ", json.status().message()));
    }
    if (!json->is_object()) return absl::InvalidArgumentError(absl::StrCat("event ", events, " is not an object"));
    if (auto error = json->find("error"); error != json->end()) return ErrorEventStatus(*error);
    completion.content += StringField(*json, "content");
    auto stop = json->find("stop");
    if (stop != json->end() && stop->is_boolean() && stop->get<bool>()) {
      if (absl::Status s = FillFinal(*json, &completion); !s.ok()) return s;
      return completion;
    }
  }
  return absl::DataLossError(
      absl::StrCat("the stream ended after ", events, " events without its final event (\"stop\": true)"));
}

bool SseTokenWatcher::Feed(std::string_view chunk) {
  if (seen_token_) return false;
  pending_ += WithoutCarriageReturns(chunk);
  for (const SseEvent& event : TakeEvents(&pending_)) {
    if (event.data.empty()) continue;
    Json json = Json::parse(event.data, nullptr, /*allow_exceptions=*/false);
    if (!json.is_object()) continue;
    auto stop = json.find("stop");
    if (stop != json.end() && stop->is_boolean() && !stop->get<bool>()) {
      seen_token_ = true;
      pending_.clear();
      return true;
    }
  }
  return false;
}

std::optional<ServerError> ParseServerError(std::string_view body) {
  Json json = Json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return std::nullopt;
  auto error = json.find("error");
  if (error == json.end()) return std::nullopt;
  ServerError out;
  if (error->is_string()) {
    out.message = error->get<std::string>();
    return out;
  }
  if (!error->is_object()) return std::nullopt;
  out.code = static_cast<int>(IntField(*error, "code").value_or(0));
  out.type = StringField(*error, "type");
  out.message = StringField(*error, "message");
  return out;
}

v1::Metric TimingMetric(std::string_view field, double value) {
  v1::Metric metric;
  absl::string_view name = ToAbsl(field);
  if (absl::ConsumeSuffix(&name, "_ms")) {
    metric.set_name(absl::StrCat(name, "_seconds"));
    metric.set_value(value / 1000.0);
    metric.set_unit(absl::StrContains(name, "per_token") ? "s/token" : "s");
    return metric;
  }
  metric.set_name(std::string(name));
  metric.set_value(value);
  if (absl::EndsWith(name, "_per_second")) {
    metric.set_unit("tokens/s");
  } else if (absl::EndsWith(name, "_n") || absl::StrContains(name, "_n_")) {
    metric.set_unit("tokens");
  }
  return metric;
}

std::vector<v1::Metric> CompletionMetrics(const Completion& completion) {
  std::vector<v1::Metric> metrics;
  for (const auto& [field, value] : completion.timings) metrics.push_back(TimingMetric(field, value));
  auto tokens = [&](const char* name, const std::optional<int64_t>& value) {
    if (!value.has_value()) return;
    v1::Metric& metric = metrics.emplace_back();
    metric.set_name(name);
    metric.set_value(static_cast<double>(*value));
    metric.set_unit("tokens");
  };
  tokens("tokens_predicted", completion.tokens_predicted);
  tokens("tokens_evaluated", completion.tokens_evaluated);
  tokens("tokens_cached", completion.tokens_cached);
  return metrics;
}

}  // namespace benchfleet::agent::llama_server
