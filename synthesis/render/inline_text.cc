#include "synthesis/render/inline_text.h"

#include <charconv>

namespace benchfleet::synthesis {

std::string Fixed(double v, int decimals) {
  char buf[128];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed, decimals);
  if (ec != std::errc()) return "nan";
  std::string s(buf, end);
  if (s == "-0" || (s.rfind("-0.", 0) == 0 && s.find_first_not_of("-0.") == std::string::npos)) s.erase(0, 1);
  return s;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

std::string MdCell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t') {
      if (out.empty() || out.back() != ' ') out += ' ';
    } else if (c == '|') {
      out += "\\|";
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string Code(std::string_view text) {
  if (text.empty()) return "—";  // an empty code span cannot be written in Markdown
  std::string inner;
  for (char c : text) {
    if (c == '`') {
      inner += '\'';
    } else if (c == '\n' || c == '\r' || c == '\t') {
      inner += ' ';
    } else if (c == '|') {
      inner += "\\|";
    } else {
      inner += c;
    }
  }
  return "`" + inner + "`";
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\n': case '\r': case '\t': out += ' '; break;
      default: out += c;
    }
  }
  return out;
}

std::string Ref(const Figure& f, Lang lang) { return FormatNumber(f.value, lang) + " [" + f.source_id + "]"; }

std::string RefCount(const Figure& f) { return Fixed(f.value, 0) + " [" + f.source_id + "]"; }

std::string Fill(std::string_view tmpl, const std::vector<std::pair<std::string, std::string>>& values) {
  std::string out(tmpl);
  for (const auto& [name, value] : values) {
    std::string key = "{" + name + "}";
    for (size_t pos = 0; (pos = out.find(key, pos)) != std::string::npos; pos += value.size()) {
      out.replace(pos, key.size(), value);
    }
  }
  return out;
}

std::string FigureName(const std::string& label, const std::string& unit) {
  if (unit.empty() || (label.size() >= unit.size() && label.compare(label.size() - unit.size(), unit.size(), unit) == 0)) {
    return label;
  }
  return label + " (" + unit + ")";
}

}  // namespace benchfleet::synthesis
