// The guide's inline spans built from the model (document.h): a value from the data (a machine,
// task, label, unit, file name, record text, a figure) becomes a span as it is and is never read
// as Markdown; only the catalogue's own wording (messages_*.cc, translator-authored constants) is
// read as light Markdown, and its "{name}" placeholders are replaced by spans (FillSpans).
// Internal to synthesis/render; pure functions, thread-safe.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_SPANS_H_
#define BENCHFLEET_SYNTHESIS_RENDER_SPANS_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "synthesis/analysis/sources.h"
#include "synthesis/render/document.h"
#include "synthesis/render/render.h"

namespace benchfleet::synthesis {

// Placeholder name -> the spans that replace "{name}".
using SpanValues = std::vector<std::pair<std::string, Spans>>;

// A catalogue constant (never a string holding a value) read as inline Markdown: `code`, **bold**,
// [text](link), backslash escapes (ParseInline, inline_markdown.h).
Spans Wording(std::string_view catalogue);

// A catalogue template read as Wording(), each "{name}" of its text (in bold text and a link's label
// too) replaced by the spans of `values`, inserted as they are: a value is never parsed, and a
// "{name}" inside a value stays as written. Unknown placeholders stay as text.
Spans FillSpans(std::string_view tmpl, const SpanValues& values);

// Text as it is, one span (none when empty): asterisks, brackets, backslashes and backticks stay
// characters; the writers escape what they must.
Spans TextSpans(std::string_view text);
// Text for a table cell or one line: newlines and tabs become one space, trailing spaces dropped.
Spans CellSpans(std::string_view text);
// A code span holding verbatim text (identifiers, versions, dates, record text): backticks become
// "'", newlines spaces; empty text gives the text "—". The guide's number test ignores code spans.
Spans CodeSpans(std::string_view text);
// "52.9 [S3]" (Ref, inline_text.h) and "5 [S7]" (RefCount) as text.
Spans RefSpans(const Figure& f, Lang lang);
Spans RefCountSpans(const Figure& f);

// `parts` with the text `sep` between them.
Spans JoinSpans(const std::vector<Spans>& parts, std::string_view sep);

// Concatenation in reading order; a string operand is text (never parsed). Adjacent text spans
// join, so the tree is the one a parser would give.
Spans operator+(Spans a, const Spans& b);
Spans operator+(Spans a, std::string_view text);
Spans operator+(std::string_view text, const Spans& b);
Spans& operator+=(Spans& a, const Spans& b);
Spans& operator+=(Spans& a, std::string_view text);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_SPANS_H_
