// The duration of each run and the peak memory by kind (render.h), each a self-contained SVG; the
// figure by call index is in chart_call_index.cc, the drawing primitives in chart_svg.h.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
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

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

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

// Deterministic spread of the k-th point of a column, in [-0.5, 0.5): the fractional parts of k
// times the golden ratio fill the interval evenly without any randomness.
double Jitter(size_t k) {
  double f = static_cast<double>(k) * 0.6180339887498949;
  return f - std::floor(f) - 0.5;
}


// The lines naming a column under the duration chart: each differing part of its key on a line of
// its own (wrapped to the column), then the phase.
std::vector<std::string> ColumnLines(const CellKey& key, const KeyParts& parts, const Messages& m, double width) {
  std::vector<std::string> lines;
  const std::string label = SettingLabel(key, parts);
  for (size_t from = 0; from < label.size();) {
    size_t sep = label.find(" · ", from);
    if (sep == std::string::npos) sep = label.size();
    for (std::string& l : WrapText(label.substr(from, sep - from), width, 3)) lines.push_back(std::move(l));
    from = sep == label.size() ? sep : sep + std::string(" · ").size();
  }
  lines.push_back(FitText(PhaseWording(m, key.phase), width));
  return lines;
}

}  // namespace

std::string DurationChartFileName(const std::string& task, Lang lang) {
  return "chart-" + TaskSlug(task) + "-duration." + std::string(LangCode(lang)) + ".svg";
}

std::string MemoryChartFileName(const std::string& task, Lang lang) {
  return "chart-" + TaskSlug(task) + "-memory." + std::string(LangCode(lang)) + ".svg";
}

