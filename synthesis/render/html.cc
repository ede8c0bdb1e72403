// RenderHtml: the guide's Markdown as one self-contained HTML page (html.h).
//
// The Markdown subset understood is the one the render step writes, nothing more:
//   - "#" to "######" headings; each gets an id slug of its text ("Synthesis table" ->
//     "synthesis-table"; ASCII lowered, other letters kept, punctuation dropped, "-2", "-3"... for
//     repeats) so sections can be linked as guide.en.html#synthesis-table;
//   - paragraphs (consecutive non-blank lines), "- " / "* " bullet lists and "1. " ordered lists
//     (nested by indentation), ``` fenced code blocks;
//   - pipe tables whose second line is the separator row ("|---|:---:|---:|"); "\|" is a pipe inside
//     a cell, code spans included (as GitHub does). Each table sits in a box that scrolls
//     horizontally on its own, so the page never does;
//   - inline: `code`, **bold**, [text](link), ![alt](file), backslash escapes of ASCII punctuation.
//     Raw HTML is never passed through: every character of the text is escaped (& < > "), so a task
//     name, a label or a prompt that contains markup shows verbatim. A link whose target is not
//     relative, http(s) or mailto (e.g. "javascript:") is shown as its text without a link.
//   - the line "<!-- collapsed -->" (html.h: kCollapsedMarker) before a "## " heading: that section
//     becomes <details><summary><h2>...</h2></summary>...</details> (closed by the next "## ");
// Anything else is a paragraph of text (e.g. "> quote" shows the ">").
//
// Images: a paragraph that is one image whose target is a key of `charts` becomes a <figure>: the
// SVG inline (everything before "<svg", such as an XML prolog, dropped) in a horizontally
// scrollable box, and the alt text as <figcaption>. Every id of that SVG, and every reference to one
// (aria-labelledby, aria-describedby, href="#...", url(#...)), is prefixed "fig<N>-" (N: the
// figure's rank in the page), since each chart uses id="chart-title"/"chart-desc". Any other image
// stays an <img> pointing at its file.
//
// Readable at 375 px: body text 16 px, no CSS font size under 12 px (code 14 px in text, 13 px in
// tables). A chart's SVG scales with its box (width:100%; height:auto) but never below the width
// at which its smallest font-size attribute is still 12 px (min-width = viewBox width x 12 / smallest
// font-size, as an inline style; 800 px for the current charts): on a phone the chart scrolls in
// its box rather than shrinking its text. Long code spans and words wrap (overflow-wrap:anywhere)
// outside tables; content is at most 78rem wide. No <script>, no external resource, one <style>.
// Same input, same bytes.
#include "synthesis/render/html.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace benchfleet::synthesis {
namespace {

constexpr std::string_view kCss =
    "*,*::before,*::after{box-sizing:border-box}\n"
    "html{-webkit-text-size-adjust:100%;text-size-adjust:100%}\n"
    "body{margin:0;font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,\"Helvetica Neue\",Arial,sans-serif;"
    "font-size:16px;line-height:1.5;color:#1a1a1a;background:#ffffff}\n"
    "main{max-width:78rem;margin:0 auto;padding:0.5rem 1rem 2rem}\n"
    "h1{font-size:1.75rem;line-height:1.25}\n"
    "h2{font-size:1.375rem;line-height:1.3;margin-top:1.75rem}\n"
    "h3{font-size:1.125rem;margin-top:1.25rem}\n"
    "h4,h5,h6{font-size:1rem}\n"
    "h1,h2,h3,h4,h5,h6,p,li,figcaption{overflow-wrap:anywhere}\n"
    "code,pre{font-family:ui-monospace,\"DejaVu Sans Mono\",Menlo,Consolas,monospace}\n"
    "code{font-size:0.875em;background:#f2f2f2;border-radius:3px;padding:0 0.2em;overflow-wrap:anywhere}\n"
    "pre{font-size:0.875rem;background:#f2f2f2;padding:0.5rem;overflow-x:auto}\n"
    "pre code{padding:0;background:none;font-size:1em}\n"
    "a{color:#0645ad}\n"
    "img{max-width:100%;height:auto}\n"
    ".table-wrap{overflow-x:auto;max-width:100%;margin:1rem 0}\n"
    "table{border-collapse:collapse;font-size:0.9375rem}\n"
    "th,td{border:1px solid #c8c8c8;padding:0.25rem 0.5rem;text-align:left;vertical-align:top;"
    "overflow-wrap:break-word}\n"
    "th{background:#f2f2f2}\n"
    "td code,th code{overflow-wrap:break-word}\n"
    "td:first-child code{white-space:nowrap}\n"
    "figure.chart{margin:1rem 0}\n"
    ".chart-scroll{overflow-x:auto;max-width:100%;border:1px solid #e0e0e0}\n"
    ".chart-scroll svg{display:block;width:100%;height:auto}\n"
    "details>summary{cursor:pointer}\n"
    "details>summary>h2{display:inline}\n"
    "figcaption{font-size:0.875rem;color:#444444;margin-top:0.25rem}\n"
    ".table-wrap:focus,.chart-scroll:focus{outline:2px solid #0645ad;outline-offset:2px}\n";

// The smallest text a reader is given, in CSS px (also for SVG text once scaled).
constexpr double kMinTextPx = 12;

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

bool IsAsciiPunct(char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

bool IsBlank(std::string_view line) { return line.find_first_not_of(" \t") == std::string_view::npos; }

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

// Relative links, http(s) and mailto only: no "javascript:" or "data:" from record text.
bool SafeUrl(std::string_view url) {
  size_t colon = url.find(':');
  if (colon == std::string_view::npos) return true;
  size_t stop = url.find_first_of("/?#");
  if (stop != std::string_view::npos && stop < colon) return true;  // "a/b:c" is relative
  std::string scheme;
  for (char c : url.substr(0, colon)) scheme += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return scheme == "http" || scheme == "https" || scheme == "mailto";
}

enum class Mode { kHtml, kPlain };

// One line of inline Markdown as HTML (kHtml) or as its raw text without markup (kPlain: link and
// image texts kept, not escaped).
std::string Inline(std::string_view s, Mode mode) {
  std::string out;
  auto text = [&](std::string_view t) { out += mode == Mode::kHtml ? Escape(t) : std::string(t); };
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '\\' && i + 1 < s.size() && IsAsciiPunct(s[i + 1])) {
      text(s.substr(i + 1, 1));
      i += 2;
      continue;
    }
    if (c == '`') {
      size_t n = 0;
      while (i + n < s.size() && s[i + n] == '`') ++n;
      size_t end = CodeSpanEnd(s, i, n);
      if (end == std::string_view::npos) {
        text(s.substr(i, n));
        i += n;
        continue;
      }
      std::string code(s.substr(i + n, end - i - n));
      if (code.size() >= 2 && code.front() == ' ' && code.back() == ' ' && !IsBlank(code)) {
        code = code.substr(1, code.size() - 2);
      }
      // "\|" is the table's escaped pipe, inside code spans too (render's Code() writes it).
      for (size_t p = 0; (p = code.find("\\|", p)) != std::string::npos;) code.erase(p, 1), ++p;
      if (mode == Mode::kHtml) {
        out += "<code>" + Escape(code) + "</code>";
      } else {
        out += code;
      }
      i = end + n;
      continue;
    }
    if (c == '*' && s.substr(i, 2) == "**") {
      size_t end = std::string_view::npos;
      for (size_t j = i + 2; j + 1 < s.size(); ++j) {
        if (s[j] == '\\') {
          ++j;
        } else if (s[j] == '`') {
          size_t n = 0;
          while (j + n < s.size() && s[j + n] == '`') ++n;
          size_t close = CodeSpanEnd(s, j, n);
          j = close == std::string_view::npos ? j + n - 1 : close + n - 1;
        } else if (s[j] == '*' && s[j + 1] == '*') {
          end = j;
          break;
        }
      }
      if (end != std::string_view::npos && end > i + 2) {
        std::string inner = Inline(s.substr(i + 2, end - i - 2), mode);
        out += mode == Mode::kHtml ? "<strong>" + inner + "</strong>" : inner;
        i = end + 2;
        continue;
      }
      text("**");
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
          std::string_view label = s.substr(open + 1, close - open - 1);
          std::string_view url = Trim(s.substr(close + 2, paren - close - 2));
          if (image) {
            std::string alt = Inline(label, Mode::kPlain);
            out += mode == Mode::kHtml ? "<img src=\"" + Escape(url) + "\" alt=\"" + Escape(alt) + "\">"
                                       : alt;
          } else if (mode == Mode::kHtml && SafeUrl(url)) {
            out += "<a href=\"" + Escape(url) + "\">" + Inline(label, mode) + "</a>";
          } else {
            out += Inline(label, mode);
          }
          i = paren + 1;
          continue;
        }
      }
      text(s.substr(i, image ? 2 : 1));
      i += image ? 2 : 1;
      continue;
    }
    size_t next = s.find_first_of("\\`*![", i + 1);
    if (next == std::string_view::npos) next = s.size();
    text(s.substr(i, next - i));
    i = next;
  }
  return out;
}

