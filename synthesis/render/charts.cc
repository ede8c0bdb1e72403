// The charts of a task (render.h): the figure by call index, the duration of each run and the
// peak memory by kind, each a self-contained SVG; axis helpers in chart_axes.h.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "synthesis/render/chart_axes.h"
#include "synthesis/render/inline_text.h"
#include "synthesis/render/messages.h"
#include "synthesis/render/render.h"
#include "synthesis/render/run_bins.h"

namespace benchfleet::synthesis {
namespace {

const Messages& Msg(Lang lang) { return lang == Lang::kFr ? MessagesFr() : MessagesEn(); }

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;



std::string P(double v) { return Fixed(v, 1); }

std::string_view PhaseWord(v1::Phase phase, const Messages& m) {
  switch (phase) {
    case v1::PHASE_VALIDATION: return m.phase_validation;
    case v1::PHASE_COLD: return m.phase_cold;
    case v1::PHASE_WARM: return m.phase_warm;
    default: return m.phase_unspecified;
  }
}

// "machine / backend / mode / matrix / phase", empty parts left out (as the table's trap lines).
std::string CellLabel(const CellKey& key, const Messages& m) {
  std::vector<std::string> parts;
  for (const std::string* part : {&key.machine, &key.backend, &key.mode, &key.matrix}) {
    if (!part->empty()) parts.push_back(*part);
  }
  parts.emplace_back(PhaseWord(key.phase, m));
  return Join(parts, " / ");
}


// The axis maximum (a whole number of steps) and its step for values up to `vmax`.
std::pair<double, double> AxisOf(double vmax) {
  if (!(vmax > 0)) return {1, 0.2};
  double step = NiceStep(vmax, 5);
  return {step * std::ceil(vmax / step), step};
}

std::string SvgOpen(double w, double h, const std::string& id, const std::string& title, std::string_view desc) {
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + P(w) + " " + P(h) +
                  "\" role=\"img\" aria-labelledby=\"" + id + "-title " + id +
                  "-desc\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<title id=\"" + id + "-title\">" + XmlEscape(title) + "</title>\n";
  s += "<desc id=\"" + id + "-desc\">" + XmlEscape(std::string(desc)) + "</desc>\n";
  s += "<rect x=\"0\" y=\"0\" width=\"" + P(w) + "\" height=\"" + P(h) + "\" fill=\"#ffffff\"/>\n";
  s += "<text x=\"" + P(w / 2) + "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" + XmlEscape(title) +
       "</text>\n";
  return s;
}

std::string ChartTitle(std::string_view what, const std::string& task, const Analysis& a, const Messages& m) {
  std::string title = std::string(what) + " — " + task;
  if (a.simulated) title += " (" + std::string(m.simulated) + ")";
  return title;
}

std::vector<const Cell*> CellsOf(const Analysis& a, const std::string& task) {
  std::vector<const Cell*> cells;
  for (const Cell& c : a.cells) {
    if (c.key.task == task) cells.push_back(&c);
  }
  return cells;
}

// Deterministic horizontal spread of the k-th point of a column, in [-0.5, 0.5): the fractional
// parts of k times the golden ratio fill the interval evenly without any randomness.
double Jitter(size_t k) {
  double f = static_cast<double>(k) * 0.6180339887498949;
  return f - std::floor(f) - 0.5;
}

bool IsDeviceKind(v1::MemoryKind kind) {
  return kind == v1::MEMORY_KIND_DEVICE_USED || kind == v1::MEMORY_KIND_DEVICE_BUFFER;
}

}  // namespace

std::string DurationChartFileName(const std::string& task, Lang lang) {
  return "chart-" + TaskSlug(task) + "-duration." + std::string(LangCode(lang)) + ".svg";
}

std::string MemoryChartFileName(const std::string& task, Lang lang) {
  return "chart-" + TaskSlug(task) + "-memory." + std::string(LangCode(lang)) + ".svg";
}

std::string RenderDurationChart(const Analysis& analysis, const std::string& task, Lang lang) {
  const Messages& m = Msg(lang);
  constexpr double kW = 800, kLeft = 80, kRight = 780, kTop = 50, kBottom = 330;
  std::vector<const Cell*> cells = CellsOf(analysis, task);
  const double kH = 400 + 16.0 * static_cast<double>(cells.size());
  double vmax = 0;
  for (const Cell* c : cells) {
    for (const RunFigure& rf : c->runs) {
      if (rf.wall_seconds) vmax = std::max(vmax, rf.wall_seconds->value);
    }
  }
  auto [ymax, step] = AxisOf(vmax);
  const double col_w = (kRight - kLeft) / static_cast<double>(std::max<size_t>(1, cells.size()));
  auto Y = [&](double v) { return kBottom - v / ymax * (kBottom - kTop); };

  std::string s = SvgOpen(kW, kH, "duration", ChartTitle(m.duration_title, task, analysis, m), m.duration_desc);
  s += "<g stroke=\"#000000\" stroke-width=\"1\">\n";
  s += "<line x1=\"" + P(kLeft) + "\" y1=\"" + P(kBottom) + "\" x2=\"" + P(kRight) + "\" y2=\"" + P(kBottom) + "\"/>\n";
  s += "<line x1=\"" + P(kLeft) + "\" y1=\"" + P(kTop) + "\" x2=\"" + P(kLeft) + "\" y2=\"" + P(kBottom) + "\"/>\n";
  s += "</g>\n";
  s += "<g class=\"y-ticks\">\n";
  const int nticks = static_cast<int>(std::lround(ymax / step));
  for (int i = 0; i <= nticks; ++i) {
    double v = step * i;
    s += "<line x1=\"" + P(kLeft - 5) + "\" y1=\"" + P(Y(v)) + "\" x2=\"" + P(kRight) + "\" y2=\"" + P(Y(v)) +
         "\" stroke=\"#dddddd\"/>\n";
    s += "<text x=\"" + P(kLeft - 8) + "\" y=\"" + P(Y(v) + 4) + "\" text-anchor=\"end\">" +
         XmlEscape(TickText(v, step, lang)) + "</text>\n";
  }
  s += "</g>\n";
  s += "<text x=\"16\" y=\"" + P((kTop + kBottom) / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " +
       P((kTop + kBottom) / 2) + ")\">" + XmlEscape(std::string(m.duration_y_axis)) + "</text>\n";

  for (size_t ci = 0; ci < cells.size(); ++ci) {
    const Cell& c = *cells[ci];
    const std::string color = SeriesColour(ci);
    const std::string label = CellLabel(c.key, m);
    const double cx = kLeft + (static_cast<double>(ci) + 0.5) * col_w;
    const double spread = std::min(col_w * 0.6, 60.0);
    // Column number under the axis; the legend below names the cell.
    s += "<text x=\"" + P(cx) + "\" y=\"" + P(kBottom + 18) + "\" text-anchor=\"middle\">" + std::to_string(ci + 1) +
         "</text>\n";
    s += "<g class=\"cell\" stroke=\"" + color + "\" fill=\"" + color + "\">\n";
    s += "<title>" + XmlEscape(label) + "</title>\n";
    // Marker of one point (a run, or a bin's median) by phase, with its tooltip.
    auto mark = [&](double x, double y, const std::string& tip) {
      if (c.key.phase == v1::PHASE_WARM) {
        s += "<circle class=\"run\" cx=\"" + P(x) + "\" cy=\"" + P(y) + "\" r=\"4.0\">" + tip + "</circle>\n";
      } else if (c.key.phase == v1::PHASE_COLD) {
        s += "<rect class=\"run\" x=\"" + P(x - 4) + "\" y=\"" + P(y - 4) + "\" width=\"8.0\" height=\"8.0\">" + tip +
             "</rect>\n";
      } else {
        s += "<polygon class=\"run\" points=\"" + P(x) + "," + P(y - 5) + " " + P(x - 5) + "," + P(y + 4) + " " +
             P(x + 5) + "," + P(y + 4) + "\">" + tip + "</polygon>\n";
      }
    };
    std::vector<double> seconds;
    for (const RunFigure& rf : c.runs) {
      if (rf.wall_seconds) seconds.push_back(rf.wall_seconds->value);
    }
    std::string binned_note;
    if (seconds.size() > kBinRunsAbove) {
      // Too many runs for a point each: groups of consecutive runs (in the cell's order), each its
      // min–max line and its median, spread sideways as the runs would be.
      const std::vector<RunBin> bins = BinInOrder(seconds);
      for (size_t b = 0; b < bins.size(); ++b) {
        const double x = cx + Jitter(b) * spread;
        s += "<line x1=\"" + P(x) + "\" y1=\"" + P(Y(bins[b].min)) + "\" x2=\"" + P(x) + "\" y2=\"" +
             P(Y(bins[b].max)) + "\" stroke-width=\"1\"/>\n";
        mark(x, Y(bins[b].median),
             "<title>" +
                 XmlEscape(std::string(m.dist_median) + " " + FormatNumber(bins[b].median, lang) + " s, " +
                           std::string(m.dist_min) + " " + FormatNumber(bins[b].min, lang) + " s, " +
                           std::string(m.dist_max) + " " + FormatNumber(bins[b].max, lang) + " s (" +
                           std::to_string(bins[b].runs) + " " + std::string(m.runs_word) + ", sources.csv)") +
                 "</title>");
      }
      binned_note = " (" + std::string(m.binned_about) + " " +
                    std::to_string(RunsPerMark(seconds.size(), bins.size())) + " " + std::string(m.binned_per_mark) +
                    ")";
    }
    // Unbinned: every run its point (the binned cell drew its marks above).
    const std::vector<RunFigure> none;
    size_t k = 0;
    for (const RunFigure& rf : binned_note.empty() ? c.runs : none) {
      if (!rf.wall_seconds) continue;
      const double x = cx + Jitter(k++) * spread, y = Y(rf.wall_seconds->value);
      const std::string tip = "<title>" +
                              XmlEscape(std::string(m.run) + " " + rf.run_id + ": " +
                                        FormatNumber(rf.wall_seconds->value, lang) + " s [" +
                                        rf.wall_seconds->source_id + "]") +
                              "</title>";
      mark(x, y, tip);
    }
    s += "</g>\n";
    // Legend: the column number and the cell (its label ends with the phase, hence the marker).
    const double ly = kBottom + 56 + 16.0 * static_cast<double>(ci);
    s += "<text x=\"" + P(kLeft) + "\" y=\"" + P(ly) + "\" fill=\"" + color + "\">" +
         XmlEscape(std::to_string(ci + 1) + " — " + label + binned_note) + "</text>\n";
  }
  s += "</svg>\n";
  return s;
}

std::string RenderMemoryChart(const Analysis& analysis, const std::string& task, Lang lang) {
  const Messages& m = Msg(lang);
  struct Bar {
    const Cell* cell;
    const MemoryEntry* entry;
  };
  // Two families, each on its own axis; a kind the proto does not name (UNSPECIFIED) gets a third
  // panel of its own rather than joining either.
  struct Panel {
    std::string heading;
    std::vector<Bar> bars;
  };
  std::vector<Panel> panels = {{std::string(m.memory_panel_device), {}}, {std::string(m.memory_panel_host), {}},
                               {std::string(m.mem_kind_unspecified), {}}};
  bool any = false;
  for (const Cell* c : CellsOf(analysis, task)) {
    for (const MemoryEntry& e : c->memory) {
      size_t p = IsDeviceKind(e.kind) ? 0 : e.kind == v1::MEMORY_KIND_UNSPECIFIED ? 2 : 1;
      panels[p].bars.push_back(Bar{c, &e});
      any = true;
    }
  }
  if (!any) return "";
  if (panels[2].bars.empty()) panels.pop_back();

  constexpr double kW = 800, kLeft = 20, kRight = 640, kRow = 36, kPanelGap = 40;
  // Layout first (the height depends on the rows), then the drawing.
  double h = 50;
  for (const Panel& p : panels) h += 30 + kRow * static_cast<double>(std::max<size_t>(1, p.bars.size())) + 30 + kPanelGap;
  h += 10;

  std::string s = SvgOpen(kW, h, "memory", ChartTitle(m.memory_title, task, analysis, m), m.memory_desc);
  double y = 50;
  for (size_t pi = 0; pi < panels.size(); ++pi) {
    const Panel& panel = panels[pi];
    double vmax = 0;
    for (const Bar& b : panel.bars) vmax = std::max(vmax, b.entry->bytes.value / kGiB);
    auto [xmax, step] = AxisOf(vmax);
    auto X = [&](double gib) { return kLeft + gib / xmax * (kRight - kLeft); };
    s += "<g class=\"panel\">\n";
    s += "<text x=\"" + P(kLeft) + "\" y=\"" + P(y + 16) + "\" font-size=\"14\" font-weight=\"bold\">" +
         XmlEscape(panel.heading + ", " + std::string(m.gib)) + "</text>\n";
    double row_y = y + 30;
    if (panel.bars.empty()) {
      s += "<text x=\"" + P(kLeft) + "\" y=\"" + P(row_y + 20) + "\">" + XmlEscape(std::string(m.none_value)) +
           "</text>\n";
      row_y += kRow;
    }
    for (const Bar& b : panel.bars) {
      const double gib = b.entry->bytes.value / kGiB;
      const std::string color = SeriesColour(static_cast<size_t>(b.entry->kind));
      const std::string kind(MemoryKindWording(m, b.entry->kind));
      const std::string value = FormatNumber(gib, lang) + " " + std::string(m.gib);
      const std::string label = CellLabel(b.cell->key, m) + " — " + kind + " — " + b.entry->scope + " [" +
                                b.entry->bytes.source_id + "]";
      s += "<g class=\"bar\" data-kind=\"" + XmlEscape(b.entry->label) + "\">\n";
      s += "<title>" +
           XmlEscape(label + ": " + value + " (" + FormatNumber(b.entry->bytes.value, lang) + " " +
                     std::string(m.mem_bytes) + ")") +
           "</title>\n";
      s += "<text x=\"" + P(kLeft) + "\" y=\"" + P(row_y + 12) + "\">" + XmlEscape(label) + "</text>\n";
      s += "<rect x=\"" + P(kLeft) + "\" y=\"" + P(row_y + 16) + "\" width=\"" + P(std::max(1.0, X(gib) - kLeft)) +
           "\" height=\"14.0\" fill=\"" + color + "\"/>\n";
      s += "<text x=\"" + P(X(gib) + 6) + "\" y=\"" + P(row_y + 28) + "\">" + XmlEscape(value) + "</text>\n";
      s += "</g>\n";
      row_y += kRow;
    }
    // The panel's own axis, in GiB.
    s += "<line x1=\"" + P(kLeft) + "\" y1=\"" + P(row_y + 4) + "\" x2=\"" + P(kRight) + "\" y2=\"" + P(row_y + 4) +
         "\" stroke=\"#000000\"/>\n";
    const int nticks = static_cast<int>(std::lround(xmax / step));
    for (int i = 0; i <= nticks; ++i) {
      double v = step * i;
      s += "<text x=\"" + P(X(v)) + "\" y=\"" + P(row_y + 20) + "\" text-anchor=\"middle\">" +
           XmlEscape(TickText(v, step, lang)) + "</text>\n";
    }
    s += "</g>\n";
    y = row_y + 30 + kPanelGap;
  }
  s += "</svg>\n";
  return s;
}

std::string RenderCallIndexChart(const Analysis& analysis, const std::string& task, Lang lang) {
  const Messages& m = Msg(lang);
  constexpr double kW = 800, kLeft = 80, kRight = 780, kTop = 50, kBottom = 330;
  std::vector<const Cell*> cells;
  for (const Cell& c : analysis.cells) {
    if (c.key.task == task) cells.push_back(&c);
  }
  const double kH = 400 + 16.0 * static_cast<double>(cells.size());
  uint32_t xmin = 0, xmax = 0;
  double vmax = 0;
  bool any = false;
  std::set<std::string> metrics;
  for (const Cell* c : cells) {
    metrics.insert(FigureName(c->label, c->unit));
    for (const RunFigure& rf : c->runs) {
      if (!any) xmin = xmax = rf.call_index;
      xmin = std::min(xmin, rf.call_index);
      xmax = std::max(xmax, rf.call_index);
      vmax = std::max(vmax, rf.figure.value);
      any = true;
    }
  }
  if (xmax == xmin) ++xmax;
  double step = NiceStep(vmax, 5);
  double ymax = vmax > 0 ? step * std::ceil(vmax / step) : 1;
  if (!(vmax > 0)) step = 0.2;
  auto X = [&](double i) { return kLeft + (i - xmin) / (xmax - xmin) * (kRight - kLeft); };
  auto Y = [&](double v) { return kBottom - v / ymax * (kBottom - kTop); };
  auto P = [](double v) { return Fixed(v, 1); };

  std::string title = std::string(m.chart_title) + " — " + task;
  if (analysis.simulated) title += " (" + std::string(m.simulated) + ")";
  std::vector<std::string> metric_list(metrics.begin(), metrics.end());
  std::string ylabel = Join(metric_list, ", ");

  std::string s;
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + P(kW) + " " + P(kH) +
       "\" role=\"img\" aria-labelledby=\"chart-title chart-desc\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<title id=\"chart-title\">" + XmlEscape(title) + "</title>\n";
  s += "<desc id=\"chart-desc\">" + XmlEscape(std::string(m.chart_desc)) + "</desc>\n";
  s += "<rect x=\"0\" y=\"0\" width=\"" + P(kW) + "\" height=\"" + P(kH) + "\" fill=\"#ffffff\"/>\n";
  s += "<text x=\"" + P(kW / 2) + "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" + XmlEscape(title) +
       "</text>\n";
  // Axes.
  s += "<g stroke=\"#000000\" stroke-width=\"1\">\n";
  s += "<line x1=\"" + P(kLeft) + "\" y1=\"" + P(kBottom) + "\" x2=\"" + P(kRight) + "\" y2=\"" + P(kBottom) + "\"/>\n";
  s += "<line x1=\"" + P(kLeft) + "\" y1=\"" + P(kTop) + "\" x2=\"" + P(kLeft) + "\" y2=\"" + P(kBottom) + "\"/>\n";
  s += "</g>\n";
  // Y ticks.
  s += "<g class=\"y-ticks\">\n";
  int nticks = static_cast<int>(std::lround(ymax / step));
  for (int i = 0; i <= nticks; ++i) {
    double v = step * i;
    s += "<line x1=\"" + P(kLeft - 5) + "\" y1=\"" + P(Y(v)) + "\" x2=\"" + P(kRight) + "\" y2=\"" + P(Y(v)) +
         "\" stroke=\"#dddddd\"/>\n";
    s += "<text x=\"" + P(kLeft - 8) + "\" y=\"" + P(Y(v) + 4) + "\" text-anchor=\"end\">" +
         XmlEscape(TickText(v, step, lang)) + "</text>\n";
  }
  s += "</g>\n";
  // X ticks: every call index when few, else about 10.
  s += "<g class=\"x-ticks\">\n";
  uint32_t xstep = std::max<uint32_t>(1, (xmax - xmin + 9) / 10);
  for (uint32_t i = xmin; i <= xmax; i += xstep) {
    s += "<line x1=\"" + P(X(i)) + "\" y1=\"" + P(kBottom) + "\" x2=\"" + P(X(i)) + "\" y2=\"" + P(kBottom + 5) +
         "\" stroke=\"#000000\"/>\n";
    s += "<text x=\"" + P(X(i)) + "\" y=\"" + P(kBottom + 18) + "\" text-anchor=\"middle\">" + std::to_string(i) +
         "</text>\n";
  }
  s += "</g>\n";
  s += "<text x=\"" + P((kLeft + kRight) / 2) + "\" y=\"" + P(kBottom + 36) + "\" text-anchor=\"middle\">" +
       XmlEscape(std::string(m.x_axis)) + "</text>\n";
  s += "<text x=\"16\" y=\"" + P((kTop + kBottom) / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " +
       P((kTop + kBottom) / 2) + ")\">" + XmlEscape(ylabel) + "</text>\n";
  // Series.
  for (size_t ci = 0; ci < cells.size(); ++ci) {
    const Cell& c = *cells[ci];
    std::string color = SeriesColour(ci);
    std::string label = CellLabel(c.key, m);
    s += "<g class=\"cell\" stroke=\"" + color + "\" fill=\"" + color + "\">\n";
    s += "<title>" + XmlEscape(label) + "</title>\n";
    // Marker of one point (a run, or a bin's median) by phase, with its tooltip.
    auto mark = [&](double x, double y, const std::string& tip) {
      if (c.key.phase == v1::PHASE_WARM) {
        s += "<circle cx=\"" + P(x) + "\" cy=\"" + P(y) + "\" r=\"4.0\">" + tip + "</circle>\n";
      } else if (c.key.phase == v1::PHASE_COLD) {
        s += "<rect x=\"" + P(x - 4) + "\" y=\"" + P(y - 4) + "\" width=\"8.0\" height=\"8.0\">" + tip + "</rect>\n";
      } else {
        s += "<polygon points=\"" + P(x) + "," + P(y - 5) + " " + P(x - 5) + "," + P(y + 4) + " " + P(x + 5) + "," +
             P(y + 4) + "\">" + tip + "</polygon>\n";
      }
    };
    std::string binned_note;
    if (c.runs.size() > kBinRunsAbove) {
      // Too many runs for a mark each: per call index (or run of call indices) the min–max line and
      // the median, the line through the medians, so a collapse across calls stays visible.
      std::vector<std::pair<uint32_t, double>> points_in;
      points_in.reserve(c.runs.size());
      for (const RunFigure& rf : c.runs) points_in.emplace_back(rf.call_index, rf.figure.value);
      const std::vector<RunBin> bins = BinByKey(std::move(points_in));
      std::string points;
      for (const RunBin& b : bins) {
        if (!points.empty()) points += ' ';
        points += P(X((b.first_key + b.last_key) / 2.0)) + "," + P(Y(b.median));
      }
      s += "<polyline fill=\"none\" stroke-width=\"2\" points=\"" + points + "\"/>\n";
      for (const RunBin& b : bins) {
        const double x = X((b.first_key + b.last_key) / 2.0);
        s += "<line x1=\"" + P(x) + "\" y1=\"" + P(Y(b.min)) + "\" x2=\"" + P(x) + "\" y2=\"" + P(Y(b.max)) +
             "\" stroke-width=\"1\"/>\n";
        const std::string calls = b.first_key == b.last_key
                                      ? std::to_string(b.first_key)
                                      : std::to_string(b.first_key) + "–" + std::to_string(b.last_key);
        mark(x, Y(b.median),
             "<title>" +
                 XmlEscape(std::string(m.call) + " " + calls + ": " + std::string(m.dist_median) + " " +
                           FormatNumber(b.median, lang) + ", " + std::string(m.dist_min) + " " +
                           FormatNumber(b.min, lang) + ", " + std::string(m.dist_max) + " " +
                           FormatNumber(b.max, lang) + " (" + std::to_string(b.runs) + " " +
                           std::string(m.runs_word) + ", sources.csv)") +
                 "</title>");
      }
      binned_note = "; " + std::string(m.binned_about) + " " +
                    std::to_string(RunsPerMark(c.runs.size(), bins.size())) + " " + std::string(m.binned_per_mark);
    } else {
      std::string points;
      for (const RunFigure& rf : c.runs) {
        if (!points.empty()) points += ' ';
        points += P(X(rf.call_index)) + "," + P(Y(rf.figure.value));
      }
      s += "<polyline fill=\"none\" stroke-width=\"2\" points=\"" + points + "\"/>\n";
      for (const RunFigure& rf : c.runs) {
        const std::string tip = "<title>" +
                                XmlEscape(std::string(m.call) + " " + std::to_string(rf.call_index) + ": " +
                                          FormatNumber(rf.figure.value, lang) + " [" + rf.figure.source_id + "]") +
                                "</title>";
        mark(X(rf.call_index), Y(rf.figure.value), tip);
      }
    }
    s += "</g>\n";
    // Legend entry.
    double ly = kBottom + 56 + 16.0 * static_cast<double>(ci);
    std::string_view phase_word = c.key.phase == v1::PHASE_WARM   ? m.legend_warm
                                  : c.key.phase == v1::PHASE_COLD ? m.legend_cold
                                                                  : m.legend_other;
    s += "<text x=\"" + P(kLeft) + "\" y=\"" + P(ly) + "\" fill=\"" + color + "\">" +
         XmlEscape(label + " (" + std::string(phase_word) + binned_note + ")") + "</text>\n";
  }
  s += "</svg>\n";
  return s;
}

}  // namespace benchfleet::synthesis
