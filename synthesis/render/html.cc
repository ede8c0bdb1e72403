// WriteHtml: the guide's document tree as one self-contained HTML page (html.h).
//
// Blocks:
//   - headings <h1> to <h6>; each gets an id slug of its text ("Synthesis table" ->
//     "synthesis-table"; ASCII lowered, other letters kept, punctuation dropped, "-2", "-3"... for
//     repeats) so sections can be linked as guide.en.html#synthesis-table;
//   - paragraphs <p>, bullet lists <ul> (nested inside their item);
//   - tables, each in a box that scrolls horizontally on its own (so the page never does), labelled
//     by the heading before it;
//   - a collapsed heading (document.h) opens <details><summary><h2>...</h2></summary>, closed by the
//     next heading of level 1 or 2 or the end of the page;
//   - figures (below).
// Inline: text, <code>, <strong>, <a>, <img>. Raw HTML is never passed through: every character of
// the text is escaped (& < > "), so a task name, a label or a prompt that contains markup shows
// verbatim. A link whose target is not relative, http(s) or mailto (e.g. "javascript:") is shown as
// its text without a link. A code span drops the one space that pads both of its ends (as Markdown
// viewers do).
//
// Figures: a figure whose chart is a key of `charts` becomes a <figure>: the SVG inline (everything
// before "<svg", such as an XML prolog, dropped) in a horizontally scrollable box, and the alt text
// as <figcaption>. Every id of that SVG, and every reference to one (aria-labelledby,
// aria-describedby, href="#...", url(#...)), is prefixed "fig<N>-" (N: the figure's rank in the
// page), since each chart uses id="chart-title"/"chart-desc". Any other figure stays an <img>
// pointing at its file, in a paragraph.
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

class Writer {
 public:
  explicit Writer(const std::map<std::string, std::string>& charts) : charts_(charts) {}

  // Writes the blocks; returns the <main> content. title() is set after.
  std::string Write(const Document& document) {
    for (const Block& b : document.blocks) {
      switch (b.kind) {
        case Block::Kind::kHeading: Heading(b); break;
        case Block::Kind::kParagraph: out_ += "<p>" + Inline(b.spans) + "</p>\n"; break;
        case Block::Kind::kList: List(b.items); break;
        case Block::Kind::kTable: Table(b); break;
        case Block::Kind::kFigure: Figure(b); break;
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

  static std::string Inline(const Spans& spans) {
    std::string out;
    for (const Span& s : spans) {
      switch (s.kind) {
        case Span::Kind::kText: out += Escape(s.text); break;
        case Span::Kind::kCode: {
          std::string_view code = s.text;
          if (code.size() >= 2 && code.front() == ' ' && code.back() == ' ' &&
              code.find_first_not_of(" \t") != std::string_view::npos) {
            code = code.substr(1, code.size() - 2);
          }
          out += "<code>" + Escape(code) + "</code>";
          break;
        }
        case Span::Kind::kBold: out += "<strong>" + Inline(s.children) + "</strong>"; break;
        case Span::Kind::kLink:
          out += SafeUrl(s.target) ? "<a href=\"" + Escape(s.target) + "\">" + Inline(s.children) + "</a>"
                                   : Inline(s.children);
          break;
        case Span::Kind::kImage: out += Image(s.target, s.text); break;
      }
    }
    return out;
  }

  static std::string Image(const std::string& file, const std::string& alt) {
    return "<img src=\"" + Escape(file) + "\" alt=\"" + Escape(alt) + "\">";
  }

  void Heading(const Block& b) {
    std::string plain = PlainText(b.spans);
    std::string id = UniqueId(Slug(plain));
    if (b.level == 1 && !title_set_) {
      title_ = plain;
      title_set_ = true;
    }
    last_heading_id_ = id;
    std::string h = "h" + std::to_string(b.level);
    std::string heading = "<" + h + " id=\"" + Escape(id) + "\">" + Inline(b.spans) + "</" + h + ">";
    // A heading of level 1 or 2 ends a collapsed section; a collapsed one opens one.
    if (b.level <= 2 && details_open_) {
      out_ += "</details>\n";
      details_open_ = false;
    }
    if (b.level == 2 && b.collapsed) {
      out_ += "<details>\n<summary>" + heading + "</summary>\n";
      details_open_ = true;
      return;
    }
    out_ += heading + "\n";
  }

  void Table(const Block& b) {
    out_ += "<div class=\"table-wrap\" tabindex=\"0\" role=\"region\"";
    if (!last_heading_id_.empty()) out_ += " aria-labelledby=\"" + Escape(last_heading_id_) + "\"";
    out_ += ">\n<table>\n<thead>\n<tr>";
    for (const Spans& cell : b.header) out_ += "<th>" + Inline(cell) + "</th>";
    out_ += "</tr>\n</thead>\n<tbody>\n";
    for (const std::vector<Spans>& row : b.rows) {
      out_ += "<tr>";
      for (size_t c = 0; c < b.header.size(); ++c) out_ += "<td>" + (c < row.size() ? Inline(row[c]) : "") + "</td>";
      out_ += "</tr>\n";
    }
    out_ += "</tbody>\n</table>\n</div>\n";
  }

  void List(const std::vector<ListItem>& items) {
    out_ += "<ul>\n";
    for (const ListItem& item : items) {
      out_ += "<li>" + Inline(item.spans);
      if (!item.items.empty()) {
        out_ += "\n";
        List(item.items);
      }
      out_ += "</li>\n";
    }
    out_ += "</ul>\n";
  }

  // A known chart inline in a <figure>; any other an image in a paragraph.
  void Figure(const Block& b) {
    auto chart = charts_.find(b.chart);
    std::string prefix = "fig" + std::to_string(figures_ + 1) + "-";
    std::string svg = chart == charts_.end() ? "" : InlineSvg(chart->second, prefix, &ids_);
    if (svg.empty()) {
      out_ += "<p>" + Image(b.chart, b.alt) + "</p>\n";
      return;
    }
    ++figures_;
    std::string caption_id = UniqueId(prefix + "caption");
    out_ += "<figure class=\"chart\">\n<div class=\"chart-scroll\" tabindex=\"0\" role=\"region\" aria-labelledby=\"" +
            Escape(caption_id) + "\">\n" + svg + "\n</div>\n<figcaption id=\"" + Escape(caption_id) + "\">" +
            Escape(b.alt) + "</figcaption>\n</figure>\n";
  }

  const std::map<std::string, std::string>& charts_;
  std::set<std::string> ids_;
  std::string out_;
  std::string title_;
  bool title_set_ = false;
  std::string last_heading_id_;
  int figures_ = 0;
  bool details_open_ = false;
};

}  // namespace

std::string WriteHtml(const Document& document, const std::map<std::string, std::string>& charts, Lang lang) {
  Writer writer(charts);
  std::string body = writer.Write(document);
  std::string title = writer.title().empty() ? "benchfleet" : writer.title();
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
