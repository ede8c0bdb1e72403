// The guide as a document tree: the blocks (headings, paragraphs, lists, tables, chart figures) and
// inline spans (text, code, bold, links, images) the render step builds once from the model, and
// that WriteMarkdown (here) and WriteHtml (html.h) both write. Plain values; thread-compatible.
// Part of benchfleet_synthesis_render.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_DOCUMENT_H_
#define BENCHFLEET_SYNTHESIS_RENDER_DOCUMENT_H_

#include <string>
#include <string_view>
#include <vector>

namespace benchfleet::synthesis {

// A piece of inline text. `text` is the text as read (no Markdown escapes): a code span's
// characters, an image's alt text.
struct Span {
  enum class Kind { kText, kCode, kBold, kLink, kImage };
  Kind kind = Kind::kText;
  std::string text;            // kText, kCode, kImage (its alt text)
  std::string target;          // kLink (a URL), kImage (a file)
  std::vector<Span> children;  // kBold, kLink (its label)
};
using Spans = std::vector<Span>;

Span TextSpan(std::string text);
Span CodeSpan(std::string text);
Span BoldSpan(Spans children);
Span LinkSpan(Spans label, std::string target);
Span ImageSpan(std::string alt, std::string target);

// `text` on one line, as an image's alt text and a table cell need it: newlines and tabs become
// one space, trailing spaces dropped.
std::string OneLine(std::string_view text);

// The text of `spans` without markup: code spans' characters, links' labels, images' alt texts.
std::string PlainText(const Spans& spans);

// One item of a bullet list, with the list nested under it (empty when none).
struct ListItem {
  Spans spans;
  std::vector<ListItem> items;
};

struct Block {
  enum class Kind { kHeading, kParagraph, kList, kTable, kFigure };
  Kind kind = Kind::kParagraph;
  int level = 0;           // kHeading: 1 to 6
  bool collapsed = false;  // kHeading of level 2: its section, up to the next level 2, is folded in HTML
  Spans spans;             // kHeading, kParagraph
  std::vector<ListItem> items;          // kList
  std::vector<Spans> header;            // kTable: one cell per column
  std::vector<std::vector<Spans>> rows;  // kTable: as many cells as the header
  std::string chart;                    // kFigure: the chart's file name (a key of the charts)
  std::string alt;                      // kFigure: the chart's caption, plain text
};

// The guide's blocks in reading order. The render step (sections.h) appends to it.
struct Document {
  std::vector<Block> blocks;

  void Heading(int level, Spans spans);
  // A level 2 heading whose section a reader opens on demand (an appendix).
  void CollapsedHeading(Spans spans);
  void Paragraph(Spans spans);
  // Nothing when `items` is empty.
  void List(std::vector<ListItem> items);
  void Table(std::vector<Spans> header, std::vector<std::vector<Spans>> rows);
  void Figure(std::string chart, std::string alt);
};

// The document in Markdown (GitHub's), the guide's guide.<lang>.md: blocks separated by a blank
// line, "- " lists nested by two spaces, pipe tables, a figure as an image, pipes escaped "\|" (in
// code spans too, as a table cell needs) and a collapsed heading preceded by the line
// "<!-- collapsed -->", which Markdown viewers hide. A text span is written literally: \ ` * < > &
// and | are backslash-escaped, "_" outside a word, a bracket where it could make a link, so a value
// from the data never reads as markup; a code span is fenced by more backticks than it holds.
std::string WriteMarkdown(const Document& document);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_DOCUMENT_H_
