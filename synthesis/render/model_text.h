// The words the model sections share (render_model.cc, render_decision.cc): a verbatim word or code
// span, an item's name, a setting, a figure with its unit, as spans (spans.h): values are never
// parsed. Internal to synthesis/render.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_MODEL_TEXT_H_
#define BENCHFLEET_SYNTHESIS_RENDER_MODEL_TEXT_H_

#include <string>
#include <string_view>

#include "synthesis/analysis/table.h"
#include "synthesis/render/document.h"
#include "synthesis/render/messages_model.h"
#include "synthesis/render/render.h"

namespace benchfleet::synthesis {

// Verbatim text from the targets or the records shown as a word (a use name, a currency, a unit):
// plain when it holds no digit, else a code span.
Spans Word(std::string_view text);
// A code span, or the catalogue's "—" for empty text.
Spans CodeOrNone(const std::string& text, const ModelMessages& m);
// "image"/"images", "token"/"tokens" ("jeton"/"jetons")...; unknown items verbatim.
Spans ItemWord(const std::string& item, bool plural, const ModelMessages& m);
// A setting as one code span: machine / backend / mode / matrix (empty parts left out), "(cold
// runs only)" after a cold one.
Spans Setting(const CellKey& key, const ModelMessages& m);
// "28.0 [S3] tokens/s".
Spans FigureWithUnit(const Figure& f, Lang lang);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_MODEL_TEXT_H_
