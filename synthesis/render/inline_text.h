// Text shared by the render step's files: XML escaping, fixed-point text, the "figure [S12]"
// reference form, figure names and the French figure words. Plain strings (the charts' SVG text,
// and what spans.h turns into spans); none of it is Markdown. Internal to synthesis/render.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_INLINE_TEXT_H_
#define BENCHFLEET_SYNTHESIS_RENDER_INLINE_TEXT_H_

#include <string>
#include <string_view>
#include <vector>

#include "synthesis/analysis/sources.h"
#include "synthesis/render/render.h"

namespace benchfleet::synthesis {

// Fixed-point text of v with `decimals` digits, '.' separator, locale independent ("-0" -> "0").
std::string Fixed(double v, int decimals);

std::string Join(const std::vector<std::string>& parts, std::string_view sep);

// XML/HTML escaping of text and attribute values (& < > "); newlines and tabs become spaces.
std::string XmlEscape(std::string_view text);

// "52.9 [S3]": FormatNumber(f.value, lang) then the source id. Every figure of the guide is
// printed this way.
std::string Ref(const Figure& f, Lang lang);

// "5 [S7]": a count (a "count" source, or any whole number of runs) as a whole number.
std::string RefCount(const Figure& f);

// A figure's name with its unit, once: "generation tokens/s (tokens/s)" reads "generation tokens/s";
// "mean latency" in "s" reads "mean latency (s)".
std::string FigureName(const std::string& label, const std::string& unit);
// The same in the guide's language: label and unit through LocalWords.
std::string FigureName(const std::string& label, const std::string& unit, Lang lang);

// A figure's label or unit as the backends declare it (English), in `lang`: in French the known
// labels are translated ("generation tokens/s" -> "jetons générés/s", "mean latency" -> "latence
// moyenne"), and elsewhere "token(s)" reads "jeton(s)", "MiB"/"GiB" "Mio"/"Gio". English: as is.
std::string LocalWords(std::string_view text, Lang lang);

// Replaces "{name}" placeholders of a catalogue template by `values` (missing names stay as is):
// plain text, for the charts' SVG (escaped there); the guide's spans use FillSpans (spans.h).
std::string Fill(std::string_view tmpl, const std::vector<std::pair<std::string, std::string>>& values);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_INLINE_TEXT_H_