// "Synthesis table" -> "synthesis-table": ASCII letters lowered, digits and non-ASCII letters
// kept, spaces and "-" one "-", other punctuation dropped (U+0080-U+00BF and U+2000-U+206F, such
// as "—" or "«", count as punctuation).
std::string Slug(std::string_view text) {
  std::string out;
  bool dash = false;
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    len = std::min(len, text.size() - i);
    bool punct = false, space = false;
    if (c < 0x80) {
      if (c == ' ' || c == '-' || c == '\t') {
        space = true;
      } else if (!std::isalnum(c) && c != '_') {
        punct = true;
      }
    } else if (c == 0xC2) {
      punct = true;
      if (len == 2 && static_cast<unsigned char>(text[i + 1]) == 0xA0) space = true;  // no-break space
    } else if (c == 0xE2 && len == 3 && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x81) {
      punct = true;
    }
    if (space) {
      dash = true;
    } else if (!punct) {
      if (dash && !out.empty()) out += '-';
      dash = false;
      for (size_t k = 0; k < len; ++k) {
        char ch = text[i + k];
        out += (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch - 'A' + 'a') : ch;
      }
    }
    i += len;
  }
  return out.empty() ? "section" : out;
}

// The cells of a table row: split on pipes that are not escaped, outer pipes dropped. The cells
// keep their "\|" (the inline step turns it into "|").
std::vector<std::string> SplitRow(std::string_view line) {
  std::string_view row = Trim(line);
  if (!row.empty() && row.front() == '|') row.remove_prefix(1);
  if (!row.empty() && row.back() == '|' && (row.size() < 2 || row[row.size() - 2] != '\\')) row.remove_suffix(1);
  std::vector<std::string> cells;
  std::string cell;
  for (size_t i = 0; i < row.size(); ++i) {
    if (row[i] == '\\' && i + 1 < row.size()) {
      cell += row.substr(i, 2);
      ++i;
    } else if (row[i] == '|') {
      cells.emplace_back(Trim(cell));
      cell.clear();
    } else {
      cell += row[i];
    }
  }
  cells.emplace_back(Trim(cell));
  return cells;
}

