// The render step's inline text as spans: the message catalogue words the guide in inline Markdown
// (`code`, **bold**, [text](link)) and the section writers fill its templates with Code() and Ref()
// pieces (inline_text.h); ParseInline turns one such line into the spans of a block
// (document.h). Internal to synthesis/render; pure function, thread-safe.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_INLINE_MARKDOWN_H_
#define BENCHFLEET_SYNTHESIS_RENDER_INLINE_MARKDOWN_H_

#include <string>
#include <string_view>
#include <vector>

#include "synthesis/render/document.h"

namespace benchfleet::synthesis {

// `code` spans (any run of backticks; "\|" inside is a pipe, as in a table cell), **bold**,
// [text](link), ![alt](file) and backslash escapes of ASCII punctuation; everything else, markup
// that does not close included, is text. A code span keeps its characters as written (the HTML
// writer drops the one space that pads both ends).
Spans ParseInline(std::string_view markdown);
// A list item (without a nested list) of one line.
ListItem ParseItem(std::string_view markdown);
// The cells of a table row, each one line.
std::vector<Spans> ParseCells(const std::vector<std::string>& cells);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_INLINE_MARKDOWN_H_
