// The document tree's builders and its Markdown writer (document.h).
#include "synthesis/render/document.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"

namespace benchfleet::synthesis {
namespace {

constexpr std::string_view kCollapsedMarker = "<!-- collapsed -->";

std::string EscapePipes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

// Text as literal Markdown, so that text from the data never reads as markup: \ ` * < > & and |
// are backslash-escaped everywhere; "_" unless inside a word ("cache_prompt" cannot open emphasis);
// a bracket only where it could make a link (a "]" before "(", any bracket in a link's label), so
// that "52.9 [S3]" stays as the guide prints it. A "(" never starts the span after a text span
// (adjacent text joins; other spans start with ` * [ or !).
std::string EscapeText(std::string_view text, bool in_label = false) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '\\': case '`': case '*': case '<': case '>': case '&': case '|': out += '\\'; break;
      case '_':
        if (i == 0 || i + 1 == text.size() || !absl::ascii_isalnum(static_cast<unsigned char>(text[i - 1])) ||
            !absl::ascii_isalnum(static_cast<unsigned char>(text[i + 1]))) out += '\\';
        break;
      case '[':
        if (in_label) out += '\\';
        break;
      case ']':
        if (in_label || (i + 1 < text.size() && text[i + 1] == '(')) out += '\\';
        break;
      default: break;
    }
    out += c;
  }
  return out;
}

// A code span fenced by more backticks than any run inside it (one when there is none, as
// CodeSpans() leaves it), padded by a space when its text starts or ends with a backtick.
std::string CodeText(std::string_view text) {
  size_t longest = 0;
  for (size_t i = 0; i < text.size();) {
    size_t n = 0;
    while (i + n < text.size() && text[i + n] == '`') ++n;
    longest = std::max(longest, n);
    i += n > 0 ? n : 1;
  }
  const std::string fence(longest + 1, '`');
  const bool pad = !text.empty() && (text.front() == '`' || text.back() == '`');
  const std::string space = pad ? " " : "";
  return fence + space + EscapePipes(text) + space + fence;
}

void WriteSpans(const Spans& spans, std::string& out, bool in_label = false) {
  for (const Span& s : spans) {
    switch (s.kind) {
      case Span::Kind::kText: out += EscapeText(s.text, in_label); break;
      case Span::Kind::kCode: out += CodeText(s.text); break;
      case Span::Kind::kBold:
        out += "**";
        WriteSpans(s.children, out, in_label);
        out += "**";
        break;
      case Span::Kind::kLink:
        out += "[";
        WriteSpans(s.children, out, true);
        out += "](" + s.target + ")";
        break;
      case Span::Kind::kImage: out += "![" + EscapeText(OneLine(s.text), true) + "](" + s.target + ")"; break;
    }
  }
}

void WriteItems(const std::vector<ListItem>& items, const std::string& indent, std::string& out) {
  for (const ListItem& item : items) {
    out += indent + "- ";
    WriteSpans(item.spans, out);
    out += "\n";
    WriteItems(item.items, indent + "  ", out);
  }
}

void WriteRow(const std::vector<Spans>& cells, std::string& out) {
  out += "|";
  for (const Spans& cell : cells) {
    out += " ";
    WriteSpans(cell, out);
    out += " |";
  }
  out += "\n";
}

}  // namespace

Span TextSpan(std::string text) { return Span{Span::Kind::kText, std::move(text), {}, {}}; }
Span CodeSpan(std::string text) { return Span{Span::Kind::kCode, std::move(text), {}, {}}; }
Span BoldSpan(Spans children) { return Span{Span::Kind::kBold, {}, {}, std::move(children)}; }
Span LinkSpan(Spans label, std::string target) {
  return Span{Span::Kind::kLink, {}, std::move(target), std::move(label)};
}
Span ImageSpan(std::string alt, std::string target) {
  return Span{Span::Kind::kImage, std::move(alt), std::move(target), {}};
}

std::string OneLine(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t') {
      if (out.empty() || out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string PlainText(const Spans& spans) {
  std::string out;
  for (const Span& s : spans) out += s.children.empty() ? s.text : PlainText(s.children);
  return out;
}

void Document::Heading(int level, Spans spans) {
  Block b;
  b.kind = Block::Kind::kHeading;
  b.level = level;
  b.spans = std::move(spans);
  blocks.push_back(std::move(b));
}

void Document::CollapsedHeading(Spans spans) {
  Heading(2, std::move(spans));
  blocks.back().collapsed = true;
}

void Document::Paragraph(Spans spans) {
  Block b;
  b.kind = Block::Kind::kParagraph;
  b.spans = std::move(spans);
  blocks.push_back(std::move(b));
}

void Document::List(std::vector<ListItem> items) {
  if (items.empty()) return;
  Block b;
  b.kind = Block::Kind::kList;
  b.items = std::move(items);
  blocks.push_back(std::move(b));
}

void Document::Table(std::vector<Spans> header, std::vector<std::vector<Spans>> rows) {
  Block b;
  b.kind = Block::Kind::kTable;
  b.header = std::move(header);
  b.rows = std::move(rows);
  blocks.push_back(std::move(b));
}

void Document::Figure(std::string chart, std::string alt) {
  Block b;
  b.kind = Block::Kind::kFigure;
  b.chart = std::move(chart);
  b.alt = std::move(alt);
  blocks.push_back(std::move(b));
}

std::string WriteMarkdown(const Document& document) {
  std::string out;
  for (const Block& b : document.blocks) {
    if (!out.empty()) out += "\n";
    switch (b.kind) {
      case Block::Kind::kHeading:
        if (b.collapsed) out += std::string(kCollapsedMarker) + "\n";
        out += std::string(static_cast<size_t>(b.level), '#') + " ";
        WriteSpans(b.spans, out);
        out += "\n";
        break;
      case Block::Kind::kParagraph:
        WriteSpans(b.spans, out);
        out += "\n";
        break;
      case Block::Kind::kList: WriteItems(b.items, "", out); break;
      case Block::Kind::kTable:
        WriteRow(b.header, out);
        out += "|";
        for (size_t i = 0; i < b.header.size(); ++i) out += "---|";
        out += "\n";
        for (const std::vector<Spans>& row : b.rows) WriteRow(row, out);
        break;
      case Block::Kind::kFigure: out += "![" + EscapeText(OneLine(b.alt), true) + "](" + b.chart + ")\n"; break;
    }
  }
  return out;
}

}  // namespace benchfleet::synthesis
