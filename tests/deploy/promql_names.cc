#include "tests/deploy/promql_names.h"

#include <cctype>
#include <regex>

namespace benchfleet::testing {
namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

// Returns the index just past the quoted string starting at `i`.
size_t SkipString(std::string_view s, size_t i) {
  const char quote = s[i++];
  while (i < s.size() && s[i] != quote) {
    if (s[i] == '\\' && quote != '`') ++i;
    ++i;
  }
  return i + 1;
}

// Returns the index just past the bracket group opening at `i` (strings inside skipped).
size_t SkipGroup(std::string_view s, size_t i) {
  const char open = s[i];
  const char close = open == '(' ? ')' : open == '{' ? '}' : ']';
  int depth = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '"' || c == '\'' || c == '`') {
      i = SkipString(s, i);
      continue;
    }
    if (c == open) ++depth;
    if (c == close && --depth == 0) return i + 1;
    ++i;
  }
  return i;
}

size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

const std::set<std::string>& Keywords() {
  // Aggregation operators are keywords too: `sum by (x) (...)` has no '(' after `sum`.
  static const std::set<std::string> k = {"and", "or", "unless", "bool", "offset", "inf", "nan", "Inf", "NaN",
                                          "atan2", "sum", "min", "max", "avg", "group", "stddev", "stdvar",
                                          "count", "count_values", "bottomk", "topk", "quantile"};
  return k;
}

const std::set<std::string>& GroupingKeywords() {
  static const std::set<std::string> k = {"by", "without", "on", "ignoring", "group_left", "group_right"};
  return k;
}

}  // namespace

std::set<std::string> MetricNamesIn(std::string_view expr) {
  // label_values(selector, label): a Grafana variable query; its label argument is no metric.
  const std::string_view kLabelValues = "label_values(";
  if (expr.substr(0, kLabelValues.size()) == kLabelValues) {
    const size_t comma = expr.rfind(',');
    if (comma != std::string_view::npos) expr = expr.substr(kLabelValues.size(), comma - kLabelValues.size());
  }
  std::set<std::string> out;
  size_t i = 0;
  while (i < expr.size()) {
    const char c = expr[i];
    if (c == '"' || c == '\'' || c == '`') {
      i = SkipString(expr, i);
    } else if (c == '{' || c == '[') {
      i = SkipGroup(expr, i);
    } else if (c == '$') {
      // A Grafana variable: $name or ${name}.
      ++i;
      if (i < expr.size() && expr[i] == '{') {
        i = SkipGroup(expr, i);
      } else {
        while (i < expr.size() && IsIdentChar(expr[i])) ++i;
      }
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      // A number or a duration (1e3, 0.95, 5m).
      while (i < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[i])) || expr[i] == '.')) ++i;
    } else if (IsIdentStart(c)) {
      size_t end = i;
      while (end < expr.size() && IsIdentChar(expr[end])) ++end;
      const std::string word(expr.substr(i, end - i));
      const size_t next = SkipSpace(expr, end);
      i = end;
      if (GroupingKeywords().count(word) > 0) {
        if (next < expr.size() && expr[next] == '(') i = SkipGroup(expr, next);
      } else if (next < expr.size() && expr[next] == '(') {
        // A function call; its arguments are scanned next.
      } else if (Keywords().count(word) == 0) {
        out.insert(word);
      }
    } else {
      ++i;
    }
  }
  return out;
}

std::vector<LabelMatcher> MatchersOf(std::string_view expr, const std::string& label) {
  const std::regex matcher("(^|[{,\\s])" + label + "\\s*(=~|!~|!=|=)\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
  std::vector<LabelMatcher> out;
  const std::string s(expr);
  for (auto it = std::sregex_iterator(s.begin(), s.end(), matcher); it != std::sregex_iterator(); ++it) {
    out.push_back({(*it)[2], (*it)[3]});
  }
  return out;
}

}  // namespace benchfleet::testing
