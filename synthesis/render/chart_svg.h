// What every chart of the guide draws with: the SVG document and its wrapped title, the width of a
// text (so that every label is placed inside the viewBox and beside, never over, another), text
// wrapping, value scales, markers and dashes, and the spreading of labels that would collide.
// Internal to synthesis/render; pure functions, thread-safe.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_CHART_SVG_H_
#define BENCHFLEET_SYNTHESIS_RENDER_CHART_SVG_H_

#include <cstddef>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "synthesis/analysis/table.h"
#include "synthesis/render/render.h"

namespace benchfleet::synthesis {

// Every chart is this many user units wide; the HTML page keeps its 12-unit text at 12 px.
inline constexpr double kChartWidth = 800;
inline constexpr double kFontSize = 12;
inline constexpr double kTitleSize = 15;
// Distance between the baselines of two lines of 12-unit text: their boxes (about 14 units high
// in DejaVu Sans) do not touch.
inline constexpr double kLineGap = 15;

// The advance width of `text` (UTF-8) in user units at `size`: DejaVu Sans' widths (Debian's
// sans-serif, the browser test's font), plus 6 % for fonts that run wider.
double TextWidth(std::string_view text, double size = kFontSize, bool bold = false);

// `text` in lines no wider than `width`, broken after spaces and separators ("/", ";", ",", "·",
// "=", "-", "_"), and inside a word that is wider than a line. At most `max_lines`: the last one
// kept then ends with "…".
std::vector<std::string> WrapText(std::string_view text, double width, size_t max_lines, double size = kFontSize,
                                  bool bold = false);
// `text` on one line no wider than `width`, cut with "…" when it is wider.
std::string FitText(std::string_view text, double width, double size = kFontSize, bool bold = false);

// "12.5" with one decimal: the coordinates of the SVG.
std::string Num(double v);

// <text x y [attrs]>escaped text</text>
std::string Text(double x, double y, std::string_view text, std::string_view attrs = {});

// A chart's title, wrapped to the chart's width (at most three lines).
struct ChartHeader {
  std::vector<std::string> lines;
  double bottom = 0;  // where the chart's content may start
};
ChartHeader MakeHeader(std::string_view title);

// The parts every line of a chart shares ("All: llama-server"), centred under the title, wrapped to
// two lines at most, appended to `body` from `y` on; returns the y below them. `prefix` is the
// catalogue's "All: " (ChartMessages::shared); an empty `shared` writes nothing.
double AppendSharedLine(std::string_view prefix, const std::string& shared, double y, std::string* body);

// The whole SVG: root with viewBox 0 0 kChartWidth height and aria-labelledby "<id>-title <id>-desc",
// <title>, <desc>, a white background, the header's lines, then `body`.
std::string SvgDocument(double height, const std::string& id, std::string_view title, std::string_view desc,
                        const ChartHeader& header, const std::string& body);

// A value axis from `lo` to `hi`: whole steps (1, 2 or 5 times a power of ten) covering [vmin, vmax],
// from zero when every value is positive and zero is not too far below them.
struct Scale {
  double lo = 0, hi = 1, step = 0.2;
  double At(double v, double from, double to) const { return from + (v - lo) / (hi - lo) * (to - from); }
  int Ticks() const;  // the number of intervals
};
Scale ValueScale(double vmin, double vmax, int ticks = 5);
// The width of the widest graduation text of `s`.
double TicksWidth(const Scale& s, Lang lang);
// A vertical value axis on the plot [left, right] x [top, bottom]: the axis line, grey lines
// across at each graduation and its value right-aligned left of the axis.
std::string VerticalAxis(const Scale& s, double left, double right, double top, double bottom, Lang lang);
// A horizontal value axis: the axis line at `bottom`, grey lines up to `top`, values under it.
std::string HorizontalAxis(const Scale& s, double left, double right, double top, double bottom, Lang lang);
// An axis title: centred under a horizontal axis (at baseline y), or turned a quarter left at x
// for a vertical one; cut with "…" to `length`.
std::string AxisTitle(std::string_view text, double x, double y, double length, bool vertical);

// The marker of a run by phase: a filled circle (warm), a square (cold), a triangle (other phases).
// `inner` goes inside the element (its <title>).
enum class MarkerShape { kCircle, kSquare, kTriangle, kDiamond };
MarkerShape ShapeOfPhase(v1::Phase phase);
// `scale` enlarges it (a marker that a later line's marker covers shows as a ring around it).
std::string Marker(MarkerShape shape, double x, double y, const std::string& inner, std::string_view attrs = {},
                   double scale = 1);

// The dash pattern of the i-th series ("" solid, then "7 3", "2 3", ...), repeated.
const char* SeriesDash(size_t i);

// For each line (its points in user units, drawn in order), how many of the later lines run along
// one of its segments or through one of its points (within 2 units): the line and its markers are
// then drawn that much wider, so that a line another one covers stays visible around it.
using Polyline = std::vector<std::pair<double, double>>;
std::vector<int> CoveredBy(const std::vector<Polyline>& lines);
// <polyline fill="none" stroke-width [stroke-dasharray] points>; nothing for fewer than two points.
std::string PolylineElement(const Polyline& points, double width, std::string_view dash);

// Positions for labels wanted at `want` (any order), each at least `gap` from the next, within
// [lo, hi] when there is room (else from lo on), moved as little as possible: result[i] is for
// want[i]. Labels keep their order.
std::vector<double> SpreadLabels(const std::vector<double>& want, double gap, double lo, double hi);
// The same for labels of different heights: want[i] and the result are the tops of the labels.
std::vector<double> SpreadBlocks(const std::vector<double>& want, const std::vector<double>& heights, double lo,
                                 double hi);

// The names of a chart's lines in its right margin: each (on one or two lines, then cut with "…")
// at the height of its line's end, spread apart where ends are close, within [lo, hi] when there
// is room (else on down from lo), joined to its line's end by a thin leader in the line's colour
// and dash.
struct EndLabel {
  double x_end = 0, y_end = 0;  // the line's last point
  std::string text;
  std::string colour;
  std::string dash;
};
std::string EndLabels(const std::vector<EndLabel>& labels, double label_x, double label_width, double lo, double hi);
// The height the names `texts` take in a margin `width` wide, one above the other.
double EndLabelsHeight(const std::vector<std::string>& texts, double width);

// How the cells of a chart differ: the parts of their keys that are not the same in every one
// (machine, backend, mode, and within the matrix each key whose value differs), so that a label
// names only those, and the chart says the shared parts once.
struct KeyParts {
  bool machine = false, backend = false, mode = false;
  std::vector<std::string> matrix_keys;  // keys whose value differs (or that some cells lack)
};
KeyParts DifferingParts(const std::vector<const CellKey*>& keys);
// The label of `key` from its differing parts, joined by " · " (the phase never: the marker says it).
// Empty when nothing differs.
std::string SettingLabel(const CellKey& key, const KeyParts& parts);
// The parts every key shares, e.g. "llama-server · gpu · n_predict=128"; empty when none.
std::string SharedLabel(const CellKey& any, const KeyParts& parts);

// The value of `key` in a "k=v;k=v" matrix string; empty when absent.
std::string MatrixValue(const std::string& matrix, const std::string& key);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_CHART_SVG_H_
