// The guide as one self-contained HTML page, written from its document tree (document.h) beside
// the Markdown: headings, paragraphs, lists, tables and inline markup, each figure of a known chart
// replaced by the chart's SVG inline, the collapsed appendix a <details> element. No script, no
// external resource; readable at 375 px wide (tables scroll inside their own box, never the page),
// no text under 12 px. Called by the guide (guide.cc). Part of benchfleet_synthesis_render; pure
// function, thread-compatible.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_HTML_H_
#define BENCHFLEET_SYNTHESIS_RENDER_HTML_H_

#include <map>
#include <string>
#include <string_view>

#include "synthesis/render/document.h"
#include "synthesis/render/render.h"

namespace benchfleet::synthesis {

// `charts`: SVG text by file name (the figures' chart names). Text is escaped; a figure whose chart
// is not in `charts` stays an <img> link. The page's <title> is the first level 1 heading's text.
std::string WriteHtml(const Document& document, const std::map<std::string, std::string>& charts, Lang lang);

// The id WriteHtml gives a heading of this text (its first occurrence): a link "#id" to the
// section.
std::string HeadingId(std::string_view heading_text);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_HTML_H_
