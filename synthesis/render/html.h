// The guide as one self-contained HTML page: the guide's Markdown converted (the subset the render
// step writes: headings, paragraphs, lists, tables, inline code, bold, links, images), with each
// image that names a chart replaced by the chart's SVG inline. No script, no external resource;
// readable at 375 px wide (tables scroll inside their own box, never the page), no text under 12 px.
// Part of benchfleet_synthesis_render; pure function, thread-compatible.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_HTML_H_
#define BENCHFLEET_SYNTHESIS_RENDER_HTML_H_

#include <map>
#include <string>
#include <string_view>

#include "synthesis/render/render.h"

namespace benchfleet::synthesis {

// `charts`: SVG text by file name (the image targets of the Markdown). Text is escaped; an image
// whose target is not in `charts` stays an <img> link.
//
// A line "<!-- collapsed -->" (hidden by Markdown viewers) before a "## " heading makes that
// section, up to the next "## " heading, a <details> element whose <summary> is the heading.
std::string RenderHtml(const std::string& markdown, const std::map<std::string, std::string>& charts, Lang lang);

// The id RenderHtml gives a heading of this text (its first occurrence): a Markdown link
// "[text](#id)" to the section.
std::string HeadingId(std::string_view heading_text);

// The marker line of a collapsed section.
inline constexpr std::string_view kCollapsedMarker = "<!-- collapsed -->";

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_HTML_H_