// "|---|:--:|" -> the columns' alignment ("", "center", "right", "left"); empty when not a
// separator row.
std::vector<std::string> SeparatorRow(std::string_view line) {
  std::string_view t = Trim(line);
  if (t.empty() || t.find('-') == std::string_view::npos) return {};
  std::vector<std::string> aligns;
  for (const std::string& cell : SplitRow(t)) {
    std::string_view c = Trim(cell);
    if (c.empty()) return {};
    bool left = c.front() == ':', right = c.back() == ':';
    std::string_view dashes = c.substr(left ? 1 : 0, c.size() - (left ? 1 : 0) - (right ? 1 : 0));
    if (dashes.empty() || dashes.find_first_not_of('-') != std::string_view::npos) return {};
    aligns.push_back(left && right ? "center" : right ? "right" : left ? "left" : "");
  }
  return aligns;
}

struct ListMarker {
  size_t indent = 0;
  bool ordered = false;
  size_t content = 0;  // where the item's text starts
};

// "- x", "* x", "+ x", "1. x", "1) x" at any indentation.
std::optional<ListMarker> ListItemOf(std::string_view line) {
  size_t indent = line.find_first_not_of(' ');
  if (indent == std::string_view::npos) return std::nullopt;
  size_t i = indent;
  ListMarker m{indent, false, 0};
  if (line[i] == '-' || line[i] == '*' || line[i] == '+') {
    ++i;
  } else {
    size_t d = i;
    while (i < line.size() && i - d < 9 && line[i] >= '0' && line[i] <= '9') ++i;
    if (i == d || i >= line.size() || (line[i] != '.' && line[i] != ')')) return std::nullopt;
    ++i;
    m.ordered = true;
  }
  if (i >= line.size() || line[i] != ' ') return std::nullopt;
  m.content = i + 1;
  return m;
}

