// Sweeps as curves (render.h, RenderSweepChart): for each numeric matrix axis that a setting ran
// at two values or more, the main figure against the axis value (each run a dot, a line through
// the medians) and, when the cells carry a latency among their further figures, the latency
// against the main figure.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
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

namespace benchfleet::synthesis {
namespace {

std::optional<double> ParseNumber(const std::string& s) {
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// "k=v;k=v" without the pair of `key`.
std::string MatrixWithout(const std::string& matrix, const std::string& key) {
  std::string out;
  size_t from = 0;
  while (from < matrix.size()) {
    size_t end = matrix.find(';', from);
    if (end == std::string::npos) end = matrix.size();
    const std::string pair = matrix.substr(from, end - from);
    if (pair.substr(0, pair.find('=')) != key) out += (out.empty() ? "" : ";") + pair;
    from = end + 1;
  }
  return out;
}

// The cells the verdicts judge (guide_model.h): warm ones, and cold ones of a setting that has no
// warm cell.
std::vector<const Cell*> JudgedCells(const Analysis& analysis, const std::string& task) {
  std::vector<const Cell*> out;
  for (const Cell& c : analysis.cells) {
    if (c.key.task != task || c.runs.empty()) continue;
    if (IsJudgedCell(c, analysis)) out.push_back(&c);
  }
  return out;
}

double MedianOf(const Cell& c) {
  if (c.median) return c.median->value;
  std::vector<double> v;
  for (const RunFigure& rf : c.runs) v.push_back(rf.figure.value);
  std::sort(v.begin(), v.end());
  return Quantile(v, 0.5);
}

// "median 4100 [S12]" from the cell's median source, else "median of 3 runs: 4100 [S1, S2, S3]".
std::string MedianText(const Cell& c, Lang lang, const Messages& m, const ChartMessages& cm) {
  if (c.median) return std::string(m.dist_median) + " " + Ref(*c.median, lang);
  std::vector<std::string> ids;
  for (const RunFigure& rf : c.runs) ids.push_back(rf.figure.source_id);
  return std::string(cm.median_of) + " " + std::to_string(c.runs.size()) + " " + std::string(m.runs_word) + ": " +
         FormatNumber(MedianOf(c), lang) + " [" + Join(ids, ", ") + "]";
}

// One curve: the cells of one setting (all but the axis) in axis order.
struct SweepPoint {
  double value;
  std::string text;  // the matrix value verbatim
  const Cell* cell;
};
struct Curve {
  std::vector<SweepPoint> points;
  std::string label;
};

// A latency of a cell: its median, else its range's middle with the range.
struct Latency {
  double value = 0, min = 0, max = 0;
  bool range = false;
  std::string tip;
};

std::optional<Latency> LatencyOf(const Cell& c, const std::string& name, Lang lang, const ChartMessages& cm,
                                 const Messages& m) {
  for (const FurtherFigure& f : c.further) {
    if (f.name != name) continue;
    if (f.median) return Latency{f.median->value, 0, 0, false, std::string(m.dist_median) + " " + Ref(*f.median, lang)};
    if (f.min && f.max) {
      if (f.min->value == f.max->value) return Latency{f.min->value, 0, 0, false, Ref(*f.min, lang)};
      return Latency{(f.min->value + f.max->value) / 2, f.min->value, f.max->value, true,
                     std::string(cm.sweep_range) + " " + Ref(*f.min, lang) + " – " + Ref(*f.max, lang)};
    }
  }
  return std::nullopt;
}

bool IsLatencyUnit(const std::string& unit) { return unit == "s" || unit == "ms"; }

// Ticks of an axis of swept values: the values themselves when few and far enough apart.
struct XTicks {
  std::vector<double> at;
  Scale scale;
  bool exact = false;
};

}  // namespace

std::string SweepChartFileName(const std::string& task, Lang lang) {
  return "chart-" + TaskSlug(task) + "-sweep." + std::string(LangCode(lang)) + ".svg";
}

std::vector<std::string> SweepAxes(const Analysis& analysis, const std::string& task) {
  const std::vector<const Cell*> cells = JudgedCells(analysis, task);
  std::vector<std::string> keys;
  std::set<std::string> not_numeric;
  for (const Cell* c : cells) {
    size_t from = 0;
    const std::string& mx = c->key.matrix;
    while (from < mx.size()) {
      size_t end = mx.find(';', from);
      if (end == std::string::npos) end = mx.size();
      const std::string pair = mx.substr(from, end - from);
      const size_t eq = pair.find('=');
      const std::string k = pair.substr(0, eq);
      if (eq == std::string::npos || !ParseNumber(pair.substr(eq + 1))) not_numeric.insert(k);
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
      from = end + 1;
    }
  }
  std::vector<std::string> axes;
  for (const std::string& k : keys) {
    if (not_numeric.count(k) != 0) continue;
    // Two values or more for one setting (the rest of its key the same).
    std::map<std::string, std::set<double>> values;
    for (const Cell* c : cells) {
      const std::string v = MatrixValue(c->key.matrix, k);
      if (v.empty()) continue;
      const std::string setting = c->key.machine + "\n" + c->key.backend + "\n" + c->key.mode + "\n" +
                                  MatrixWithout(c->key.matrix, k) + "\n" + std::to_string(c->key.phase);
      values[setting].insert(*ParseNumber(v));
    }
    for (const auto& [setting, vs] : values) {
      if (vs.size() >= 2) {
        axes.push_back(k);
        break;
      }
    }
  }
  return axes;
}

std::string RenderSweepChart(const Analysis& analysis, const std::string& task, Lang lang) {
  const Messages& m = lang == Lang::kFr ? MessagesFr() : MessagesEn();
  const ChartMessages& cm = ChartMessagesOf(lang);
  const std::vector<std::string> axes = SweepAxes(analysis, task);
  if (axes.empty()) return "";
  const std::vector<const Cell*> cells = JudgedCells(analysis, task);
  const Cell& first = *cells.front();

  std::string title = Fill(cm.sweep_title, {{"axis", Join(axes, ", ")}}) + " — " + task;
  if (analysis.simulated) title += " (" + std::string(m.simulated) + ")";
  const ChartHeader header = MakeHeader(title);
  std::string body;
  double y = header.bottom;

  for (const std::string& axis : axes) {
    // The curves of this axis: settings with two values or more.
    std::map<std::string, Curve> by_setting;
    std::vector<std::string> order;
    for (const Cell* c : cells) {
      const std::string v = MatrixValue(c->key.matrix, axis);
      if (v.empty() || c->metric != first.metric) continue;
      const std::string setting = c->key.machine + "\n" + c->key.backend + "\n" + c->key.mode + "\n" +
                                  MatrixWithout(c->key.matrix, axis) + "\n" + std::to_string(c->key.phase);
      if (by_setting.count(setting) == 0) order.push_back(setting);
      by_setting[setting].points.push_back(SweepPoint{*ParseNumber(v), v, c});
    }
    std::vector<Curve> curves;
    std::vector<CellKey> rest;  // each curve's key without the axis, for its name
    for (const std::string& s : order) {
      Curve& c = by_setting[s];
      std::stable_sort(c.points.begin(), c.points.end(),
                       [](const SweepPoint& a, const SweepPoint& b) { return a.value < b.value; });
      std::set<double> distinct;
      for (const SweepPoint& p : c.points) distinct.insert(p.value);
      if (distinct.size() < 2) continue;
      CellKey k = c.points.front().cell->key;
      k.matrix = MatrixWithout(k.matrix, axis);
      rest.push_back(k);
      curves.push_back(std::move(c));
    }
    if (curves.empty()) continue;
    std::vector<const CellKey*> keys;
    for (const CellKey& k : rest) keys.push_back(&k);
    const KeyParts parts = DifferingParts(keys);
    // "cold only" on each curve measured so, or once when every curve is.
    const bool all_cold = std::all_of(rest.begin(), rest.end(), [](const CellKey& k) { return k.phase != v1::PHASE_WARM; });
    std::string shared = SharedLabel(rest.front(), parts);
    if (all_cold) shared += (shared.empty() ? "" : " · ") + std::string(cm.class_cold_only);
    for (size_t i = 0; i < curves.size(); ++i) {
      std::string label = SettingLabel(rest[i], parts);
      if (label.empty()) label = rest[i].machine;
      if (rest[i].phase != v1::PHASE_WARM && !all_cold) label += " (" + std::string(cm.class_cold_only) + ")";
      curves[i].label = label;
    }
    // The latency: the first further figure in seconds (by headline rank) that a curve's cell has.
    std::string latency_name, latency_label, latency_unit;
    for (const Curve& c : curves) {
      for (const SweepPoint& p : c.points) {
        for (const FurtherFigure& f : p.cell->further) {
          if (latency_name.empty() && IsLatencyUnit(f.unit) && (f.median || (f.min && f.max))) {
            latency_name = f.name;
            latency_label = f.label;
            latency_unit = f.unit;
          }
        }
      }
    }

    // Shared layout: the names of the curves in the right margin.
    double label_width = 0;
    for (const Curve& c : curves) label_width = std::max(label_width, TextWidth(c.label));
    label_width = std::min(label_width, 240.0);
    const double label_x = kChartWidth - 10 - label_width;
    const double right = label_x - 26;
    y = AppendSharedLine(cm.shared, shared, y, &body);
    std::vector<std::string> names_text;
    for (const Curve& c : curves) names_text.push_back(c.label);
    const double plot_h = std::max(240.0, EndLabelsHeight(names_text, label_width) + 10);
    const std::string figure_name = FigureName(first.label, first.unit);

    // Panel 1: the figure against the axis.
    {
      double vmin = 0, vmax = 0, amin = 0, amax = 0;
      bool any = false;
      std::map<double, std::string> distinct;
      for (const Curve& c : curves) {
        for (const SweepPoint& p : c.points) {
          const double a = p.value;
          const Cell* cell = p.cell;
          distinct.emplace(a, p.text);
          for (const RunFigure& rf : cell->runs) {
            if (!any) {
              vmin = vmax = rf.figure.value;
              amin = amax = a;
            }
            vmin = std::min(vmin, rf.figure.value);
            vmax = std::max(vmax, rf.figure.value);
            amin = std::min(amin, a);
            amax = std::max(amax, a);
            any = true;
          }
        }
      }
      const Scale ys = ValueScale(vmin, vmax);
      const double left = 20 + 8 + TicksWidth(ys, lang) + 8;
      body += Text(20, y + 16, FitText(Fill(cm.sweep_figure, {{"figure", figure_name}, {"axis", axis}}),
                                       kChartWidth - 40, kFontSize, true),
                   "font-weight=\"bold\"");
      const double top = y + 30, bottom = top + plot_h;
      // The axis values as ticks when they are few and their labels do not touch.
      const double pad = (amax - amin) * 0.04;
      auto X = [&](double a) { return left + (a - (amin - pad)) / (amax - amin + 2 * pad) * (right - left); };
      auto Y = [&](double v) { return ys.At(v, bottom, top); };
      body += VerticalAxis(ys, left, right, top, bottom, lang);
      body += "<line x1=\"" + Num(left) + "\" y1=\"" + Num(bottom) + "\" x2=\"" + Num(right) + "\" y2=\"" +
              Num(bottom) + "\" stroke=\"#000000\"/>\n";
      std::vector<std::pair<double, std::string>> ticks(distinct.begin(), distinct.end());
      bool exact = ticks.size() <= 12;
      for (size_t i = 1; exact && i < ticks.size(); ++i) {
        const double need = (TextWidth(ticks[i - 1].second) + TextWidth(ticks[i].second)) / 2 + 8;
        if (X(ticks[i].first) - X(ticks[i - 1].first) < need) exact = false;
      }
      body += "<g class=\"x-ticks\">\n";
      if (exact) {
        // The values swept, as the matrix writes them.
        for (const auto& [a, text] : ticks) {
          body += "<line x1=\"" + Num(X(a)) + "\" y1=\"" + Num(bottom) + "\" x2=\"" + Num(X(a)) + "\" y2=\"" +
                  Num(bottom + 5) + "\" stroke=\"#000000\"/>\n";
          body += Text(X(a), bottom + 18, FitText(text, 120), "text-anchor=\"middle\"");
        }
      } else {
        const Scale as = ValueScale(amin, amax);
        for (int i = 0; i <= as.Ticks(); ++i) {
          const double a = as.lo + as.step * i;
          if (a < amin - pad - 1e-9 || a > amax + pad + 1e-9) continue;
          body += "<line x1=\"" + Num(X(a)) + "\" y1=\"" + Num(bottom) + "\" x2=\"" + Num(X(a)) + "\" y2=\"" +
                  Num(bottom + 5) + "\" stroke=\"#000000\"/>\n";
          body += Text(X(a), bottom + 18, TickText(a, as.step, lang), "text-anchor=\"middle\"");
        }
      }
      body += "</g>\n";
      body += AxisTitle(axis, (left + right) / 2, bottom + 36, right - left, false);
      body += AxisTitle(figure_name, 18, (top + bottom) / 2, plot_h, true);
      std::vector<EndLabel> names;
      std::vector<Polyline> lines(curves.size());
      for (size_t ci = 0; ci < curves.size(); ++ci) {
        for (const SweepPoint& p : curves[ci].points) lines[ci].emplace_back(X(p.value), Y(MedianOf(*p.cell)));
      }
      const std::vector<int> covered = CoveredBy(lines);
      for (size_t ci = 0; ci < curves.size(); ++ci) {
        const Curve& c = curves[ci];
        const std::string colour = SeriesColour(ci), dash = SeriesDash(ci);
        body += "<g class=\"curve\" stroke=\"" + colour + "\" fill=\"" + colour + "\">\n";
        body += "<title>" + XmlEscape(c.label) + "</title>\n";
        body += PolylineElement(lines[ci], 2 + 3.0 * covered[ci], dash);
        for (const SweepPoint& p : c.points) {
          const double a = p.value;
          const Cell* cell = p.cell;
          size_t k = 0;
          for (const RunFigure& rf : cell->runs) {
            const double jx = (static_cast<double>(k % 5) - 2) * 2.5;
            ++k;
            body += Marker(ShapeOfPhase(cell->key.phase), X(a) + jx, Y(rf.figure.value),
                           "<title>" +
                               XmlEscape(axis + "=" + p.text + ", " + std::string(m.run) + " " +
                                         rf.run_id + ": " + FormatNumber(rf.figure.value, lang) + " [" +
                                         rf.figure.source_id + "]") +
                               "</title>",
                           "class=\"run\" fill-opacity=\"0.75\"");
          }
          body += Marker(MarkerShape::kDiamond, X(a), Y(MedianOf(*cell)),
                         "<title>" + XmlEscape(axis + "=" + p.text + ": " + MedianText(*cell, lang, m, cm)) +
                             "</title>",
                         "class=\"median\" stroke=\"#ffffff\" stroke-width=\"1\"", 1 + 0.5 * covered[ci]);
        }
        body += "</g>\n";
        const auto& last = c.points.back();
        names.push_back(EndLabel{X(last.value), Y(MedianOf(*last.cell)), c.label, colour, dash});
      }
      body += EndLabels(names, label_x, label_width, top, bottom);
      y = bottom + 56;
    }

    // Panel 2: the latency against the figure, one point per axis value.
    if (!latency_name.empty()) {
      struct LPoint {
        std::string axis;
        double x;
        Latency lat;
        const Cell* cell;
      };
      std::vector<std::vector<LPoint>> lcurves(curves.size());
      double xmin = 0, xmax = 0, lmin = 0, lmax = 0;
      bool any = false;
      for (size_t ci = 0; ci < curves.size(); ++ci) {
        for (const SweepPoint& sp : curves[ci].points) {
          const Cell* cell = sp.cell;
          std::optional<Latency> lat = LatencyOf(*cell, latency_name, lang, cm, m);
          if (!lat) continue;
          const double x = MedianOf(*cell);
          const double lo = lat->range ? lat->min : lat->value, hi = lat->range ? lat->max : lat->value;
          if (!any) {
            xmin = xmax = x;
            lmin = lo;
            lmax = hi;
          }
          xmin = std::min(xmin, x);
          xmax = std::max(xmax, x);
          lmin = std::min(lmin, lo);
          lmax = std::max(lmax, hi);
          any = true;
          lcurves[ci].push_back(LPoint{sp.text, x, *lat, cell});
        }
      }
      if (any) {
        const std::string latency = FigureName(latency_label, latency_unit);
        const Scale ys = ValueScale(lmin, lmax);
        const Scale xs = ValueScale(xmin, xmax);
        const double left = 20 + 8 + TicksWidth(ys, lang) + 8;
        const double plot_right = right - TextWidth(TickText(xs.hi, xs.step, lang)) / 2;
        body += Text(20, y + 16, FitText(Fill(cm.sweep_latency, {{"latency", latency}, {"figure", figure_name}}),
                                         kChartWidth - 40, kFontSize, true),
                     "font-weight=\"bold\"");
        const double top = y + 30, bottom = top + plot_h;
        auto X = [&](double v) { return xs.At(v, left, plot_right); };
        auto Y = [&](double v) { return ys.At(v, bottom, top); };
        body += VerticalAxis(ys, left, plot_right, top, bottom, lang);
        body += HorizontalAxis(xs, left, plot_right, top, bottom, lang);
        body += AxisTitle(figure_name, (left + plot_right) / 2, bottom + 36, plot_right - left, false);
        body += AxisTitle(latency, 18, (top + bottom) / 2, plot_h, true);
        // The axis value beside each point, where it meets no other text.
        struct Box {
          double x0, y0, x1, y1;
        };
        std::vector<Box> taken;
        std::vector<EndLabel> names;
        std::string value_labels;
        std::vector<Polyline> lines(curves.size());
        for (size_t ci = 0; ci < curves.size(); ++ci) {
          for (const LPoint& p : lcurves[ci]) lines[ci].emplace_back(X(p.x), Y(p.lat.value));
        }
        const std::vector<int> covered = CoveredBy(lines);
        for (size_t ci = 0; ci < curves.size(); ++ci) {
          if (lcurves[ci].empty()) continue;
          const std::string colour = SeriesColour(ci), dash = SeriesDash(ci);
          body += "<g class=\"curve\" stroke=\"" + colour + "\" fill=\"" + colour + "\">\n";
          body += "<title>" + XmlEscape(curves[ci].label) + "</title>\n";
          body += PolylineElement(lines[ci], 2 + 3.0 * covered[ci], dash);
          for (const LPoint& p : lcurves[ci]) {
            const double px = X(p.x), py = Y(p.lat.value);
            if (p.lat.range) {
              body += "<line x1=\"" + Num(px) + "\" y1=\"" + Num(Y(p.lat.min)) + "\" x2=\"" + Num(px) + "\" y2=\"" +
                      Num(Y(p.lat.max)) + "\" stroke-width=\"1.5\"/>\n";
            }
            const std::string tip = axis + "=" + p.axis + ": " + latency_label + " " + p.lat.tip +
                                    " " + latency_unit + "; " + first.label + " " + MedianText(*p.cell, lang, m, cm);
            body += Marker(ShapeOfPhase(p.cell->key.phase), px, py, "<title>" + XmlEscape(tip) + "</title>",
                           "class=\"point\"", 1 + 0.5 * covered[ci]);
            const std::string text = FitText(p.axis, 120);
            const double w = TextWidth(text);
            const Box candidates[] = {{px + 7, py - 14, px + 7 + w, py}, {px - 7 - w, py - 14, px - 7, py},
                                      {px + 7, py + 2, px + 7 + w, py + 16}, {px - 7 - w, py + 2, px - 7, py + 16}};
            for (const Box& b : candidates) {
              if (b.x0 < left + 2 || b.x1 > plot_right || b.y0 < top - 4 || b.y1 > bottom) continue;
              bool clear = true;
              for (const Box& t : taken) {
                if (b.x0 < t.x1 + 2 && t.x0 < b.x1 + 2 && b.y0 < t.y1 + 1 && t.y0 < b.y1 + 1) clear = false;
              }
              if (!clear) continue;
              taken.push_back(b);
              value_labels += Text(b.x0, b.y1 - 3, text, "fill=\"" + colour + "\"");
              break;
            }
          }
          body += "</g>\n";
          const LPoint& last = lcurves[ci].back();
          names.push_back(EndLabel{X(last.x), Y(last.lat.value), curves[ci].label, colour, dash});
        }
        body += "<g class=\"axis-values\">\n" + value_labels + "</g>\n";
        body += EndLabels(names, label_x, label_width, top, bottom);
        y = bottom + 56;
      }
    }
  }
  std::string desc(cm.sweep_desc);
  return SvgDocument(y - 6, "sweep", title, desc, header, body);
}

}  // namespace benchfleet::synthesis
