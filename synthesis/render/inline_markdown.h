// The message catalogue's light Markdown as spans: the catalogue (messages_*.cc) words the guide in
// inline Markdown (`code`, **bold**, [text](link)); ParseInline turns one such constant into the
// spans of a block (document.h). Called through Wording() and FillSpans() (spans.h) on catalogue
// constants only: a value from the data is never parsed. Internal to synthesis/render; pure
// function, thread-safe.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_INLINE_MARKDOWN_H_
#define BENCHFLEET_SYNTHESIS_RENDER_INLINE_MARKDOWN_H_

#include <string_view>

#include "synthesis/render/document.h"

namespace benchfleet::synthesis {

// `code` spans (any run of backticks; "\|" inside is a pipe, as in a table cell), **bold**,
// [text](link), ![alt](file) and backslash escapes of ASCII punctuation; everything else, markup
// that does not close included, is text. A code span keeps its characters as written (the HTML
// writer drops the one space that pads both ends).
Spans ParseInline(std::string_view markdown);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_INLINE_MARKDOWN_H_