bool IsFence(std::string_view line) { return Trim(line).substr(0, 3) == "```"; }

// The level of a "## text" heading, 0 when the line is none.
int HeadingLevel(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && line[n] == '#') ++n;
  if (n == 0 || n > 6) return 0;
  if (n == line.size()) return static_cast<int>(n);
  return line[n] == ' ' ? static_cast<int>(n) : 0;
}

double Number(std::string_view text) {
  std::string s(text);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  return end == s.c_str() ? 0 : v;
}

// The value of attribute `name` in `tag` (the text of one start tag), or nullopt.
std::optional<std::string> Attribute(std::string_view tag, std::string_view name) {
  for (size_t p = 0; (p = tag.find(name, p)) != std::string_view::npos; p += name.size()) {
    bool starts = p > 0 && (tag[p - 1] == ' ' || tag[p - 1] == '\n' || tag[p - 1] == '\t');
    size_t q = p + name.size();
    if (!starts || tag.substr(q, 2) != "=\"") continue;
    size_t end = tag.find('"', q + 2);
    if (end == std::string_view::npos) return std::nullopt;
    return std::string(tag.substr(q + 2, end - q - 2));
  }
  return std::nullopt;
}

// The chart's SVG ready to sit inline: prolog dropped, ids and references prefixed, and a
// min-width keeping its smallest text at kMinTextPx. Empty when `svg` has no <svg element. Adds the
// ids it defines (prefixed) to *defined.
std::string InlineSvg(std::string_view svg, const std::string& prefix, std::set<std::string>* defined) {
  size_t start = svg.find("<svg");
  if (start == std::string_view::npos) return {};
  std::string_view body = svg.substr(start);
  while (!body.empty() && (body.back() == '\n' || body.back() == ' ' || body.back() == '\r')) body.remove_suffix(1);

  // Ids defined in the SVG: only references to these are rewritten.
  std::set<std::string> ids;
  for (size_t p = 0; (p = body.find(" id=\"", p)) != std::string_view::npos;) {
    size_t end = body.find('"', p + 5);
    if (end == std::string_view::npos) break;
    ids.emplace(body.substr(p + 5, end - p - 5));
    p = end;
  }
  for (const std::string& id : ids) defined->insert(prefix + id);
  auto ref = [&](std::string_view id) {
    return ids.count(std::string(id)) != 0 ? prefix + std::string(id) : std::string(id);
  };
  std::string out;
  out.reserve(body.size() + 64);
  constexpr std::string_view kListAttrs[] = {" id=\"", " aria-labelledby=\"", " aria-describedby=\""};
  constexpr std::string_view kHrefAttrs[] = {" href=\"#", " xlink:href=\"#"};
  size_t i = 0;
  while (i < body.size()) {
    // Every attribute rewritten below starts with ' ' and url(# with 'u': copy the text up to the
    // next of those in one piece.
    if (body[i] != ' ' && body[i] != 'u') {
      size_t next = body.find_first_of(" u", i);
      if (next == std::string_view::npos) next = body.size();
      out.append(body.substr(i, next - i));
      i = next;
      continue;
    }
    bool done = false;
    for (std::string_view attr : kListAttrs) {
      if (body.substr(i, attr.size()) != attr) continue;
      size_t end = body.find('"', i + attr.size());
      if (end == std::string_view::npos) break;
      out += attr;
      std::string_view value = body.substr(i + attr.size(), end - i - attr.size());
      for (size_t t = 0; t < value.size();) {
        size_t sp = value.find(' ', t);
        if (sp == std::string_view::npos) sp = value.size();
        if (t > 0) out += ' ';
        out += ref(value.substr(t, sp - t));
        t = sp + 1;
      }
      out += '"';
      i = end + 1;
      done = true;
      break;
    }
    if (done) continue;
    for (std::string_view attr : kHrefAttrs) {
      if (body.substr(i, attr.size()) != attr) continue;
      size_t end = body.find('"', i + attr.size());
      if (end == std::string_view::npos) break;
      out += attr;
      out += ref(body.substr(i + attr.size(), end - i - attr.size()));
      out += '"';
      i = end + 1;
      done = true;
      break;
    }
    if (done) continue;
    if (body.substr(i, 5) == "url(#") {
      size_t end = body.find(')', i + 5);
      if (end != std::string_view::npos) {
        out += "url(#" + ref(body.substr(i + 5, end - i - 5)) + ")";
        i = end + 1;
        continue;
      }
    }
    out += body[i++];
  }

  // Smallest font-size attribute (the SVG's user units; 16 when none is given).
  double smallest = 0;
  for (size_t p = 0; (p = out.find("font-size=\"", p)) != std::string::npos; p += 11) {
    double v = Number(std::string_view(out).substr(p + 11));
    if (v > 0 && (smallest == 0 || v < smallest)) smallest = v;
  }
  if (smallest == 0) smallest = 16;
  size_t tag_end = out.find('>');
  std::string_view root = std::string_view(out).substr(0, tag_end);
  std::optional<std::string> view_box = Attribute(root, "viewBox");
  if (view_box) {
    std::vector<double> v;
    for (size_t t = 0; t < view_box->size();) {
      size_t sp = view_box->find_first_of(" ,", t);
      if (sp == std::string::npos) sp = view_box->size();
      if (sp > t) v.push_back(Number(std::string_view(*view_box).substr(t, sp - t)));
      t = sp + 1;
    }
    if (v.size() == 4 && v[2] > 0) {
      double min_width = std::ceil(v[2] * kMinTextPx / smallest);
      std::string style = "min-width:" + std::to_string(static_cast<long long>(min_width)) + "px";
      size_t existing = root.find(" style=\"");
      if (existing != std::string_view::npos) {
        out.insert(existing + 8, style + ";");
      } else {
        out.insert(4, " style=\"" + style + "\"");
      }
    }
  }
  return out;
}

