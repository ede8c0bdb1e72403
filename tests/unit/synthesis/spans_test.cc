// Spans from the model (synthesis/render/spans.h): a catalogue template's own markup is read, its
// placeholders are replaced by spans that are never parsed. Exact spans and exact Markdown.
#include "synthesis/render/spans.h"

#include <string>

#include "gtest/gtest.h"
#include "synthesis/render/document.h"

namespace benchfleet::synthesis {
namespace {

std::string Markdown(const Spans& spans) {
  Document doc;
  doc.Paragraph(spans);
  return WriteMarkdown(doc);
}

TEST(FillSpansTest, ValuesReplacePlaceholdersInTextAndBoldAndAreNotParsed) {
  Spans spans = FillSpans("**{task}** on {machine}: see [{what}](#x)", {{"task", CodeSpans("a`b")},
                                                                         {"machine", TextSpans("**m** [x](y) \\")},
                                                                         {"what", TextSpans("it")}});
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].kind, Span::Kind::kBold);
  ASSERT_EQ(spans[0].children.size(), 1u);
  EXPECT_EQ(spans[0].children[0].kind, Span::Kind::kCode);
  EXPECT_EQ(spans[0].children[0].text, "a'b");
  EXPECT_EQ(spans[1].kind, Span::Kind::kText);
  EXPECT_EQ(spans[1].text, " on **m** [x](y) \\: see ");  // the value joins the template's text
  EXPECT_EQ(spans[2].kind, Span::Kind::kLink);
  EXPECT_EQ(PlainText(spans[2].children), "it");
  EXPECT_EQ(spans[2].target, "#x");
  EXPECT_EQ(Markdown(spans), "**`a'b`** on \\*\\*m\\*\\* [x\\](y) \\\\: see [it](#x)\n");
}

TEST(FillSpansTest, APlaceholderInsideAValueStaysAsWritten) {
  Spans spans = FillSpans("{a} and {b}", {{"a", TextSpans("{b}")}, {"b", TextSpans("B")}});
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].text, "{b} and B");
}

TEST(FillSpansTest, UnknownPlaceholdersAndEmptyValues) {
  Spans spans = FillSpans("{a}{unknown} {b}.", {{"a", {}}, {"b", CodeSpans("")}});
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].text, "{unknown} —.");
}

TEST(SpansTest, CodeCellAndJoin) {
  ASSERT_EQ(CodeSpans("x\ny|z").size(), 1u);
  EXPECT_EQ(CodeSpans("x\ny|z")[0].kind, Span::Kind::kCode);
  EXPECT_EQ(CodeSpans("x\ny|z")[0].text, "x y|z");
  EXPECT_EQ(CellSpans("a\n\tb  ")[0].text, "a b");
  EXPECT_TRUE(TextSpans("").empty());
  Spans joined = JoinSpans({CodeSpans("a"), TextSpans("b"), CodeSpans("c")}, ", ");
  EXPECT_EQ(Markdown(joined), "`a`, b, `c`\n");
  EXPECT_EQ(Markdown("(" + CodeSpans("x|y") + ")"), "(`x\\|y`)\n");
}

}  // namespace
}  // namespace benchfleet::synthesis
