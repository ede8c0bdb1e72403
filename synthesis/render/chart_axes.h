// What every chart of the guide shares: the tick step of an axis, the text of a graduation and the
// series colours. Internal to synthesis/render; pure functions.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_CHART_AXES_H_
#define BENCHFLEET_SYNTHESIS_RENDER_CHART_AXES_H_

#include <cstddef>
#include <string>

#include "synthesis/render/render.h"

namespace benchfleet::synthesis {

// A "nice" tick step (1, 2 or 5 times a power of ten) for about `ticks` intervals up to `max`.
double NiceStep(double max, int ticks);

// A tick label: as many decimals as the step needs (0.05 -> 2), the language's separator. Ticks are
// axis graduations, not figures, so they carry no source and skip the 3-significant-digit rule.
std::string TickText(double v, double step, Lang lang);

// The colour of the i-th series of a chart (a ten-colour palette, repeated).
const char* SeriesColour(size_t i);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_CHART_AXES_H_