class Converter {
 public:
  explicit Converter(const std::map<std::string, std::string>& charts) : charts_(charts) {}

  // Converts the whole Markdown; returns the <main> content. title() is set after.
  std::string Convert(std::string_view markdown) {
    std::vector<std::string_view> lines;
    for (size_t p = 0; p <= markdown.size();) {
      size_t nl = markdown.find('\n', p);
      if (nl == std::string_view::npos) nl = markdown.size();
      std::string_view line = markdown.substr(p, nl - p);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      lines.push_back(line);
      p = nl + 1;
    }
    size_t i = 0;
    while (i < lines.size()) {
      std::string_view line = lines[i];
      if (IsBlank(line)) {
        ++i;
      } else if (Trim(line) == kCollapsedMarker) {
        collapse_next_ = true;
        ++i;
      } else if (IsFence(line)) {
        i = CodeBlock(lines, i);
      } else if (HeadingLevel(line) > 0) {
        Heading(line);
        ++i;
      } else if (IsTableStart(lines, i)) {
        i = Table(lines, i);
      } else if (ListItemOf(line)) {
        i = List(lines, i, ListItemOf(line)->indent);
      } else {
        i = Paragraph(lines, i);
      }
    }
    if (details_open_) out_ += "</details>\n";
    return out_;
  }

  const std::string& title() const { return title_; }

