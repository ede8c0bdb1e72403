#include "synthesis/render/chart_axes.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "synthesis/render/inline_text.h"

namespace benchfleet::synthesis {

double NiceStep(double max, int ticks) {
  if (!(max > 0)) return 1;
  double raw = max / ticks;
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double f : {1.0, 2.0, 5.0, 10.0}) {
    if (f * p >= raw) return f * p;
  }
  return 10 * p;
}

// Enough decimals to tell ticks `step` apart. A step that is not a positive finite number (an
// axis up to a value near the largest double) gets none, and none needs more than a double's 15.
int TickDecimals(double step) {
  if (!(step > 0) || !std::isfinite(step)) return 0;
  return static_cast<int>(std::clamp(-std::floor(std::log10(step) + 1e-9), 0.0, 15.0));
}

std::string TickText(double v, double step, Lang lang) {
  std::string s = Fixed(v, TickDecimals(step));
  if (lang == Lang::kFr) std::replace(s.begin(), s.end(), '.', ',');
  return s;
}

const char* SeriesColour(size_t i) {
  static constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                             "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return kPalette[i % std::size(kPalette)];
}

}  // namespace benchfleet::synthesis
