// The main figure by machine class (render.h, RenderClassChart): one row per judged setting, grouped
// by class, each accepted run a dot; the figure the verdict uses marked; the task's targets as lines.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "synthesis/render/chart_axes.h"
#include "synthesis/render/chart_svg.h"
#include "synthesis/render/chart_targets.h"
#include "synthesis/render/inline_text.h"
#include "synthesis/render/messages.h"
#include "synthesis/render/messages_charts.h"
#include "synthesis/render/render.h"
#include "synthesis/render/run_bins.h"

namespace benchfleet::synthesis {
namespace {

// Deterministic spread in [-0.5, 0.5) (the golden ratio's multiples, as the duration chart).
double Jitter(size_t k) {
  double f = static_cast<double>(k) * 0.6180339887498949;
  return f - std::floor(f) - 0.5;
}

struct Row {
  const CellVerdict* verdict;
  const Cell* cell;
  std::vector<std::string> label;  // one or two lines
  bool heading = false;            // a class' heading line rather than a setting
  std::string heading_text;
};

}  // namespace

std::string ClassChartFileName(const std::string& task, Lang lang) {
  return "chart-" + TaskSlug(task) + "-classes." + std::string(LangCode(lang)) + ".svg";
}

std::string RenderClassChart(const Analysis& analysis, const GuideModel& model, const std::string& task, Lang lang) {
  const Messages& m = lang == Lang::kFr ? MessagesFr() : MessagesEn();
  const ChartMessages& cm = ChartMessagesOf(lang);
  const TaskVerdicts* tv = nullptr;
  for (const TaskVerdicts& t : model.verdicts) {
    if (t.task == task) tv = &t;
  }
  if (tv == nullptr || tv->cells.empty()) return "";
  // The judged cells that share the first one's figure (a task's cells normally all do).
  std::vector<std::pair<const CellVerdict*, const Cell*>> judged;
  for (const CellVerdict& v : tv->cells) {
    const Cell* c = FindCell(analysis, v.key);
    if (c == nullptr || c->runs.empty()) continue;
    if (!judged.empty() && (c->metric != judged.front().second->metric || c->unit != judged.front().second->unit)) {
      continue;
    }
    judged.emplace_back(&v, c);
  }
  if (judged.empty()) return "";
  const Cell& first = *judged.front().second;

  std::vector<const CellKey*> keys;
  std::map<std::string, std::vector<std::string>> machines_of_class;
  std::map<std::string, size_t> rows_of_class;
  std::vector<std::string> classes;  // in verdict order (by class)
  for (const auto& [v, c] : judged) {
    keys.push_back(&c->key);
    auto& machines = machines_of_class[v->machine_class];
    if (std::find(machines.begin(), machines.end(), c->key.machine) == machines.end()) machines.push_back(c->key.machine);
    if (rows_of_class[v->machine_class]++ == 0) classes.push_back(v->machine_class);
  }
  KeyParts parts = DifferingParts(keys);
  parts.machine = false;
  std::string shared = SharedLabel(first.key, [&] {
    KeyParts p = parts;
    p.machine = true;  // the machines are named by class
    return p;
  }());
  // "cold only" on each row measured so, or once when every row is.
  const bool all_cold = std::all_of(judged.begin(), judged.end(),
                                    [](const auto& j) { return j.second->key.phase != v1::PHASE_WARM; });
  if (all_cold) shared += (shared.empty() ? "" : " · ") + std::string(cm.class_cold_only);

  const std::vector<ChartTarget> targets = ChartTargets(analysis, model, task);

  // The rows: a class of one setting is one row named by its class; a class of several has a
  // heading and a row per setting.
  constexpr double kLabelMax = 250;
  std::vector<Row> rows;
  double label_w = 0;
  for (const std::string& cls : classes) {
    const bool grouped = rows_of_class[cls] > 1;
    if (grouped) {
      Row h{nullptr, nullptr, {}, true, FitText(cls, kLabelMax, kFontSize, true)};
      label_w = std::max(label_w, TextWidth(h.heading_text, kFontSize, true));
      rows.push_back(std::move(h));
    }
    for (const auto& [v, c] : judged) {
      if (v->machine_class != cls) continue;
      std::string setting = SettingLabel(c->key, parts);
      if (machines_of_class[cls].size() > 1) setting = c->key.machine + (setting.empty() ? "" : " · " + setting);
      std::string label = grouped ? setting : cls + (setting.empty() ? "" : " · " + setting);
      if (c->key.phase != v1::PHASE_WARM && !all_cold) label += " (" + std::string(cm.class_cold_only) + ")";
      Row r{v, c, WrapText(label, kLabelMax - (grouped ? 12 : 0), 2), false, ""};
      for (const std::string& l : r.label) label_w = std::max(label_w, TextWidth(l) + (grouped ? 12 : 0));
      rows.push_back(std::move(r));
    }
  }

  double vmin = 0, vmax = 0;
  bool any = false;
  auto see = [&](double v) {
    if (!any) vmin = vmax = v;
    vmin = std::min(vmin, v);
    vmax = std::max(vmax, v);
    any = true;
  };
  for (const auto& [v, c] : judged) {
    for (const RunFigure& rf : c->runs) see(rf.figure.value);
  }
  for (const ChartTarget& t : targets) see(t.value);
  const Scale xs = ValueScale(vmin, vmax);

  std::string title = std::string(cm.class_title) + " — " + task;
  if (analysis.simulated) title += " (" + std::string(m.simulated) + ")";
  const ChartHeader header = MakeHeader(title);
  std::string body;
  double y = header.bottom;
  y = AppendSharedLine(cm.shared, shared, y, &body);
  const double left = 16 + label_w + 14;
  const double right = kChartWidth - 16 - TextWidth(TickText(xs.hi, xs.step, lang)) / 2;
  auto X = [&](double v) { return xs.At(v, left, right); };

  // The targets' names above the plot, each on the first line where it meets no other.
  struct Placed {
    double x0, x1;
    size_t level;
  };
  std::vector<Placed> placed;
  std::vector<std::string> target_text;
  size_t levels = 0;
  for (const ChartTarget& t : targets) {
    std::string text = t.use + (t.at_least ? " ≥ " : " ≤ ") + FormatNumber(t.value, lang);
    text = FitText(text, right - left);
    const double w = TextWidth(text);
    double x0 = std::clamp(X(t.value) - w / 2, 16.0, kChartWidth - 16 - w);
    size_t level = 0;
    for (;; ++level) {
      bool free = true;
      for (const Placed& p : placed) {
        if (p.level == level && x0 < p.x1 + 6 && p.x0 < x0 + w + 6) free = false;
      }
      if (free) break;
    }
    placed.push_back(Placed{x0, x0 + w, level});
    target_text.push_back(std::move(text));
    levels = std::max(levels, level + 1);
  }
  const double top = y + 10 + kLineGap * static_cast<double>(levels);
  constexpr double kRowH = 34, kHeadingH = 20;
  double bottom = top + 6;
  for (const Row& r : rows) bottom += r.heading ? kHeadingH : kRowH;

  body += HorizontalAxis(xs, left, right, top, bottom, lang);
  body += AxisTitle(FigureName(first.label, first.unit), (left + right) / 2, bottom + 36, right - left, false);

  // Rows: their names at the left, the runs as dots, the verdict's figure as a black tick.
  double ry = top + 6;
  size_t class_index = 0;
  std::string last_class;
  for (const Row& r : rows) {
    if (r.heading) {
      body += Text(16, ry + 15, r.heading_text, "font-weight=\"bold\"");
      ry += kHeadingH;
      continue;
    }
    if (r.verdict->machine_class != last_class) {
      if (!last_class.empty()) ++class_index;
      last_class = r.verdict->machine_class;
    }
    const double mid = ry + kRowH / 2;
    const bool grouped = rows_of_class[r.verdict->machine_class] > 1;
    const double lx = 16 + (grouped ? 12 : 0);
    const double first_baseline = mid + 4 - kLineGap / 2 * static_cast<double>(r.label.size() - 1);
    for (size_t l = 0; l < r.label.size(); ++l) {
      body += Text(lx, first_baseline + kLineGap * static_cast<double>(l), r.label[l]);
    }
    body += "<line x1=\"" + Num(left) + "\" y1=\"" + Num(ry + kRowH) + "\" x2=\"" + Num(right) + "\" y2=\"" +
            Num(ry + kRowH) + "\" stroke=\"#f0f0f0\"/>\n";
    const std::string colour = SeriesColour(class_index);
    const bool cold = r.cell->key.phase != v1::PHASE_WARM;
    const std::string fill = cold ? "#ffffff" : colour;
    body += "<g class=\"setting\" stroke=\"" + colour + "\" fill=\"" + fill + "\">\n";
    body += "<title>" + XmlEscape(r.verdict->machine_class + " · " + Join(r.label, " ")) + "</title>\n";
    const MarkerShape shape = cold ? MarkerShape::kSquare : MarkerShape::kCircle;
    const Cell& c = *r.cell;
    if (c.runs.size() > kBinRunsAbove && c.q1 && c.q3 && c.min && c.max) {
      // Too many runs for a dot each: the range as a line, the quartiles as a box.
      body += "<line x1=\"" + Num(X(c.min->value)) + "\" y1=\"" + Num(mid) + "\" x2=\"" + Num(X(c.max->value)) +
              "\" y2=\"" + Num(mid) + "\" stroke-width=\"1\"><title>" +
              XmlEscape(std::string(m.dist_min) + " " + Ref(*c.min, lang) + ", " + std::string(m.dist_max) + " " +
                        Ref(*c.max, lang)) +
              "</title></line>\n";
      body += "<rect x=\"" + Num(X(c.q1->value)) + "\" y=\"" + Num(mid - 7) + "\" width=\"" +
              Num(std::max(1.0, X(c.q3->value) - X(c.q1->value))) + "\" height=\"14.0\" fill-opacity=\"0.4\"><title>" +
              XmlEscape("q1 " + Ref(*c.q1, lang) + ", q3 " + Ref(*c.q3, lang) + " (" + std::to_string(c.runs.size()) +
                        " " + std::string(m.runs_word) + ")") +
              "</title></rect>\n";
    } else {
      size_t k = 0;
      for (const RunFigure& rf : c.runs) {
        body += Marker(shape, X(rf.figure.value), mid + Jitter(k++) * 16,
                       "<title>" +
                           XmlEscape(std::string(m.run) + " " + rf.run_id + ": " +
                                     FormatNumber(rf.figure.value, lang) + " [" + rf.figure.source_id + "]") +
                           "</title>",
                       "class=\"run\" stroke-width=\"1.5\"");
      }
    }
    body += "</g>\n";
    // The figure the verdict judged (median, or worst run).
    const Figure& f = r.verdict->figure;
    const std::string basis = r.verdict->basis == "median" ? std::string(m.dist_median) : std::string(cm.worst_run);
    body += "<line class=\"basis\" x1=\"" + Num(X(f.value)) + "\" y1=\"" + Num(mid - 11) + "\" x2=\"" +
            Num(X(f.value)) + "\" y2=\"" + Num(mid + 11) + "\" stroke=\"#000000\" stroke-width=\"2\"><title>" +
            XmlEscape(basis + ": " + Ref(f, lang)) + "</title></line>\n";
    ry += kRowH;
  }

  // The targets: a dashed line across the rows, its name above.
  for (size_t i = 0; i < targets.size(); ++i) {
    const ChartTarget& t = targets[i];
    const double x = X(t.value);
    std::string tip = t.use + ": " + (t.at_least ? "≥ " : "≤ ") + FormatNumber(t.value, lang) + " " + first.unit;
    tip += " (" + std::string(cm.class_target) + " " + (t.inverted ? "1 / " : "") + Ref(t.source, lang) + " " +
           t.source.unit + ")";
    body += "<g class=\"target\">\n<title>" + XmlEscape(tip) + "</title>\n";
    body += "<line x1=\"" + Num(x) + "\" y1=\"" + Num(top - 4) + "\" x2=\"" + Num(x) + "\" y2=\"" + Num(bottom) +
            "\" stroke=\"#555555\" stroke-width=\"1.5\" stroke-dasharray=\"6 3\"/>\n";
    const double baseline = y + 10 + kLineGap * static_cast<double>(placed[i].level) + 2;
    body += Text(placed[i].x0, baseline, target_text[i], "fill=\"#333333\"");
    body += "</g>\n";
  }

  std::string desc(cm.class_desc);
  return SvgDocument(bottom + 50, "classes", title, desc, header, body);
}

}  // namespace benchfleet::synthesis