std::string RenderDurationChart(const Analysis& analysis, const std::string& task, Lang lang) {
  const Messages& m = MessagesOf(lang);
  const ChartMessages& cm = ChartMessagesOf(lang);
  const std::vector<const Cell*> cells = CellsOf(analysis, task);
  std::vector<const CellKey*> keys;
  double vmax = 0;
  for (const Cell* c : cells) {
    keys.push_back(&c->key);
    for (const RunFigure& rf : c->runs) {
      if (rf.wall_seconds) vmax = std::max(vmax, rf.wall_seconds->value);
    }
  }
  const KeyParts parts = DifferingParts(keys);
  const std::string shared = keys.empty() ? "" : SharedLabel(*keys.front(), parts);
  const Scale ys = ValueScale(0, vmax);

  const std::string title = ChartTitle(m.duration_title, task, analysis, m);
  const ChartHeader header = MakeHeader(title);
  std::string body;
  double y = header.bottom;
  y = AppendSharedLine(cm.shared, shared, y, &body);
  const double left = 20 + 8 + TicksWidth(ys, lang) + 8, right = kChartWidth - 20;
  const double top = y + 12, bottom = top + 260;
  const double col_w = (right - left) / static_cast<double>(std::max<size_t>(1, cells.size()));
  auto Y = [&](double v) { return ys.At(v, bottom, top); };

  // The columns' names: lines under each column when they fit, else one line turned upright.
  std::vector<std::vector<std::string>> names;
  std::vector<std::string> binned_note(cells.size());
  for (size_t ci = 0; ci < cells.size(); ++ci) {
    size_t n = 0;
    for (const RunFigure& rf : cells[ci]->runs) n += rf.wall_seconds ? 1 : 0;
    if (n > kBinRunsAbove) {
      binned_note[ci] = "(" + std::string(m.binned_about) + " " +
                        std::to_string(RunsPerMark(n, std::min(n, kMaxBinsPerCell))) + " " +
                        std::string(m.binned_per_mark) + ")";
    }
  }
  const bool upright = col_w < 64;
  double names_height = 0;
  for (size_t ci = 0; ci < cells.size(); ++ci) {
    if (upright) {
      std::string label = SettingLabel(cells[ci]->key, parts);
      label += (label.empty() ? "" : " · ") + std::string(PhaseWording(m, cells[ci]->key.phase));
      if (!binned_note[ci].empty()) label += " " + binned_note[ci];
      names.push_back({FitText(label, 220)});
      names_height = std::max(names_height, TextWidth(names.back()[0]) + 14);
    } else {
      names.push_back(ColumnLines(cells[ci]->key, parts, m, col_w - 8));
      if (!binned_note[ci].empty()) {
        for (std::string& l : WrapText(binned_note[ci], col_w - 8, 3)) names.back().push_back(std::move(l));
      }
      names_height = std::max(names_height, kLineGap * static_cast<double>(names.back().size()) + 10);
    }
  }

  body += VerticalAxis(ys, left, right, top, bottom, lang);
  body += "<line x1=\"" + Num(left) + "\" y1=\"" + Num(bottom) + "\" x2=\"" + Num(right) + "\" y2=\"" + Num(bottom) +
          "\" stroke=\"#000000\"/>\n";
  body += AxisTitle(m.duration_y_axis, 18, (top + bottom) / 2, bottom - top, true);

  for (size_t ci = 0; ci < cells.size(); ++ci) {
    const Cell& c = *cells[ci];
    const std::string color = SeriesColour(ci);
    const double cx = left + (static_cast<double>(ci) + 0.5) * col_w;
    const double spread = std::min(col_w * 0.6, 60.0);
    if (ci > 0) {
      const double x = left + static_cast<double>(ci) * col_w;
      body += "<line x1=\"" + Num(x) + "\" y1=\"" + Num(top) + "\" x2=\"" + Num(x) + "\" y2=\"" +
              Num(bottom + names_height) + "\" stroke=\"#eeeeee\"/>\n";
    }
    // The column's name under the axis.
    body += "<g class=\"column-name\" fill=\"" + color + "\">\n";
    if (upright) {
      const double ty = bottom + 10;
      body += Text(cx + 4, ty, names[ci][0],
                   "text-anchor=\"end\" transform=\"rotate(-90 " + Num(cx + 4) + " " + Num(ty) + ")\"");
    } else {
      for (size_t l = 0; l < names[ci].size(); ++l) {
        body += Text(cx, bottom + 18 + kLineGap * static_cast<double>(l), names[ci][l], "text-anchor=\"middle\"");
      }
    }
    body += "</g>\n";

    std::string label = SettingLabel(c.key, parts);
    label += (label.empty() ? "" : " / ") + std::string(PhaseWording(m, c.key.phase));
    body += "<g class=\"cell\" stroke=\"" + color + "\" fill=\"" + color + "\">\n";
    body += "<title>" + XmlEscape(label) + "</title>\n";
    const MarkerShape shape = ShapeOfPhase(c.key.phase);
    std::vector<double> seconds;
    for (const RunFigure& rf : c.runs) {
      if (rf.wall_seconds) seconds.push_back(rf.wall_seconds->value);
    }
    if (seconds.size() > kBinRunsAbove) {
      // Too many runs for a point each: groups of consecutive runs (in the cell's order), each its
      // min–max line and its median, spread sideways as the runs would be.
      const std::vector<RunBin> bins = BinInOrder(seconds);
      for (size_t b = 0; b < bins.size(); ++b) {
        const double x = cx + Jitter(b) * spread;
        body += "<line x1=\"" + Num(x) + "\" y1=\"" + Num(Y(bins[b].min)) + "\" x2=\"" + Num(x) + "\" y2=\"" +
                Num(Y(bins[b].max)) + "\" stroke-width=\"1\"/>\n";
        body += Marker(shape, x, Y(bins[b].median),
                       "<title>" +
                           XmlEscape(std::string(m.dist_median) + " " + FormatNumber(bins[b].median, lang) + " s, " +
                                     std::string(m.dist_min) + " " + FormatNumber(bins[b].min, lang) + " s, " +
                                     std::string(m.dist_max) + " " + FormatNumber(bins[b].max, lang) + " s (" +
                                     std::to_string(bins[b].runs) + " " + std::string(m.runs_word) + ", sources.csv)") +
                           "</title>",
                       "class=\"run\"");
      }
    } else {
      size_t k = 0;
      for (const RunFigure& rf : c.runs) {
        if (!rf.wall_seconds) continue;
        const double x = cx + Jitter(k++) * spread;
        body += Marker(shape, x, Y(rf.wall_seconds->value),
                       "<title>" +
                           XmlEscape(std::string(m.run) + " " + rf.run_id + ": " +
                                     FormatNumber(rf.wall_seconds->value, lang) + " s [" +
                                     rf.wall_seconds->source_id + "]") +
                           "</title>",
                       "class=\"run\"");
      }
    }
    body += "</g>\n";
  }
  return SvgDocument(bottom + names_height + 10, "duration", title, cm.duration_desc, header, body);
}

