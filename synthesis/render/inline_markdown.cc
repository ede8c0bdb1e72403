// ParseInline (inline_markdown.h): one catalogue constant's inline Markdown as spans.
#include "synthesis/render/inline_markdown.h"

#include <string>
#include <utility>

namespace benchfleet::synthesis {
namespace {

bool IsAsciiPunct(char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// Index of the bracket closing the one at `open` (same nesting level, backslash escapes skipped).
size_t MatchBracket(std::string_view s, size_t open, char opening, char closing) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      ++i;
    } else if (s[i] == opening) {
      ++depth;
    } else if (s[i] == closing && --depth == 0) {
      return i;
    }
  }
  return std::string_view::npos;
}

// Where the code span opened by the backtick run at `i` (of `n` backticks) closes, or npos.
size_t CodeSpanEnd(std::string_view s, size_t i, size_t n) {
  for (size_t j = i + n; j < s.size();) {
    if (s[j] != '`') {
      ++j;
      continue;
    }
    size_t k = j;
    while (k < s.size() && s[k] == '`') ++k;
    if (k - j == n) return j;
    j = k;
  }
  return std::string_view::npos;
}

// Where the "**" closing bold text opened at `i` starts (code spans and escapes skipped), or npos.
size_t BoldEnd(std::string_view s, size_t i) {
  for (size_t j = i + 2; j + 1 < s.size(); ++j) {
    if (s[j] == '\\') {
      ++j;
    } else if (s[j] == '`') {
      size_t n = 0;
      while (j + n < s.size() && s[j + n] == '`') ++n;
      size_t close = CodeSpanEnd(s, j, n);
      j = close == std::string_view::npos ? j + n - 1 : close + n - 1;
    } else if (s[j] == '*' && s[j + 1] == '*') {
      return j;
    }
  }
  return std::string_view::npos;
}

// Appends text, joined to the text span before it.
void AddText(Spans& out, std::string_view text) {
  if (out.empty() || out.back().kind != Span::Kind::kText) out.push_back(TextSpan(""));
  out.back().text += text;
}

}  // namespace

Spans ParseInline(std::string_view s) {
  Spans out;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '\\' && i + 1 < s.size() && IsAsciiPunct(s[i + 1])) {
      AddText(out, s.substr(i + 1, 1));
      i += 2;
      continue;
    }
    if (c == '`') {
      size_t n = 0;
      while (i + n < s.size() && s[i + n] == '`') ++n;
      size_t end = CodeSpanEnd(s, i, n);
      if (end == std::string_view::npos) {
        AddText(out, s.substr(i, n));
        i += n;
        continue;
      }
      std::string code(s.substr(i + n, end - i - n));
      // "\|" is the table's escaped pipe, inside code spans too (as WriteMarkdown writes it).
      for (size_t p = 0; (p = code.find("\\|", p)) != std::string::npos;) code.erase(p, 1), ++p;
      out.push_back(CodeSpan(std::move(code)));
      i = end + n;
      continue;
    }
    if (c == '*' && s.substr(i, 2) == "**") {
      size_t end = BoldEnd(s, i);
      if (end != std::string_view::npos && end > i + 2) {
        out.push_back(BoldSpan(ParseInline(s.substr(i + 2, end - i - 2))));
        i = end + 2;
        continue;
      }
      AddText(out, "**");
      i += 2;
      continue;
    }
    bool image = c == '!' && i + 1 < s.size() && s[i + 1] == '[';
    if (c == '[' || image) {
      size_t open = image ? i + 1 : i;
      size_t close = MatchBracket(s, open, '[', ']');
      if (close != std::string_view::npos && close + 1 < s.size() && s[close + 1] == '(') {
        size_t paren = MatchBracket(s, close + 1, '(', ')');
        if (paren != std::string_view::npos) {
          Spans label = ParseInline(s.substr(open + 1, close - open - 1));
          std::string url(Trim(s.substr(close + 2, paren - close - 2)));
          out.push_back(image ? ImageSpan(PlainText(label), std::move(url))
                              : LinkSpan(std::move(label), std::move(url)));
          i = paren + 1;
          continue;
        }
      }
      AddText(out, s.substr(i, image ? 2 : 1));
      i += image ? 2 : 1;
      continue;
    }
    size_t next = s.find_first_of("\\`*![", i + 1);
    if (next == std::string_view::npos) next = s.size();
    AddText(out, s.substr(i, next - i));
    i = next;
  }
  return out;
}

}  // namespace benchfleet::synthesis
