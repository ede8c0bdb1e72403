#include "agent/backends/openai/openai_stream.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace benchfleet::agent::openai {
namespace {

using Json = nlohmann::json;

std::optional<Usage> ReadUsage(const Json& j) {
  auto it = j.find("usage");
  if (it == j.end() || !it->is_object()) return std::nullopt;
  Usage u;
  auto read = [&](const char* key, int64_t* out) {
    auto f = it->find(key);
    if (f != it->end() && f->is_number_integer()) *out = f->get<int64_t>();
  };
  read("prompt_tokens", &u.prompt_tokens);
  read("completion_tokens", &u.completion_tokens);
  read("total_tokens", &u.total_tokens);
  return u;
}

std::optional<std::string> ErrorOf(const Json& j) {
  if (!j.is_object()) return std::nullopt;
  auto e = j.find("error");
  if (e != j.end()) {
    if (e->is_object()) {
      auto m = e->find("message");
      if (m != e->end() && m->is_string()) return m->get<std::string>();
      return e->dump();
    }
    if (e->is_string()) return e->get<std::string>();
  }
  auto o = j.find("object");
  if (o != j.end() && o->is_string() && *o == "error") {
    auto m = j.find("message");
    return m != j.end() && m->is_string() ? m->get<std::string>() : j.dump();
  }
  return std::nullopt;
}

// Reads the fields every answer shares into *answer; returns the first choice (or null).
const Json* Common(const Json& j, Answer* answer) {
  if (auto f = j.find("system_fingerprint"); f != j.end() && f->is_string() && !f->get<std::string>().empty()) {
    answer->system_fingerprint = f->get<std::string>();
  }
  if (auto m = j.find("model"); m != j.end() && m->is_string()) answer->model = m->get<std::string>();
  if (std::optional<Usage> u = ReadUsage(j)) answer->usage = u;
  auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object()) return nullptr;
  const Json& choice = (*choices)[0];
  if (auto r = choice.find("finish_reason"); r != choice.end() && r->is_string()) {
    answer->finish_reason = r->get<std::string>();
  }
  return &choice;
}

// The text a choice carries: `text` (completions), `delta.content` (chat chunk) or
// `message.content` (whole chat answer).
std::string ChoiceText(const Json& choice) {
  if (auto t = choice.find("text"); t != choice.end() && t->is_string()) return t->get<std::string>();
  for (const char* holder : {"delta", "message"}) {
    auto d = choice.find(holder);
    if (d == choice.end() || !d->is_object()) continue;
    auto c = d->find("content");
    if (c != d->end() && c->is_string()) return c->get<std::string>();
  }
  return "";
}

}  // namespace

int StreamReader::Feed(std::string_view piece) {
  int tokens = 0;
  size_t start = 0;
  while (start < piece.size()) {
    const size_t nl = piece.find('\n', start);
    if (nl == std::string_view::npos) {
      pending_.append(piece.substr(start));
      break;
    }
    if (pending_.empty()) {
      Line(piece.substr(start, nl - start), &tokens);
    } else {
      pending_.append(piece.substr(start, nl - start));
      std::string line;
      line.swap(pending_);
      Line(line, &tokens);
    }
    start = nl + 1;
  }
  return tokens;
}

void StreamReader::Line(std::string_view line, int* tokens) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) {
    if (has_data_) Event(tokens);
    data_.clear();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;  // a comment (keep-alive)
  const size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  if (field != "data") return;
  std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (has_data_) data_ += '\n';
  data_.append(value);
  has_data_ = true;
}

void StreamReader::Event(int* tokens) {
  if (done_ || error_.has_value()) return;
  if (data_ == "[DONE]") {
    done_ = true;
    return;
  }
  ++events_;
  const Json j = Json::parse(data_, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    error_ = absl::StrCat("event ", events_, " is not a JSON object");
    return;
  }
  if (std::optional<std::string> e = ErrorOf(j)) {
    error_ = absl::StrCat("the stream carried an error: ", *e);
    return;
  }
  const Json* choice = Common(j, &answer_);
  if (choice == nullptr) return;  // e.g. the usage-only chunk
  const std::string text = ChoiceText(*choice);
  if (text.empty()) return;  // the chat role chunk, the final finish_reason chunk
  answer_.text += text;
  ++token_events_;
  ++*tokens;
}

absl::StatusOr<Answer> ParseAnswer(std::string_view body) {
  const Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return absl::InvalidArgumentError("the body is not a JSON object");
  if (std::optional<std::string> e = ErrorOf(j)) return absl::InvalidArgumentError(absl::StrCat("an error: ", *e));
  Answer answer;
  const Json* choice = Common(j, &answer);
  if (choice == nullptr) return absl::InvalidArgumentError("the answer has no choices");
  answer.text = ChoiceText(*choice);
  return answer;
}

std::optional<std::string> ParseErrorMessage(std::string_view body) {
  const Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return ErrorOf(j);
}

}  // namespace benchfleet::agent::openai
