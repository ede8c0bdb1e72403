// The guide as one self-contained HTML page: the guide's Markdown converted (the subset the render
// step writes: headings, paragraphs, lists, tables, inline code, bold, links, images), with each
// image that names a chart replaced by the chart's SVG inline. No script, no external resource;
// readable at 375 px wide (tables scroll inside their own box, never the page), no text under 12 px.
// Part of benchfleet_synthesis_render; pure function, thread-compatible.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_HTML_H_
#define BENCHFLEET_SYNTHESIS_RENDER_HTML_H_

#include <map>
#include <string>

#include "synthesis/render/render.h"

namespace benchfleet::synthesis {

// `charts`: SVG text by file name (the image targets of the Markdown). Text is escaped; an image
// whose target is not in `charts` stays an <img> link.
std::string RenderHtml(const std::string& markdown, const std::map<std::string, std::string>& charts, Lang lang);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_HTML_H_
