// The guide's document tree (synthesis/render/document.h): WriteMarkdown's exact bytes for each
// block and span, and ParseInline (inline_markdown.h) on the catalogue's inline Markdown, whose
// spans WriteMarkdown writes back as they were.
#include "synthesis/render/document.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "synthesis/render/inline_markdown.h"

namespace benchfleet::synthesis {
namespace {

Spans T(const std::string& text) { return {TextSpan(text)}; }

// The Markdown of one paragraph of `spans`, without its line end.
std::string Line(const Spans& spans) {
  Document doc;
  doc.Paragraph(spans);
  std::string md = WriteMarkdown(doc);
  return md.substr(0, md.size() - 1);
}

TEST(WriteMarkdownTest, BlocksSeparatedByABlankLine) {
  Document doc;
  doc.Heading(1, T("Guide"));
  doc.Paragraph({BoldSpan(T("Contents")), TextSpan(": "), LinkSpan(T("A | B"), "#a-b")});
  doc.Heading(3, {TextSpan("Task "), CodeSpan("a|b")});
  doc.Figure("chart-a.en.svg", "Duration — a|b\nc ");
  doc.Table({T("Machine"), T("Runs")}, {{{CodeSpan("m")}, T("3 [S1]")}, {T("—"), T("x | y")}});
  doc.List({ListItem{{CodeSpan("cell")}, {ListItem{T("one"), {}}, ListItem{T("two"), {}}}}, ListItem{T("next"), {}}});
  doc.List({});
  doc.CollapsedHeading(T("Appendix"));
  doc.Paragraph({TextSpan("See "), ImageSpan("a|b", "b.png"), TextSpan(".")});
  EXPECT_EQ(WriteMarkdown(doc),
            "# Guide\n\n"
            "**Contents**: [A \\| B](#a-b)\n\n"
            "### Task `a\\|b`\n\n"
            "![Duration — a\\|b c](chart-a.en.svg)\n\n"
            "| Machine | Runs |\n|---|---|\n| `m` | 3 [S1] |\n| — | x \\| y |\n\n"
            "- `cell`\n  - one\n  - two\n- next\n\n"
            "<!-- collapsed -->\n## Appendix\n\n"
            "See ![a\\|b](b.png).\n");
}

TEST(WriteMarkdownTest, EmptyDocumentIsEmpty) { EXPECT_EQ(WriteMarkdown(Document{}), ""); }

TEST(ParseInlineTest, Spans) {
  Spans spans = ParseInline("**Warning:** see `a\\|b` and [sources](sources.csv#S3), ![alt \\| x](c.svg) a \\* b");
  ASSERT_EQ(spans.size(), 8u);
  EXPECT_EQ(spans[0].kind, Span::Kind::kBold);
  EXPECT_EQ(PlainText(spans[0].children), "Warning:");
  EXPECT_EQ(spans[1].text, " see ");
  EXPECT_EQ(spans[2].kind, Span::Kind::kCode);
  EXPECT_EQ(spans[2].text, "a|b");
  EXPECT_EQ(spans[3].text, " and ");
  EXPECT_EQ(spans[4].kind, Span::Kind::kLink);
  EXPECT_EQ(spans[4].target, "sources.csv#S3");
  EXPECT_EQ(PlainText(spans[4].children), "sources");
  EXPECT_EQ(spans[5].text, ", ");
  EXPECT_EQ(spans[6].kind, Span::Kind::kImage);
  EXPECT_EQ(spans[6].text, "alt | x");
  EXPECT_EQ(spans[6].target, "c.svg");
  EXPECT_EQ(spans[7].kind, Span::Kind::kText);
  EXPECT_EQ(spans[7].text, " a * b");
}

TEST(ParseInlineTest, MarkupThatDoesNotCloseIsText) {
  Spans spans = ParseInline("**bold `a**b` end** `` a`b `` `unclosed **x [y] z ![w]");
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans[0].kind, Span::Kind::kBold);
  ASSERT_EQ(spans[0].children.size(), 3u);
  EXPECT_EQ(spans[0].children[1].kind, Span::Kind::kCode);
  EXPECT_EQ(spans[0].children[1].text, "a**b");
  EXPECT_EQ(spans[2].kind, Span::Kind::kCode);
  EXPECT_EQ(spans[2].text, " a`b ");  // as written: the HTML writer drops the padding
  EXPECT_EQ(spans[3].text, " `unclosed **x [y] z ![w]");
}

// The guide's inline Markdown (code spans, figures, "\|" in cells, catalogue templates) comes
// back byte for byte.
TEST(ParseInlineTest, TheGuidesInlineTextWritesBackUnchanged) {
  for (const std::string line : {"**Contents**: [Decision tables](#decision-tables) · [Rules](#rules)",
                                 "`tiny.gguf`: meets interactive (1823 [S336] tokens/s).",
                                 "`a\\|b` — `gpu` — run `r1` (call `2`) — `FAILED`: `bad \"<x>\" & more`",
                                 "52.9 [S1] – 60.0 [S2] (`95%` CI)", "**SIMULATED**", "— x \\| y", "2 \\*\\* 3 a\\*b"}) {
    EXPECT_EQ(Line(ParseInline(line)), line);
  }
}

}  // namespace
}  // namespace benchfleet::synthesis
