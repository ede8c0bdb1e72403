#include "agent/probes/tool_values.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "common/string_views.h"

namespace benchfleet::agent {

std::vector<std::string> SplitCsvFields(std::string_view line) {
  std::vector<std::string> fields;
  for (absl::string_view field : absl::StrSplit(ToAbsl(line), ',')) {
    fields.emplace_back(absl::StripAsciiWhitespace(field));
  }
  return fields;
}

std::vector<std::string> NonEmptyLines(std::string_view text) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(ToAbsl(text), '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) lines.emplace_back(line);
  }
  return lines;
}

bool IsMissingValue(std::string_view value) {
  absl::string_view v = absl::StripAsciiWhitespace(ToAbsl(value));
  if (v.size() >= 2 && v.front() == '[' && v.back() == ']') v = v.substr(1, v.size() - 2);
  return v.empty() || v == "-" || absl::EqualsIgnoreCase(v, "N/A") || absl::EqualsIgnoreCase(v, "Not Supported") ||
         absl::EqualsIgnoreCase(v, "Unknown Error") || absl::EqualsIgnoreCase(v, "GPU is lost") ||
         absl::EqualsIgnoreCase(v, "Insufficient Permissions") || absl::EqualsIgnoreCase(v, "Not Found");
}

std::optional<double> ParseNumber(std::string_view value) {
  if (IsMissingValue(value)) return std::nullopt;
  absl::string_view v = absl::StripAsciiWhitespace(ToAbsl(value));
  if (!v.empty() && v.front() == '(') v.remove_prefix(1);
  if (v.empty() || !(absl::ascii_isdigit(v.front()) || v.front() == '-' || v.front() == '+' || v.front() == '.')) {
    return std::nullopt;
  }
  if (absl::StrContains(v, "x") || absl::StrContains(v, "X")) return std::nullopt;  // strtod reads hex
  const std::string text(v);
  char* end = nullptr;
  errno = 0;
  const double number = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || errno == ERANGE || !std::isfinite(number)) return std::nullopt;
  // What follows the number may only be a unit: letters, '%', ')' and spaces ("MiB", "W", "Mhz").
  for (const char* p = end; *p != '\0'; ++p) {
    if (!(absl::ascii_isalpha(*p) || *p == '%' || *p == ')' || *p == ' ' || *p == '/')) return std::nullopt;
  }
  return number;
}

std::optional<uint64_t> ParseHexMask(std::string_view value) {
  absl::string_view v = absl::StripAsciiWhitespace(ToAbsl(value));
  if (!absl::StartsWithIgnoreCase(v, "0x") || v.size() < 3 || v.size() > 18) return std::nullopt;
  uint64_t mask = 0;
  for (char c : v.substr(2)) {
    if (!absl::ascii_isxdigit(c)) return std::nullopt;
    const int digit = absl::ascii_isdigit(c) ? c - '0' : absl::ascii_tolower(c) - 'a' + 10;
    mask = mask * 16 + static_cast<uint64_t>(digit);
  }
  return mask;
}

}  // namespace benchfleet::agent
