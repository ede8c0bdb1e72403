#include "common/spec/target_selector.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/string_views.h"
#include "common/yaml_error.h"

namespace benchfleet {
namespace {

bool IsNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '/';
}

bool IsName(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsNameChar);
}

bool IsValue(absl::string_view s) {
  return !s.empty() && std::none_of(s.begin(), s.end(), [](char c) {
    return c == ' ' || c == '\t' || c == ',' || c == '(' || c == ')' || c == '=' || c == '!';
  });
}

absl::Status Bad(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "cannot read '", text, "': ", why,
      " (write key=value, key!=value, key in (a, b), key notin (a, b), key or !key)"));
}

// Reads "in (a, b)" / "notin (a, b)" after the key.
absl::StatusOr<LabelExpression> ParseSetExpression(absl::string_view text, absl::string_view key,
                                                   absl::string_view rest) {
  LabelExpression e;
  e.key = std::string(key);
  e.text = std::string(text);
  if (absl::ConsumePrefix(&rest, "notin")) {
    e.op = LabelExpression::Op::kNotIn;
  } else if (absl::ConsumePrefix(&rest, "not in")) {
    e.op = LabelExpression::Op::kNotIn;
  } else if (absl::ConsumePrefix(&rest, "in")) {
    e.op = LabelExpression::Op::kIn;
  } else {
    return Bad(text, "expected an operator after the key");
  }
  rest = absl::StripAsciiWhitespace(rest);
  if (!absl::ConsumePrefix(&rest, "(") || !absl::ConsumeSuffix(&rest, ")")) {
    return Bad(text, "the values of in / notin go in parentheses");
  }
  for (absl::string_view v : absl::StrSplit(rest, ',')) {
    v = absl::StripAsciiWhitespace(v);
    if (!IsValue(v)) return Bad(text, "a value in the parentheses is empty or has a space");
    e.values.insert(std::string(v));
  }
  return e;
}

}  // namespace

absl::StatusOr<LabelExpression> ParseLabelExpression(std::string_view text_in) {
  const absl::string_view text = absl::StripAsciiWhitespace(ToAbsl(text_in));
  LabelExpression e;
  e.text = std::string(text);
  if (text.empty()) return Bad(text, "it is empty");
  const size_t ne = text.find("!=");
  const size_t eq = text.find('=');
  if (ne != absl::string_view::npos || eq != absl::string_view::npos) {
    const bool not_equal = ne != absl::string_view::npos && ne < eq;
    const size_t at = not_equal ? ne : eq;
    absl::string_view key = absl::StripAsciiWhitespace(text.substr(0, at));
    absl::string_view value = text.substr(at + (not_equal ? 2 : 1));
    if (!not_equal) absl::ConsumePrefix(&value, "=");  // "=="
    value = absl::StripAsciiWhitespace(value);
    if (!IsName(key)) return Bad(text, "the key is empty or has characters other than A-Z a-z 0-9 _ - . /");
    if (!IsValue(value)) return Bad(text, "the value is empty or has a space");
    e.op = not_equal ? LabelExpression::Op::kNotEquals : LabelExpression::Op::kEquals;
    e.key = std::string(key);
    e.values.insert(std::string(value));
    return e;
  }
  if (text.find('(') != absl::string_view::npos || text.find(' ') != absl::string_view::npos) {
    size_t key_end = 0;
    while (key_end < text.size() && IsNameChar(text[key_end])) ++key_end;
    const absl::string_view key = text.substr(0, key_end);
    if (key.empty()) return Bad(text, "it does not start with a label key");
    return ParseSetExpression(text, key, absl::StripAsciiWhitespace(text.substr(key_end)));
  }
  absl::string_view key = text;
  e.op = absl::ConsumePrefix(&key, "!") ? LabelExpression::Op::kNotExists : LabelExpression::Op::kExists;
  if (!IsName(key)) return Bad(text, "the key has characters other than A-Z a-z 0-9 _ - . /");
  e.key = std::string(key);
  return e;
}

bool TargetSelector::Matches(std::string_view agent_id, const v1::MachineConditions& conditions) const {
  if (all) return true;
  if (!agents.empty() && std::find(agents.begin(), agents.end(), agent_id) == agents.end()) {
    return false;
  }
  const auto& labels_of = conditions.labels();
  for (const LabelExpression& e : labels) {
    const auto it = labels_of.find(e.key);
    const bool has = it != labels_of.end();
    const bool in = has && e.values.count(it->second) > 0;
    bool holds = false;
    switch (e.op) {
      case LabelExpression::Op::kEquals:
      case LabelExpression::Op::kIn: holds = in; break;
      // A machine without the label is not "class=a100", so "class!=a100" holds for it.
      case LabelExpression::Op::kNotEquals:
      case LabelExpression::Op::kNotIn: holds = !in; break;
      case LabelExpression::Op::kExists: holds = has; break;
      case LabelExpression::Op::kNotExists: holds = !has; break;
    }
    if (!holds) return false;
  }
  return true;
}

std::string TargetSelector::Describe() const {
  if (all) return "all";
  std::vector<std::string> parts;
  if (!agents.empty()) parts.push_back(absl::StrCat("agents [", absl::StrJoin(agents, ", "), "]"));
  if (!labels.empty()) {
    parts.push_back(absl::StrCat(
        "labels [",
        absl::StrJoin(labels, ", ", [](std::string* out, const LabelExpression& e) { out->append(e.text); }),
        "]"));
  }
  return absl::StrJoin(parts, ", ");
}

absl::StatusOr<TargetSelector> ParseTargets(const YAML::Node& node, std::string_view source) {
  const YamlErrorAt error(source);
  TargetSelector selector;
  if (!node.IsDefined() || node.IsNull()) {
    const int line = node.IsDefined() && node.Mark().line >= 0 ? node.Mark().line + 1 : 1;
    return absl::InvalidArgumentError(absl::StrCat(
        ToAbsl(source), ":", line,
        ": field targets: missing: say which agents run the series (`all`, or a map with agents "
        "and/or labels)"));
  }
  if (node.IsScalar()) {
    if (node.Scalar() == "all") {
      selector.all = true;
      return selector;
    }
    return error(node, absl::StrCat("field targets: must be `all` or a map with agents and/or labels (got '",
                                    node.Scalar(), "')"));
  }
  if (!node.IsMap()) return error(node, "field targets: must be `all` or a map with agents and/or labels");
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& value = kv.second;
    if (key != "agents" && key != "labels") {
      return error(kv.first, absl::StrCat("field targets.", key, ": unknown key (expected agents or labels)"));
    }
    if (!value.IsSequence() || value.size() == 0) {
      return error(value.IsDefined() && value.Mark().line >= 0 ? value : kv.first,
                   absl::StrCat("field targets.", key, ": must be a non-empty list"));
    }
    for (size_t i = 0; i < value.size(); ++i) {
      const YAML::Node item = value[i];
      const std::string field = absl::StrCat("field targets.", key, "[", i, "]");
      if (!item.IsScalar() || item.Scalar().empty()) return error(item, absl::StrCat(field, ": must be a text"));
      if (key == "agents") {
        selector.agents.push_back(item.Scalar());
      } else {
        absl::StatusOr<LabelExpression> e = ParseLabelExpression(item.Scalar());
        if (!e.ok()) return error(item, absl::StrCat(field, ": ", e.status().message()));
        selector.labels.push_back(*std::move(e));
      }
    }
  }
  if (selector.agents.empty() && selector.labels.empty()) {
    return error(node, "field targets: name agents and/or labels");
  }
  return selector;
}

}  // namespace benchfleet