 private:
  std::string UniqueId(const std::string& base) {
    std::string id = base;
    for (int n = 2; ids_.count(id) != 0; ++n) id = base + "-" + std::to_string(n);
    ids_.insert(id);
    return id;
  }

  static bool IsTableStart(const std::vector<std::string_view>& lines, size_t i) {
    return Trim(lines[i]).substr(0, 1) == "|" && i + 1 < lines.size() && !SeparatorRow(lines[i + 1]).empty();
  }

  void Heading(std::string_view line) {
    int level = HeadingLevel(line);
    std::string_view text = Trim(line.substr(static_cast<size_t>(level)));
    std::string plain = Inline(text, Mode::kPlain);
    std::string id = UniqueId(Slug(plain));
    if (level == 1 && !title_set_) {
      title_ = plain;
      title_set_ = true;
    }
    last_heading_id_ = id;
    std::string h = "h" + std::to_string(level);
    std::string heading = "<" + h + " id=\"" + Escape(id) + "\">" + Inline(text, Mode::kHtml) + "</" + h + ">";
    // A "## " heading ends a collapsed section; after the marker it opens one.
    if (level <= 2 && details_open_) {
      out_ += "</details>\n";
      details_open_ = false;
    }
    if (level == 2 && collapse_next_) {
      out_ += "<details>\n<summary>" + heading + "</summary>\n";
      details_open_ = true;
      collapse_next_ = false;
      return;
    }
    out_ += heading + "\n";
  }

  size_t CodeBlock(const std::vector<std::string_view>& lines, size_t i) {
    std::string code;
    size_t j = i + 1;
    for (; j < lines.size() && !IsFence(lines[j]); ++j) code += std::string(lines[j]) + "\n";
    out_ += "<pre><code>" + Escape(code) + "</code></pre>\n";
    return j < lines.size() ? j + 1 : j;
  }

  size_t Table(const std::vector<std::string_view>& lines, size_t i) {
    std::vector<std::string> header = SplitRow(lines[i]);
    std::vector<std::string> aligns = SeparatorRow(lines[i + 1]);
    aligns.resize(header.size());
    auto cell = [&](const char* tag, size_t col, const std::string& text) {
      std::string open = std::string("<") + tag;
      if (!aligns[col].empty()) open += " style=\"text-align:" + aligns[col] + "\"";
      return open + ">" + Inline(text, Mode::kHtml) + "</" + tag + ">";
    };
    out_ += "<div class=\"table-wrap\" tabindex=\"0\" role=\"region\"";
    if (!last_heading_id_.empty()) out_ += " aria-labelledby=\"" + Escape(last_heading_id_) + "\"";
    out_ += ">\n<table>\n<thead>\n<tr>";
    for (size_t c = 0; c < header.size(); ++c) out_ += cell("th", c, header[c]);
    out_ += "</tr>\n</thead>\n<tbody>\n";
    size_t j = i + 2;
    for (; j < lines.size() && !IsBlank(lines[j]) && Trim(lines[j]).substr(0, 1) == "|"; ++j) {
      std::vector<std::string> row = SplitRow(lines[j]);
      row.resize(header.size());
      out_ += "<tr>";
      for (size_t c = 0; c < row.size(); ++c) out_ += cell("td", c, row[c]);
      out_ += "</tr>\n";
    }
    out_ += "</tbody>\n</table>\n</div>\n";
    return j;
  }

  // The list whose items sit at `indent`, from line i; returns the line after it.
  size_t List(const std::vector<std::string_view>& lines, size_t i, size_t indent) {
    bool ordered = ListItemOf(lines[i])->ordered;
    out_ += ordered ? "<ol>\n" : "<ul>\n";
    bool open_item = false;
    while (i < lines.size()) {
      std::string_view line = lines[i];
      if (IsBlank(line)) {
        // A blank line ends the list unless the next item continues it.
        std::optional<ListMarker> next = i + 1 < lines.size() ? ListItemOf(lines[i + 1]) : std::nullopt;
        if (!next || next->indent < indent || (next->indent == indent && next->ordered != ordered)) break;
        ++i;
        continue;
      }
      std::optional<ListMarker> m = ListItemOf(line);
      if (m && m->indent == indent && m->ordered == ordered) {
        if (open_item) out_ += "</li>\n";
        out_ += "<li>" + Inline(Trim(line.substr(m->content)), Mode::kHtml);
        open_item = true;
        ++i;
      } else if (m && m->indent > indent && open_item) {
        out_ += "\n";
        i = List(lines, i, m->indent);
      } else if (!m && open_item && line.find_first_not_of(' ') > indent && HeadingLevel(Trim(line)) == 0) {
        out_ += "\n" + Inline(Trim(line), Mode::kHtml);  // continuation of the item's text
        ++i;
      } else {
        break;
      }
    }
    if (open_item) out_ += "</li>\n";
    out_ += ordered ? "</ol>\n" : "</ul>\n";
    return i;
  }

