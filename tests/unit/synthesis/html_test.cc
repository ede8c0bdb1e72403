// WriteHtml (synthesis/render/html.h): each block and span of the guide's document tree, escaping,
// heading ids, inline charts with unique ids, unknown images, collapsed sections, determinism.
// Exact expected bytes.
#include "synthesis/render/html.h"

#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "synthesis/analysis/table.h"
#include "synthesis/render/document.h"
#include "synthesis/render/render.h"

namespace benchfleet::synthesis {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The content of <main>, where the blocks go.
std::string Body(const std::string& html) {
  size_t begin = html.find("<main>\n");
  size_t end = html.rfind("</main>\n");
  if (begin == std::string::npos || end == std::string::npos) return "NO <main> IN " + html;
  return html.substr(begin + 7, end - begin - 7);
}

std::string BodyOf(const Document& document, const std::map<std::string, std::string>& charts = {}) {
  return Body(WriteHtml(document, charts, Lang::kEn));
}

// One text span.
Spans T(const std::string& text) { return {TextSpan(text)}; }

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = 0; (p = text.find(needle, p)) != std::string::npos; p += needle.size()) ++n;
  return n;
}

TEST(WriteHtmlTest, DocumentHeadAndTail) {
  Document doc;
  doc.Heading(1, {TextSpan("Guide <b>x</b> "), CodeSpan("a")});
  doc.Paragraph(T("text"));
  std::string html = WriteHtml(doc, {}, Lang::kFr);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n<html lang=\"fr\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                       "<title>Guide &lt;b&gt;x&lt;/b&gt; a</title>\n<style>\n",
                       0),
            0u)
      << html;
  EXPECT_EQ(Count(html, "<style>"), 1u);
  EXPECT_THAT(html, HasSubstr("body{margin:0;"));
  EXPECT_THAT(html, HasSubstr("font-size:16px;"));
  EXPECT_THAT(html, HasSubstr(".table-wrap{overflow-x:auto;"));
  EXPECT_THAT(html, HasSubstr("overflow-wrap:anywhere"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_EQ(html.substr(html.size() - 24), "</main>\n</body>\n</html>\n");
  EXPECT_EQ(Body(html), "<h1 id=\"guide-bxb-a\">Guide &lt;b&gt;x&lt;/b&gt; <code>a</code></h1>\n<p>text</p>\n");
  Document titled;
  titled.Heading(1, T("T"));
  EXPECT_THAT(WriteHtml(titled, {}, Lang::kEn), HasSubstr("<html lang=\"en\">\n"));
  Document untitled;
  untitled.Paragraph(T("no heading"));
  EXPECT_THAT(WriteHtml(untitled, {}, Lang::kEn), HasSubstr("<title>benchfleet</title>\n"));
}

TEST(WriteHtmlTest, HeadingsGetUniqueSlugs) {
  Document doc;
  doc.Heading(1, T("Sizing guide (SIMULATED)"));
  doc.Heading(2, T("Synthesis table"));
  doc.Heading(3, {TextSpan("Task "), CodeSpan("llama 7B Q4_0 pp512")});
  doc.Heading(4, T("Traps"));
  doc.Heading(2, T("Traps"));
  doc.Heading(3, T("Exécutions en échec — « x »"));
  EXPECT_EQ(BodyOf(doc),
            "<h1 id=\"sizing-guide-simulated\">Sizing guide (SIMULATED)</h1>\n"
            "<h2 id=\"synthesis-table\">Synthesis table</h2>\n"
            "<h3 id=\"task-llama-7b-q4_0-pp512\">Task <code>llama 7B Q4_0 pp512</code></h3>\n"
            "<h4 id=\"traps\">Traps</h4>\n"
            "<h2 id=\"traps-2\">Traps</h2>\n"
            "<h3 id=\"exécutions-en-échec-x\">Exécutions en échec — « x »</h3>\n");
  EXPECT_EQ(HeadingId("Appendix: machine conditions"), "appendix-machine-conditions");
}

TEST(WriteHtmlTest, ParagraphsAndInlineMarkup) {
  Document doc;
  doc.Paragraph({BoldSpan(T("Warning:")), TextSpan(" some records are "), CodeSpan("simulated"), TextSpan("; see "),
                 LinkSpan(T("sources"), "sources.csv#S3"),
                 TextSpan(".\nSecond line 52.9 [S3], a | b, a*b, 2 ** 3.")});
  doc.Paragraph(T("Next paragraph."));
  // A code span drops the one space padding both of its ends, as Markdown viewers do.
  doc.Paragraph({BoldSpan({TextSpan("bold "), CodeSpan("a**b"), TextSpan(" end")}), TextSpan(" "), CodeSpan(" a`b "),
                 TextSpan(" "), CodeSpan("  ")});
  EXPECT_EQ(BodyOf(doc),
            "<p><strong>Warning:</strong> some records are <code>simulated</code>; see "
            "<a href=\"sources.csv#S3\">sources</a>.\nSecond line 52.9 [S3], a | b, a*b, 2 ** 3.</p>\n"
            "<p>Next paragraph.</p>\n"
            "<p><strong>bold <code>a**b</code> end</strong> <code>a`b</code> <code>  </code></p>\n");
}

TEST(WriteHtmlTest, UnsafeLinksShowTheirTextOnly) {
  Document doc;
  doc.Paragraph({LinkSpan(T("a"), "javascript:alert(1)"), TextSpan(" "), LinkSpan(T("b"), "https://example.org/x_(y)"),
                 TextSpan(" "), LinkSpan(T("c"), "mailto:a@b"), TextSpan(" "), LinkSpan(T("d"), "DATA:x"),
                 TextSpan(" "), LinkSpan(T("e"), "#synthesis-table")});
  EXPECT_EQ(BodyOf(doc),
            "<p>a <a href=\"https://example.org/x_(y)\">b</a> <a href=\"mailto:a@b\">c</a> d "
            "<a href=\"#synthesis-table\">e</a></p>\n");
}

TEST(WriteHtmlTest, NestedBulletLists) {
  Document doc;
  doc.Paragraph(T("Intro:"));
  doc.List({ListItem{{CodeSpan("t"), TextSpan(" — run "), CodeSpan("r1"), TextSpan(" (call 2) — FAILED: x")}, {}},
            ListItem{T("second"), {ListItem{{TextSpan("nested "), BoldSpan(T("n"))}, {}}}},
            ListItem{T("third"), {}}});
  doc.List({});  // no items, no block
  doc.Paragraph(T("after"));
  EXPECT_EQ(BodyOf(doc),
            "<p>Intro:</p>\n<ul>\n<li><code>t</code> — run <code>r1</code> (call 2) — FAILED: x</li>\n"
            "<li>second\n<ul>\n<li>nested <strong>n</strong></li>\n</ul>\n</li>\n<li>third</li>\n</ul>\n"
            "<p>after</p>\n");
}

TEST(WriteHtmlTest, TablesInAScrollingBox) {
  Document doc;
  doc.Heading(2, T("Table"));
  doc.Table({T("Machine"), T("Metric"), T("Values")},
            {{{CodeSpan("a|b")}, T("tokens/s | x"), T("52.9 [S1], 30.0 [S2]")}, {T("short")}});
  EXPECT_EQ(BodyOf(doc),
            "<h2 id=\"table\">Table</h2>\n"
            "<div class=\"table-wrap\" tabindex=\"0\" role=\"region\" aria-labelledby=\"table\">\n<table>\n"
            "<thead>\n<tr><th>Machine</th><th>Metric</th><th>Values</th></tr>\n</thead>\n<tbody>\n"
            "<tr><td><code>a|b</code></td><td>tokens/s | x</td><td>52.9 [S1], 30.0 [S2]</td></tr>\n"
            "<tr><td>short</td><td></td><td></td></tr>\n"
            "</tbody>\n</table>\n</div>\n");
  // Before any heading, the box has no label.
  Document bare;
  bare.Table({T("A")}, {});
  EXPECT_EQ(BodyOf(bare),
            "<div class=\"table-wrap\" tabindex=\"0\" role=\"region\">\n<table>\n<thead>\n<tr><th>A</th></tr>\n"
            "</thead>\n<tbody>\n</tbody>\n</table>\n</div>\n");
}

TEST(WriteHtmlTest, EscapesAllText) {
  Document doc;
  doc.Heading(2, T("<script>alert(\"h\")</script>"));
  doc.Table({T("Task"), T("Error")}, {{{CodeSpan("<script>x</script>")}, T("<img src=x onerror=alert(1)> & \"q\"")}});
  doc.List({ListItem{{TextSpan("<b>bold</b> "), CodeSpan("a & b")}, {}}});
  doc.Paragraph({LinkSpan(T("<i>l</i>"), "a\"b.html"), ImageSpan("<x>", "c\".png")});
  EXPECT_EQ(BodyOf(doc),
            "<h2 id=\"scriptalerthscript\">&lt;script&gt;alert(&quot;h&quot;)&lt;/script&gt;</h2>\n"
            "<div class=\"table-wrap\" tabindex=\"0\" role=\"region\" aria-labelledby=\"scriptalerthscript\">\n"
            "<table>\n<thead>\n<tr><th>Task</th><th>Error</th></tr>\n</thead>\n<tbody>\n"
            "<tr><td><code>&lt;script&gt;x&lt;/script&gt;</code></td>"
            "<td>&lt;img src=x onerror=alert(1)&gt; &amp; &quot;q&quot;</td></tr>\n</tbody>\n</table>\n</div>\n"
            "<ul>\n<li>&lt;b&gt;bold&lt;/b&gt; <code>a &amp; b</code></li>\n</ul>\n"
            "<p><a href=\"a&quot;b.html\">&lt;i&gt;l&lt;/i&gt;</a><img src=\"c&quot;.png\" alt=\"&lt;x&gt;\"></p>\n");
}

v1::RunRecord MakeRun(const std::string& task, const std::string& id, v1::RunStatus::Code code) {
  v1::RunRecord r;
  r.set_run_id(id);
  r.set_task(task);
  r.set_agent_id("<i>host</i>");
  r.set_backend("llama-server");
  r.set_mode("gpu");
  r.set_phase(v1::PHASE_WARM);
  r.set_call_index(1);
  r.mutable_start_time()->set_seconds(100);
  r.mutable_status()->set_code(code);
  if (code == v1::RunStatus::CODE_FAILED) r.mutable_status()->set_message("bad \"<script>x</script>\" & more");
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
  auto* m = r.add_metrics();
  m->set_name("tokens_per_second");
  m->set_value(12.5);
  m->set_unit("tokens/s");
  m->set_headline(1);  // as the runner stamps its backend\'s declaration
  m->set_better(v1::BETTER_HIGHER);
  return r;
}

// A task name, a machine label and an error message with markup, through the real Markdown of
// the guide (whose wording other sections change: only the escaped forms are asserted).
TEST(WriteHtmlTest, EscapesMarkupFromRecords) {
  const std::string task = "<script>alert(1)</script>|x";
  Analysis a =
      Analyze({MakeRun(task, "r1", v1::RunStatus::CODE_OK), MakeRun(task, "r2", v1::RunStatus::CODE_FAILED)});
  std::string html = WriteHtml(RenderDocument(a, Lang::kEn), {}, Lang::kEn);
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<i>")));
  EXPECT_THAT(html, HasSubstr("<code>&lt;script&gt;alert(1)&lt;/script&gt;|x</code></h3>\n"));
  EXPECT_THAT(html, HasSubstr("&lt;i&gt;host&lt;/i&gt;"));
  EXPECT_THAT(html, HasSubstr("bad &quot;&lt;script&gt;x&lt;/script&gt;&quot; &amp; more"));
  // The charts' image alt texts carry the task name too; not in `charts`, they stay <img>.
  EXPECT_THAT(html, HasSubstr(" — &lt;script&gt;alert(1)&lt;/script&gt;|x\"></p>\n"));
}

const char kChart[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 800.0 416.0\" role=\"img\" "
    "aria-labelledby=\"chart-title chart-desc\" font-family=\"sans-serif\" font-size=\"12\">\n"
    "<title id=\"chart-title\">T &lt;1&gt;</title>\n<desc id=\"chart-desc\">D</desc>\n"
    "<defs><clipPath id=\"clip\"><rect width=\"1\" height=\"1\"/></clipPath></defs>\n"
    "<g clip-path=\"url(#clip)\"><use href=\"#clip\"/><use href=\"#elsewhere\"/></g>\n"
    "<text x=\"1\" y=\"2\" font-size=\"15\">id=&quot;chart-title&quot;</text>\n"
    "</svg>\n";

TEST(WriteHtmlTest, ChartsInlineWithUniqueIds) {
  std::map<std::string, std::string> charts = {{"a.svg", kChart}, {"b.svg", kChart}};
  Document doc;
  doc.Heading(3, T("Task"));
  doc.Figure("a.svg", "Figure — a | b");
  doc.Figure("b.svg", "Figure — b");
  std::string body = BodyOf(doc, charts);
  const std::string svg_body =
      " aria-labelledby=\"{P}chart-title {P}chart-desc\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<title id=\"{P}chart-title\">T &lt;1&gt;</title>\n<desc id=\"{P}chart-desc\">D</desc>\n"
      "<defs><clipPath id=\"{P}clip\"><rect width=\"1\" height=\"1\"/></clipPath></defs>\n"
      "<g clip-path=\"url(#{P}clip)\"><use href=\"#{P}clip\"/><use href=\"#elsewhere\"/></g>\n"
      "<text x=\"1\" y=\"2\" font-size=\"15\">id=&quot;chart-title&quot;</text>\n"
      "</svg>";
  auto figure = [&](const std::string& p, const std::string& caption) {
    std::string svg = svg_body;
    for (size_t pos = 0; (pos = svg.find("{P}", pos)) != std::string::npos;) svg.replace(pos, 3, p);
    return "<figure class=\"chart\">\n<div class=\"chart-scroll\" tabindex=\"0\" role=\"region\" aria-labelledby=\"" +
           p + "caption\">\n<svg style=\"min-width:800px\" xmlns=\"http://www.w3.org/2000/svg\" "
           "viewBox=\"0 0 800.0 416.0\" role=\"img\"" + svg + "\n</div>\n<figcaption id=\"" + p + "caption\">" +
           caption + "</figcaption>\n</figure>\n";
  };
  EXPECT_EQ(body, "<h3 id=\"task\">Task</h3>\n" + figure("fig1-", "Figure — a | b") + figure("fig2-", "Figure — b"));
  EXPECT_THAT(body, Not(HasSubstr("<?xml")));
  EXPECT_EQ(Count(body, "id=\"fig1-chart-title\""), 1u);
  EXPECT_EQ(Count(body, "id=\"fig2-chart-title\""), 1u);
  EXPECT_EQ(Count(body, " id=\"chart-title\""), 0u);
}

TEST(WriteHtmlTest, SmallChartTextWidensTheChart) {
  std::string svg = "<svg viewBox=\"0 0 600 300\" style=\"color:red\"><text font-size=\"9\">x</text></svg>";
  Document doc;
  doc.Figure("c.svg", "c");
  EXPECT_THAT(BodyOf(doc, {{"c.svg", svg}}),
              HasSubstr("<svg viewBox=\"0 0 600 300\" style=\"min-width:800px;color:red\"><text font-size=\"9\">"));
}

TEST(WriteHtmlTest, UnknownImageStaysAnImage) {
  Document doc;
  doc.Figure("chart-x.en.svg", "Memory <b>");
  doc.Paragraph({TextSpan("See "), ImageSpan("a", "b.png"), TextSpan(" inline.")});
  EXPECT_EQ(BodyOf(doc, {{"other.svg", kChart}}),
            "<p><img src=\"chart-x.en.svg\" alt=\"Memory &lt;b&gt;\"></p>\n"
            "<p>See <img src=\"b.png\" alt=\"a\"> inline.</p>\n");
  // A chart named mid-paragraph is not a figure either.
  Document inline_image;
  inline_image.Paragraph({TextSpan("x "), ImageSpan("a", "other.svg")});
  EXPECT_EQ(BodyOf(inline_image, {{"other.svg", kChart}}), "<p>x <img src=\"other.svg\" alt=\"a\"></p>\n");
  // Nor is a figure whose chart has no <svg element.
  Document not_svg;
  not_svg.Figure("broken.svg", "b");
  EXPECT_EQ(BodyOf(not_svg, {{"broken.svg", "<?xml?>"}}), "<p><img src=\"broken.svg\" alt=\"b\"></p>\n");
}

TEST(WriteHtmlTest, SameInputSameBytes) {
  Analysis a =
      Analyze({MakeRun("chat", "r1", v1::RunStatus::CODE_OK), MakeRun("chat", "r2", v1::RunStatus::CODE_FAILED)});
  for (Lang lang : {Lang::kFr, Lang::kEn}) {
    std::map<std::string, std::string> charts = {{ChartFileName("chat", lang), RenderCallIndexChart(a, "chat", lang)}};
    std::string first = WriteHtml(RenderDocument(a, lang), charts, lang);
    EXPECT_EQ(first, WriteHtml(RenderDocument(a, lang), charts, lang));
    EXPECT_THAT(first, HasSubstr("<figure class=\"chart\">"));
    EXPECT_THAT(first, HasSubstr("id=\"fig1-chart-title\""));
  }
}


TEST(WriteHtmlTest, ACollapsedHeadingMakesItsSectionADetailsElement) {
  Document doc;
  doc.Heading(2, T("A"));
  doc.CollapsedHeading(T("Appendix"));
  doc.Paragraph(T("Some text."));
  doc.Heading(3, T("Sub"));
  doc.Heading(2, T("B"));
  doc.Paragraph(T("End."));
  EXPECT_EQ(BodyOf(doc),
            "<h2 id=\"a\">A</h2>\n"
            "<details>\n<summary><h2 id=\"appendix\">Appendix</h2></summary>\n"
            "<p>Some text.</p>\n<h3 id=\"sub\">Sub</h3>\n</details>\n"
            "<h2 id=\"b\">B</h2>\n<p>End.</p>\n");
  // At the end of the page, the section is closed too; so is it by a level 1 heading.
  Document last;
  last.CollapsedHeading(T("Last"));
  last.Paragraph(T("Text."));
  EXPECT_EQ(BodyOf(last), "<details>\n<summary><h2 id=\"last\">Last</h2></summary>\n<p>Text.</p>\n</details>\n");
  Document closed_by_h1;
  closed_by_h1.CollapsedHeading(T("C"));
  closed_by_h1.Heading(1, T("Next"));
  EXPECT_EQ(BodyOf(closed_by_h1),
            "<details>\n<summary><h2 id=\"c\">C</h2></summary>\n</details>\n<h1 id=\"next\">Next</h1>\n");
}

}  // namespace
}  // namespace benchfleet::synthesis