namespace {

// One bar of the memory chart: the largest figure of one kind and scope over the phases of one
// setting (machine, backend, mode, matrix) of a class.
struct MemoryBar {
  std::string machine_class;
  v1::MemoryKind kind = v1::MEMORY_KIND_UNSPECIFIED;
  std::string scope;
  std::string setting;          // the setting's differing parts, "" when it is the only one
  const Cell* cell = nullptr;   // the cell holding the largest figure
  const MemoryEntry* entry = nullptr;
};

std::string RenderMemory(const Analysis& analysis, const std::string& task, Lang lang,
                         const std::function<std::string(const std::string&)>& class_of) {
  const Messages& m = MessagesOf(lang);
  const ChartMessages& cm = ChartMessagesOf(lang);
  const std::vector<const Cell*> cells = CellsOf(analysis, task);
  std::vector<const CellKey*> keys;
  std::map<std::string, std::vector<std::string>> machines_of_class;
  for (const Cell* c : cells) {
    keys.push_back(&c->key);
    auto& machines = machines_of_class[class_of(c->key.machine)];
    if (std::find(machines.begin(), machines.end(), c->key.machine) == machines.end()) {
      machines.push_back(c->key.machine);
    }
  }
  KeyParts parts = DifferingParts(keys);
  parts.machine = false;  // the class heading names it; a class of several machines adds it back

  // Two families, each on its own axis; a kind the proto does not name (UNSPECIFIED) gets a third
  // panel of its own rather than joining either.
  struct Panel {
    std::string heading;
    std::vector<MemoryBar> bars;
  };
  std::vector<Panel> panels = {{std::string(m.memory_panel_device), {}}, {std::string(m.memory_panel_host), {}},
                               {std::string(m.mem_kind_unspecified), {}}};
  bool any = false;
  for (const Cell* c : cells) {
    const std::string cls = class_of(c->key.machine);
    std::string setting = SettingLabel(c->key, parts);
    if (machines_of_class[cls].size() > 1) setting = c->key.machine + (setting.empty() ? "" : " · " + setting);
    for (const MemoryEntry& e : c->memory) {
      Panel& panel = panels[IsDeviceMemory(e.kind) ? 0 : e.kind == v1::MEMORY_KIND_UNSPECIFIED ? 2 : 1];
      any = true;
      auto same = std::find_if(panel.bars.begin(), panel.bars.end(), [&](const MemoryBar& b) {
        return b.machine_class == cls && b.kind == e.kind && b.scope == e.scope && b.setting == setting;
      });
      if (same == panel.bars.end()) {
        panel.bars.push_back(MemoryBar{cls, e.kind, e.scope, setting, c, &e});
      } else if (e.bytes.value > same->entry->bytes.value) {
        same->cell = c;
        same->entry = &e;
      }
    }
  }
  if (!any) return "";
  if (panels[2].bars.empty()) panels.pop_back();
  for (Panel& p : panels) {
    std::stable_sort(p.bars.begin(), p.bars.end(), [](const MemoryBar& a, const MemoryBar& b) {
      return std::tie(a.machine_class, a.kind, a.scope, a.setting) < std::tie(b.machine_class, b.kind, b.scope, b.setting);
    });
  }

  constexpr double kLeft = 20, kRow = 36, kPanelGap = 34;
  const std::string title = ChartTitle(m.memory_title, task, analysis, m);
  const ChartHeader header = MakeHeader(title);
  std::string body;
  double y = header.bottom;
  for (const Panel& panel : panels) {
    double vmax = 0, value_w = 0;
    for (const MemoryBar& b : panel.bars) {
      const double gib = b.entry->bytes.value / kGiB;
      vmax = std::max(vmax, gib);
      value_w = std::max(value_w, TextWidth(FormatNumber(gib, lang) + " " + std::string(m.gib)));
    }
    const Scale xs = ValueScale(0, vmax);
    // The bars end early enough for their value to be written after them.
    const double right = kChartWidth - 20 - std::max(value_w + 8, TextWidth(TickText(xs.hi, xs.step, lang)) / 2);
    auto X = [&](double gib) { return xs.At(gib, kLeft, right); };
    body += "<g class=\"panel\">\n";
    body += Text(kLeft, y + 16, FitText(panel.heading + ", " + std::string(m.gib), kChartWidth - 40, 14, true),
                 "font-size=\"14\" font-weight=\"bold\"");
    double row_y = y + 26;
    if (panel.bars.empty()) {
      body += Text(kLeft, row_y + 16, cm.not_measured, "fill=\"#444444\"");
      body += "</g>\n";
      y = row_y + 24 + kPanelGap;
      continue;
    }
    std::string last_class;
    for (const MemoryBar& b : panel.bars) {
      if (b.machine_class != last_class) {
        body += Text(kLeft, row_y + 16, FitText(b.machine_class, kChartWidth - 40, kFontSize, true),
                     "font-weight=\"bold\"");
        row_y += 22;
        last_class = b.machine_class;
      }
      const double gib = b.entry->bytes.value / kGiB;
      const std::string colour = SeriesColour(static_cast<size_t>(b.kind));
      const std::string kind(MemoryKindWording(m, b.kind));
      const std::string value = FormatNumber(gib, lang) + " " + std::string(m.gib);
      const std::string label =
          (b.setting.empty() ? "" : b.setting + " — ") + kind + " — " + b.scope + " [" + b.entry->bytes.source_id + "]";
      std::string cell = b.cell->key.machine;
      for (const std::string* part : {&b.cell->key.backend, &b.cell->key.mode, &b.cell->key.matrix}) {
        if (!part->empty()) cell += " / " + *part;
      }
      cell += " / " + std::string(PhaseWording(m, b.cell->key.phase));
      body += "<g class=\"bar\" data-kind=\"" + XmlEscape(b.entry->label) + "\">\n";
      body += "<title>" +
              XmlEscape(label + ": " + value + " (" + FormatNumber(b.entry->bytes.value, lang) + " " +
                        std::string(m.mem_bytes) + "), " + std::string(cm.peak_in) + " " + cell) +
              "</title>\n";
      body += Text(kLeft + 12, row_y + 12, FitText(label, kChartWidth - 40 - 12));
      body += "<rect x=\"" + Num(kLeft + 12) + "\" y=\"" + Num(row_y + 16) + "\" width=\"" +
              Num(std::max(1.0, X(gib) - kLeft)) + "\" height=\"14.0\" fill=\"" + colour + "\"/>\n";
      body += Text(kLeft + 12 + std::max(1.0, X(gib) - kLeft) + 6, row_y + 28, value);
      body += "</g>\n";
      row_y += kRow;
    }
    // The panel's own axis, in GiB.
    const double axis_left = kLeft + 12, axis_right = right + 12;
    body += "<line x1=\"" + Num(axis_left) + "\" y1=\"" + Num(row_y + 4) + "\" x2=\"" + Num(axis_right) + "\" y2=\"" +
            Num(row_y + 4) + "\" stroke=\"#000000\"/>\n";
    for (int i = 0; i <= xs.Ticks(); ++i) {
      const double v = xs.lo + xs.step * i;
      body += "<line x1=\"" + Num(X(v) + 12) + "\" y1=\"" + Num(row_y + 4) + "\" x2=\"" + Num(X(v) + 12) + "\" y2=\"" +
              Num(row_y + 8) + "\" stroke=\"#000000\"/>\n";
      body += Text(X(v) + 12, row_y + 20, TickText(v, xs.step, lang), "text-anchor=\"middle\"");
    }
    body += "</g>\n";
    y = row_y + 24 + kPanelGap;
  }
  return SvgDocument(y - kPanelGap + 10, "memory", title, cm.memory_desc, header, body);
}

}  // namespace

std::string RenderMemoryChart(const Analysis& analysis, const std::string& task, Lang lang) {
  return RenderMemory(analysis, task, lang, [](const std::string& machine) { return machine; });
}

std::string RenderMemoryChart(const Analysis& analysis, const GuideModel& model, const std::string& task, Lang lang) {
  std::map<std::string, std::string> class_of;
  for (const SeriesConditions& s : model.series) {
    if (!s.machine_class.empty()) class_of.emplace(s.machine, s.machine_class);
  }
  for (const TaskVerdicts& tv : model.verdicts) {
    for (const CellVerdict& v : tv.cells) class_of.emplace(v.key.machine, v.machine_class);
  }
  return RenderMemory(analysis, task, lang, [&](const std::string& machine) {
    auto it = class_of.find(machine);
    return it != class_of.end() ? it->second : machine;
  });
}

}  // namespace benchfleet::synthesis
