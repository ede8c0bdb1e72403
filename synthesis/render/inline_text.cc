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

std::string FigureName(const std::string& label, const std::string& unit, Lang lang) {
  // Whether the label already says its unit is read in the declaration's words.
  if (FigureName(label, unit) == label) return LocalWords(label, lang);
  return FigureName(LocalWords(label, lang), LocalWords(unit, lang));
}

std::string LocalWords(std::string_view text, Lang lang) {
  if (lang != Lang::kFr) return std::string(text);
  static constexpr std::pair<std::string_view, std::string_view> kLabels[] = {
      {"generation tokens/s", "jetons générés/s"},
      {"prompt tokens/s", "jetons de prompt/s"},
      {"output tokens/s", "jetons de sortie/s"},
      {"time to first token", "délai du premier jeton"},
      {"mean latency", "latence moyenne"},
      {"latency p99", "latence p99"},
      {"execution time", "temps d'exécution"},
      {"server execution time", "temps d'exécution du serveur"},
      {"energy per output token", "énergie par jeton de sortie"},
      {"energy per image", "énergie par image"},
      {"steady-state mean latency", "latence moyenne en régime établi"},
      {"MSER-5 warm-up requests", "requêtes d'échauffement (MSER-5)"},
      {"requests", "requêtes"},
      {"goodput", "débit utile"},
      {"MiB", "Mio"},
      {"GiB", "Gio"},
  };
  for (const auto& [en, fr] : kLabels) {
    if (text == en) return std::string(fr);
  }
  // Whole words only: "tokens" and "token" (a unit such as "tokens/s" or "J/token").
  std::string out;
  size_t i = 0;
  // A metric name such as "tokens_per_second" is an identifier, not a word: '_' and digits join.
  auto is_letter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  while (i < text.size()) {
    bool starts_word = i == 0 || !is_letter(text[i - 1]);
    bool replaced = false;
    for (const auto& [en, fr] : {std::pair<std::string_view, std::string_view>{"tokens", "jetons"},
                                 std::pair<std::string_view, std::string_view>{"token", "jeton"}}) {
      if (starts_word && text.substr(i, en.size()) == en &&
          (i + en.size() == text.size() || !is_letter(text[i + en.size()]))) {
        out += fr;
        i += en.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

}  // namespace benchfleet::synthesis