  size_t Paragraph(const std::vector<std::string_view>& lines, size_t i) {
    std::vector<std::string_view> para;
    for (size_t j = i; j < lines.size(); ++j) {
      std::string_view line = lines[j];
      if (j > i) {
        std::optional<ListMarker> m = ListItemOf(line);
        bool interrupts = IsBlank(line) || IsFence(line) || HeadingLevel(line) > 0 || IsTableStart(lines, j) ||
                          (m && (!m->ordered || Trim(line).substr(0, 2) == "1."));
        if (interrupts) break;
      }
      para.push_back(Trim(line));
    }
    if (para.size() == 1 && Figure(para[0])) return i + 1;
    out_ += "<p>";
    for (size_t k = 0; k < para.size(); ++k) out_ += (k > 0 ? "\n" : "") + Inline(para[k], Mode::kHtml);
    out_ += "</p>\n";
    return i + para.size();
  }

  // A paragraph made of one image of a known chart: the chart inline in a <figure>.
  bool Figure(std::string_view line) {
    if (line.substr(0, 2) != "![" || line.back() != ')') return false;
    size_t close = MatchBracket(line, 1, '[', ']');
    if (close == std::string_view::npos || close + 1 >= line.size() || line[close + 1] != '(' ||
        MatchBracket(line, close + 1, '(', ')') != line.size() - 1) {
      return false;
    }
    std::string target(Trim(line.substr(close + 2, line.size() - close - 3)));
    auto chart = charts_.find(target);
    if (chart == charts_.end()) return false;
    std::string prefix = "fig" + std::to_string(figures_ + 1) + "-";
    std::string svg = InlineSvg(chart->second, prefix, &ids_);
    if (svg.empty()) return false;
    ++figures_;
    std::string caption_id = UniqueId(prefix + "caption");
    std::string alt = Inline(line.substr(2, close - 2), Mode::kPlain);
    out_ += "<figure class=\"chart\">\n<div class=\"chart-scroll\" tabindex=\"0\" role=\"region\" aria-labelledby=\"" +
            Escape(caption_id) + "\">\n" + svg + "\n</div>\n<figcaption id=\"" + Escape(caption_id) + "\">" +
            Escape(alt) + "</figcaption>\n</figure>\n";
    return true;
  }

  const std::map<std::string, std::string>& charts_;
  std::set<std::string> ids_;
  std::string out_;
  std::string title_;
  bool title_set_ = false;
  std::string last_heading_id_;
  int figures_ = 0;
  bool collapse_next_ = false;  // the marker line was seen: the next "## " section is collapsed
  bool details_open_ = false;
};

}  // namespace

std::string RenderHtml(const std::string& markdown, const std::map<std::string, std::string>& charts, Lang lang) {
  Converter converter(charts);
  std::string body = converter.Convert(markdown);
  std::string title = converter.title().empty() ? "benchfleet" : converter.title();
  std::string out = "<!DOCTYPE html>\n<html lang=\"" + std::string(LangCode(lang)) + "\">\n<head>\n";
  out += "<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>" + Escape(title) + "</title>\n";
  out += "<style>\n" + std::string(kCss) + "</style>\n";
  out += "</head>\n<body>\n<main>\n" + body + "</main>\n</body>\n</html>\n";
  return out;
}

std::string HeadingId(std::string_view heading_text) { return Slug(heading_text); }

}  // namespace benchfleet::synthesis
