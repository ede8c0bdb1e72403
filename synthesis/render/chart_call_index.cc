// The figure by call index (render.h, RenderCallIndexChart): one named line per setting
// (machine / backend / mode / matrix), its runs marked by phase, the name written at the line's end.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "synthesis/render/chart_axes.h"
#include "synthesis/render/chart_svg.h"
#include "synthesis/render/inline_text.h"
#include "synthesis/render/messages.h"
#include "synthesis/render/messages_charts.h"
#include "synthesis/render/render.h"
#include "synthesis/render/run_bins.h"

namespace benchfleet::synthesis {
namespace {

// One line of the chart: the cells of one setting, every phase.
struct Series {
  std::vector<const Cell*> cells;
  std::string label;
};

// A point of a line: a run, or a bin's median with its range.
struct Point {
  double x = 0, value = 0;
  v1::Phase phase = v1::PHASE_UNSPECIFIED;
  std::string tip;
  bool binned = false;
  double min = 0, max = 0;
};

bool SameSetting(const CellKey& a, const CellKey& b) {
  return a.task == b.task && a.machine == b.machine && a.backend == b.backend && a.mode == b.mode &&
         a.matrix == b.matrix;
}

// The x-axis graduations of the call indices [lo, hi]: a whole step whose labels do not touch.
uint32_t CallStep(uint32_t lo, uint32_t hi, double plot_width) {
  const double label = TextWidth(std::to_string(hi)) + 12;
  for (uint32_t step : {1u, 2u, 5u, 10u, 20u, 25u, 50u, 100u, 200u, 250u, 500u, 1000u, 2000u, 5000u, 10000u,
                        20000u, 50000u, 100000u, 200000u, 500000u, 1000000u}) {
    const double count = std::floor(static_cast<double>(hi - lo) / step) + 1;
    if (count <= 1 || plot_width / std::max(1.0, static_cast<double>(hi - lo) / step) >= label) return step;
  }
  return std::max<uint32_t>(1, hi - lo);
}

}  // namespace

std::string RenderCallIndexChart(const Analysis& analysis, const std::string& task, Lang lang) {
  const Messages& m = lang == Lang::kFr ? MessagesFr() : MessagesEn();
  const ChartMessages& cm = ChartMessagesOf(lang);

  std::vector<Series> series;
  std::vector<const CellKey*> keys;
  std::set<std::string> metrics;
  std::set<v1::Phase> phases;
  for (const Cell& c : analysis.cells) {
    // A cell without an accepted run (all excluded or failed) draws nothing: no line to name.
    if (c.key.task != task || c.runs.empty()) continue;
    keys.push_back(&c.key);
    metrics.insert(FigureName(c.label, c.unit));
    if (!c.runs.empty()) phases.insert(c.key.phase);
    if (series.empty() || !SameSetting(series.back().cells.front()->key, c.key)) series.emplace_back();
    series.back().cells.push_back(&c);
  }
  const KeyParts parts = DifferingParts(keys);
  const std::string shared = keys.empty() ? "" : SharedLabel(*keys.front(), parts);
  for (Series& s : series) {
    s.label = SettingLabel(s.cells.front()->key, parts);
    // A task of one setting: the line is named by its machine (the shared parts say the rest).
    if (s.label.empty()) s.label = s.cells.front()->key.machine;
  }

  // The points of every line, binned per cell above kBinRunsAbove runs.
  std::vector<std::vector<Point>> points(series.size());
  std::vector<std::string> binned_note(series.size());
  uint32_t xmin = 0, xmax = 0;
  double vmin = 0, vmax = 0;
  bool any = false;
  for (size_t si = 0; si < series.size(); ++si) {
    for (const Cell* c : series[si].cells) {
      for (const RunFigure& rf : c->runs) {
        if (!any) {
          xmin = xmax = rf.call_index;
          vmin = vmax = rf.figure.value;
        }
        xmin = std::min(xmin, rf.call_index);
        xmax = std::max(xmax, rf.call_index);
        vmin = std::min(vmin, rf.figure.value);
        vmax = std::max(vmax, rf.figure.value);
        any = true;
      }
      if (c->runs.size() > kBinRunsAbove) {
        std::vector<std::pair<uint32_t, double>> in;
        in.reserve(c->runs.size());
        for (const RunFigure& rf : c->runs) in.emplace_back(rf.call_index, rf.figure.value);
        const std::vector<RunBin> bins = BinByKey(std::move(in));
        for (const RunBin& b : bins) {
          const std::string calls = b.first_key == b.last_key
                                        ? std::to_string(b.first_key)
                                        : std::to_string(b.first_key) + "–" + std::to_string(b.last_key);
          Point p{(b.first_key + b.last_key) / 2.0, b.median, c->key.phase,
                  std::string(m.call) + " " + calls + ": " + std::string(m.dist_median) + " " +
                      FormatNumber(b.median, lang) + ", " + std::string(m.dist_min) + " " + FormatNumber(b.min, lang) +
                      ", " + std::string(m.dist_max) + " " + FormatNumber(b.max, lang) + " (" +
                      std::to_string(b.runs) + " " + std::string(m.runs_word) + ", sources.csv)",
                  true, b.min, b.max};
          points[si].push_back(std::move(p));
        }
        binned_note[si] = " (" + std::string(m.binned_about) + " " +
                          std::to_string(RunsPerMark(c->runs.size(), bins.size())) + " " +
                          std::string(m.binned_per_mark) + ")";
      } else {
        for (const RunFigure& rf : c->runs) {
          points[si].push_back(Point{static_cast<double>(rf.call_index), rf.figure.value, c->key.phase,
                                     std::string(m.call) + " " + std::to_string(rf.call_index) + ": " +
                                         FormatNumber(rf.figure.value, lang) + " [" + rf.figure.source_id + "]"});
        }
      }
    }
    std::stable_sort(points[si].begin(), points[si].end(), [](const Point& a, const Point& b) { return a.x < b.x; });
  }

  std::string title = std::string(m.chart_title) + " — " + task;
  if (analysis.simulated) title += " (" + std::string(m.simulated) + ")";
  const ChartHeader header = MakeHeader(title);
  std::string body;
  double y = header.bottom;
  y = AppendSharedLine(cm.shared, shared, y, &body);
  // The phase key: each marker next to its word, on one line.
  {
    double x = 40;
    for (v1::Phase phase : phases) {
      const std::string_view word = phase == v1::PHASE_WARM   ? cm.key_warm
                                    : phase == v1::PHASE_COLD ? cm.key_cold
                                                              : cm.key_other;
      body += Marker(ShapeOfPhase(phase), x, y + 8, "", "class=\"key\" fill=\"#444444\"");
      body += Text(x + 9, y + 12, word, "fill=\"#444444\"");
      x += 9 + TextWidth(word) + 24;
    }
    y += 22;
  }

  // Layout: tick values at the left, the names of the lines in the right margin.
  const Scale ys = ValueScale(vmin, vmax);
  const double left = 20 + 8 + TicksWidth(ys, lang) + 8;
  double label_width = 0;
  for (size_t si = 0; si < series.size(); ++si) {
    label_width = std::max(label_width, TextWidth(series[si].label + binned_note[si]));
  }
  label_width = std::min(label_width, 260.0);
  const double label_x = kChartWidth - 10 - label_width;
  const double right = label_x - 26;
  const double top = y + 8;
  std::vector<std::string> names_text;
  for (size_t si = 0; si < series.size(); ++si) names_text.push_back(series[si].label + binned_note[si]);
  const double height = std::max(260.0, EndLabelsHeight(names_text, label_width) + 10);
  const double bottom = top + height;

  double xlo = xmin, xhi = xmax;
  if (xmax == xmin) {
    xlo -= 0.5;
    xhi += 0.5;
  }
  auto X = [&](double i) { return left + (i - xlo) / (xhi - xlo) * (right - left); };
  auto Y = [&](double v) { return ys.At(v, bottom, top); };

  body += VerticalAxis(ys, left, right, top, bottom, lang);
  body += "<line x1=\"" + Num(left) + "\" y1=\"" + Num(bottom) + "\" x2=\"" + Num(right) + "\" y2=\"" + Num(bottom) +
          "\" stroke=\"#000000\"/>\n";
  body += "<g class=\"x-ticks\">\n";
  const uint32_t xstep = CallStep(xmin, xmax, right - left);
  for (uint32_t i = xmin; i <= xmax; i += xstep) {
    body += "<line x1=\"" + Num(X(i)) + "\" y1=\"" + Num(bottom) + "\" x2=\"" + Num(X(i)) + "\" y2=\"" +
            Num(bottom + 5) + "\" stroke=\"#000000\"/>\n";
    body += Text(X(i), bottom + 18, std::to_string(i), "text-anchor=\"middle\"");
    if (xmax - i < xstep) break;
  }
  body += "</g>\n";
  body += AxisTitle(m.x_axis, (left + right) / 2, bottom + 36, right - left, false);
  std::vector<std::string> metric_list(metrics.begin(), metrics.end());
  body += AxisTitle(Join(metric_list, ", "), 18, (top + bottom) / 2, height, true);

  // The lines, then their names at their ends, spread apart where the ends are close.
  std::vector<double> end_y(series.size(), top);
  std::vector<Polyline> lines(series.size());
  for (size_t si = 0; si < series.size(); ++si) {
    for (const Point& p : points[si]) lines[si].emplace_back(X(p.x), Y(p.value));
  }
  // A line that later ones cover is drawn wider, its markers larger: it shows around them.
  const std::vector<int> covered = CoveredBy(lines);
  for (size_t si = 0; si < series.size(); ++si) {
    const std::string colour = SeriesColour(si);
    const std::string dash = SeriesDash(si);
    body += "<g class=\"cell\" stroke=\"" + colour + "\" fill=\"" + colour + "\">\n";
    body += "<title>" + XmlEscape(series[si].label + binned_note[si]) + "</title>\n";
    std::string line;
    for (const auto& [px, py] : lines[si]) {
      if (!line.empty()) line += ' ';
      line += Num(px) + "," + Num(py);
    }
    body += "<polyline fill=\"none\" stroke-width=\"" + Num(2 + 3.0 * covered[si]) + "\"" +
            (dash.empty() ? std::string() : " stroke-dasharray=\"" + dash + "\"") + " points=\"" + line + "\"/>\n";
    for (const Point& p : points[si]) {
      if (p.binned) {
        body += "<line x1=\"" + Num(X(p.x)) + "\" y1=\"" + Num(Y(p.min)) + "\" x2=\"" + Num(X(p.x)) + "\" y2=\"" +
                Num(Y(p.max)) + "\" stroke-width=\"1\"/>\n";
      }
      body += Marker(ShapeOfPhase(p.phase), X(p.x), Y(p.value), "<title>" + XmlEscape(p.tip) + "</title>",
                     "class=\"run\"", 1 + 0.5 * covered[si]);
    }
    body += "</g>\n";
    if (!points[si].empty()) end_y[si] = Y(points[si].back().value);
  }
  std::vector<EndLabel> names;
  for (size_t si = 0; si < series.size(); ++si) {
    const double x_end = points[si].empty() ? right : X(points[si].back().x);
    names.push_back(EndLabel{x_end, end_y[si], series[si].label + binned_note[si], SeriesColour(si), SeriesDash(si)});
  }
  body += EndLabels(names, label_x, label_width, top, bottom);

  std::string desc = std::string(cm.call_desc);
  return SvgDocument(bottom + 50, "chart", title, desc, header, body);
}

}  // namespace benchfleet::synthesis
