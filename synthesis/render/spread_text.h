// The spread beside a median in the guide's text: " (95% CI 40.6 [S4] – 42.7 [S5], CV 3.13 [S7] %)"
// from the analysis' Spread (spread_figures.h), and the note of "How to read" that says how it is
// computed, as spans (spans.h). Every number is a RefSpans() figure or, for the method's constants,
// a code span. Internal to synthesis/render; pure functions; thread-safe.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_SPREAD_TEXT_H_
#define BENCHFLEET_SYNTHESIS_RENDER_SPREAD_TEXT_H_

#include <optional>
#include <string>

#include "synthesis/analysis/spread_figures.h"
#include "synthesis/render/document.h"
#include "synthesis/render/render.h"

namespace benchfleet::synthesis {

// Returns " (`95%` CI 40.6 [S4] – 42.7 [S5], CV 3.13 [S7] %)", with what the spread has (the
// interval, the CV, or both), leading space included; "" without a spread.
Spans SpreadText(const std::optional<Spread>& spread, Lang lang);

// Returns the note of "How to read" on the spread, its constants from common/stats/spread.h.
Spans SpreadNote(Lang lang);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_SPREAD_TEXT_H_
