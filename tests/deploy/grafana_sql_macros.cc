#include "tests/deploy/grafana_sql_macros.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace benchfleet::testing {
namespace {

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string Quote(const std::string& value) {
  return absl::StrCat("'", absl::StrReplaceAll(value, {{"'", "''"}}), "'");
}

// Grafana writes times as Go's RFC3339Nano in UTC; whole seconds print without a fraction.
std::string TimeLiteral(absl::Time t) {
  return Quote(absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ", t, absl::UTCTimeZone()));
}

// Parses "30s", "5m", "1h", "1d" (quotes around it allowed) into seconds.
absl::StatusOr<int64_t> IntervalSeconds(std::string text) {
  text = std::string(absl::StripAsciiWhitespace(text));
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"')) text = text.substr(1, text.size() - 2);
  if (text.empty()) return absl::InvalidArgumentError("empty interval");
  const char unit = text.back();
  int64_t n = 0;
  if (!absl::SimpleAtoi(text.substr(0, text.size() - 1), &n) || n <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("bad interval '", text, "'"));
  }
  switch (unit) {
    case 's': return n;
    case 'm': return n * 60;
    case 'h': return n * 3600;
    case 'd': return n * 86400;
    default: return absl::InvalidArgumentError(absl::StrCat("bad interval unit in '", text, "'"));
  }
}

absl::StatusOr<std::string> ExpandVariables(const std::string& sql, const GrafanaSqlContext& context) {
  std::string out;
  size_t i = 0;
  while (i < sql.size()) {
    if (sql[i] != '$') {
      out.push_back(sql[i++]);
      continue;
    }
    size_t start = i + 1;
    size_t end = start;
    bool braced = start < sql.size() && sql[start] == '{';
    if (braced) {
      end = sql.find('}', start);
      if (end == std::string::npos) return absl::InvalidArgumentError("unterminated ${");
      ++start;
    } else {
      while (end < sql.size() && IsNameChar(sql[end])) ++end;
    }
    const std::string name = sql.substr(start, end - start);
    if (name.rfind("__", 0) == 0) {
      // A macro: the backend's turn.
      out.push_back('$');
      ++i;
      continue;
    }
    auto it = context.variables.find(name);
    if (it == context.variables.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown variable $", name));
    }
    const GrafanaVariable& v = it->second;
    if (v.multi) {
      std::vector<std::string> quoted;
      for (const auto& value : v.values) quoted.push_back(Quote(value));
      out += absl::StrJoin(quoted, ",");
    } else {
      out += absl::StrReplaceAll(v.values.empty() ? "" : v.values[0], {{"'", "''"}});
    }
    i = braced ? end + 1 : end;
  }
  return out;
}

absl::StatusOr<std::string> Macro(const std::string& name, const std::vector<std::string>& args,
                                  const GrafanaSqlContext& context) {
  auto want = [&](size_t n) -> absl::Status {
    if (args.size() == n) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat("$", name, " takes ", n, " arguments, got ", args.size()));
  };
  if (name == "__timeFilter") {
    if (absl::Status s = want(1); !s.ok()) return s;
    return absl::StrCat(args[0], " BETWEEN ", TimeLiteral(context.from), " AND ", TimeLiteral(context.to));
  }
  if (name == "__timeFrom" || name == "__timeTo") {
    if (!(args.empty() || (args.size() == 1 && args[0].empty()))) return want(0);
    return TimeLiteral(name == "__timeFrom" ? context.from : context.to);
  }
  if (name == "__timeGroup" || name == "__timeGroupAlias") {
    if (args.size() < 2) return want(2);  // Grafana's optional fill argument is not supported
    if (absl::Status s = want(2); !s.ok()) return s;
    absl::StatusOr<int64_t> seconds = IntervalSeconds(args[1]);
    if (!seconds.ok()) return seconds.status();
    std::string group = absl::StrCat("floor(extract(epoch from ", args[0], ")/", *seconds, ")*", *seconds);
    if (name == "__timeGroupAlias") absl::StrAppend(&group, " AS \"time\"");
    return group;
  }
  return absl::InvalidArgumentError(absl::StrCat("unsupported macro $", name));
}

absl::StatusOr<std::string> ExpandMacros(const std::string& sql, const GrafanaSqlContext& context) {
  std::string out;
  size_t i = 0;
  while (i < sql.size()) {
    if (sql.compare(i, 3, "$__") != 0) {
      out.push_back(sql[i++]);
      continue;
    }
    size_t end = i + 1;
    while (end < sql.size() && IsNameChar(sql[end])) ++end;
    const std::string name = sql.substr(i + 1, end - i - 1);
    if (end >= sql.size() || sql[end] != '(') {
      return absl::InvalidArgumentError(absl::StrCat("unsupported macro $", name, " (no arguments)"));
    }
    const size_t close = sql.find(')', end);
    if (close == std::string::npos) return absl::InvalidArgumentError(absl::StrCat("unterminated $", name));
    std::vector<std::string> args;
    const std::string inner = sql.substr(end + 1, close - end - 1);
    if (!absl::StripAsciiWhitespace(inner).empty()) {
      for (absl::string_view a : absl::StrSplit(inner, ',')) args.emplace_back(absl::StripAsciiWhitespace(a));
    }
    absl::StatusOr<std::string> expanded = Macro(name, args, context);
    if (!expanded.ok()) return expanded.status();
    out += *expanded;
    i = close + 1;
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> ExpandGrafanaSql(const std::string& sql, const GrafanaSqlContext& context) {
  absl::StatusOr<std::string> with_variables = ExpandVariables(sql, context);
  if (!with_variables.ok()) return with_variables.status();
  return ExpandMacros(*with_variables, context);
}

}  // namespace benchfleet::testing
