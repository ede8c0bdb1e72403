#include "synthesis/render/render.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "synthesis/render/messages.h"
#include "synthesis/render/run_bins.h"
#include "synthesis/render/chart_axes.h"
#include "synthesis/render/inline_text.h"
#include "synthesis/render/sections.h"

namespace benchfleet::synthesis {
namespace {

// A figure's name with its unit, once: "generation tokens/s (tokens/s)" reads "generation tokens/s".
std::string FigureName(const std::string& label, const std::string& unit) {
  if (unit.empty() || (label.size() >= unit.size() && label.compare(label.size() - unit.size(), unit.size(), unit) == 0)) {
    return label;
  }
  return label + " (" + unit + ")";
}

const Messages& Msg(Lang lang) { return lang == Lang::kFr ? MessagesFr() : MessagesEn(); }

std::string_view PhaseName(v1::Phase phase, const Messages& m) {
  switch (phase) {
    case v1::PHASE_VALIDATION: return m.phase_validation;
    case v1::PHASE_COLD: return m.phase_cold;
    case v1::PHASE_WARM: return m.phase_warm;
    default: return m.phase_unspecified;
  }
}

std::string KeyLabel(const CellKey& key, const Messages& m) {
  std::vector<std::string> parts;
  for (const std::string* part : {&key.machine, &key.backend, &key.mode, &key.matrix}) {
    if (!part->empty()) parts.push_back(*part);
  }
  parts.emplace_back(PhaseName(key.phase, m));
  return Join(parts, " / ");
}

bool HasMemory(const Analysis& a, const std::string& task) {
  return std::any_of(a.cells.begin(), a.cells.end(),
                     [&task](const Cell& c) { return c.key.task == task && !c.memory.empty(); });
}

std::string Title(const Analysis& a, const Messages& m) {
  std::string t(m.title);
  if (a.simulated) t += " (" + std::string(m.simulated) + ")";
  return t;
}

void RenderTable(const Analysis& a, const std::string& task, Lang lang, const Messages& m, std::string& out) {
  out += "### " + std::string(m.task) + " `" + task + "`\n\n";
  out += "![" + std::string(m.chart_alt) + " — " + MdCell(task) + "](" + ChartFileName(task, lang) + ")\n\n";
  out += "![" + std::string(m.duration_title) + " — " + MdCell(task) + "](" + DurationChartFileName(task, lang) +
         ")\n\n";
  if (HasMemory(a, task)) {
    out += "![" + std::string(m.memory_title) + " — " + MdCell(task) + "](" + MemoryChartFileName(task, lang) +
           ")\n\n";
  }
  out += "| " + Join({std::string(m.col_machine), std::string(m.col_backend), std::string(m.col_mode),
                      std::string(m.col_matrix), std::string(m.col_phase), std::string(m.col_metric),
                      std::string(m.col_runs), std::string(m.col_range), std::string(m.col_median),
                      std::string(m.col_excluded)},
                     " | ") +
         " |\n";
  out += "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Cell& c : a.cells) {
    if (c.key.task != task) continue;
    std::string values;
    if (c.distribution_only && c.min && c.q1 && c.median && c.q3 && c.max) {
      values = std::string(m.distribution) + ": " + std::string(m.dist_min) + " " + Ref(*c.min, lang) + ", " +
               std::string(m.dist_q1) + " " + Ref(*c.q1, lang) + ", " + std::string(m.dist_median) + " " +
               Ref(*c.median, lang) + ", " + std::string(m.dist_q3) + " " + Ref(*c.q3, lang) + ", " +
               std::string(m.dist_max) + " " + Ref(*c.max, lang);
    } else {
      std::vector<std::string> list;
      for (const RunFigure& rf : c.runs) list.push_back(Ref(rf.figure, lang));
      values = list.empty() ? std::string(m.none_value) : Join(list, ", ");
    }
    // One run has a value, not a range (its value is already listed).
    std::string range = c.min && c.max && c.runs.size() > 1 ? Ref(*c.min, lang) + " – " + Ref(*c.max, lang)
                                                             : std::string(m.none_value);
    std::string median = c.median ? Ref(*c.median, lang) : std::string(m.none_value);
    std::string metric = FigureName(c.label, c.unit);
    auto ident = [&m](const std::string& text) { return text.empty() ? std::string(m.none_value) : Code(text); };
    out += "| " + Join({ident(c.key.machine), ident(c.key.backend), ident(c.key.mode), ident(c.key.matrix),
                        std::string(PhaseName(c.key.phase, m)), Code(metric), values, range, median,
                        c.excluded_count ? RefCount(*c.excluded_count) : std::string(m.none_value)},
                       " | ") +
           " |\n";
  }
  out += "\n";
  // Further headline figures per cell, under the table, by the backend's rank.
  std::string further;
  for (const Cell& c : a.cells) {
    if (c.key.task != task || c.further.empty()) continue;
    further += "- " + Code(KeyLabel(c.key, m)) + "\n";
    for (const FurtherFigure& f : c.further) {
      std::string value = f.median                ? std::string(m.dist_median) + " " + Ref(*f.median, lang)
                          : f.min && f.max        ? Ref(*f.min, lang) + " – " + Ref(*f.max, lang)
                          : f.min                 ? Ref(*f.min, lang)
                                                  : std::string(m.none_value);
      further += "  - " + Code(FigureName(f.label, f.unit)) + (lang == Lang::kFr ? " : " : ": ") + value + "\n";
    }
  }
  if (!further.empty()) {
    out += "**" + std::string(m.further_heading) + "** (" + std::string(m.further_note) + ")\n\n" + further + "\n";
  }
  // Memory per cell and kind, under the table: the kind's own wording, its scope and the record's
  // measuring method verbatim; the byte figure is the source's own (no unit conversion, so the
  // number test recomputes it as is).
  std::string memory;
  for (const Cell& c : a.cells) {
    if (c.key.task != task || c.memory.empty()) continue;
    memory += "- " + Code(KeyLabel(c.key, m)) + "\n";
    for (const MemoryEntry& e : c.memory) {
      memory += "  - " + std::string(MemoryKindWording(m, e.kind)) + (e.scope.empty() ? "" : ", " + Code(e.scope)) +
                (lang == Lang::kFr ? " : " : ": ") + Ref(e.bytes, lang) + " " + std::string(m.mem_bytes) +
                (e.source.empty() ? "" : " — " + Code(e.source)) + "\n";
    }
  }
  if (!memory.empty()) {
    out += "**" + std::string(m.mem_heading) + "** (" + std::string(m.mem_note) + ")\n\n" + memory + "\n";
  }
}

enum class TrapKind { kCache, kDrop, kFailed, kOther };

TrapKind KindOf(const Trap& t) {
  if (t.code == "CACHE_HIT" || t.code == "PROMPT_CACHE_USED") return TrapKind::kCache;
  if (t.code == "THROUGHPUT_DROP") return TrapKind::kDrop;
  if (t.code == "FAILED") return TrapKind::kFailed;
  return TrapKind::kOther;
}

void RenderTraps(const Analysis& a, const Messages& m, std::string& out) {
  out += "## " + std::string(m.traps_section) + "\n\n";
  const std::pair<TrapKind, std::string_view> sections[] = {{TrapKind::kCache, m.cache_hits},
                                                            {TrapKind::kDrop, m.throughput_drops},
                                                            {TrapKind::kFailed, m.failed_runs},
                                                            {TrapKind::kOther, m.other_flags}};
  for (const auto& [kind, heading] : sections) {
    std::string lines;
    for (const Trap& t : a.traps) {
      if (KindOf(t) != kind) continue;
      lines += "- " + Code(t.key.task) + " — " + Code(KeyLabel(t.key, m)) + " — " + std::string(m.run) + " " +
               Code(t.run_id) + " (" + std::string(m.call) + " " + Code(std::to_string(t.call_index)) + ") — " +
               Code(t.code) + (t.reason.empty() ? "" : ": " + Code(t.reason)) + "\n";
    }
    if (kind == TrapKind::kOther && lines.empty()) continue;
    out += "### " + std::string(heading) + "\n\n" + (lines.empty() ? std::string(m.no_trap) + "\n" : lines) + "\n";
  }
}




}  // namespace

std::string_view LangCode(Lang lang) { return lang == Lang::kFr ? "fr" : "en"; }

std::optional<Lang> ParseLang(std::string_view code) {
  if (code == "fr") return Lang::kFr;
  if (code == "en") return Lang::kEn;
  return std::nullopt;
}

std::string FormatNumber(double v, Lang lang) {
  if (!std::isfinite(v)) return std::isnan(v) ? "NaN" : (v > 0 ? "∞" : "-∞");
  constexpr int kSignificant = 3;
  int decimals = 0;
  if (v != 0) {
    int exponent = static_cast<int>(std::floor(std::log10(std::fabs(v))));
    decimals = std::max(0, kSignificant - 1 - exponent);
    std::string s = Fixed(v, decimals);
    // Rounding may carry into a new digit (99.96 -> 100.0): drop one decimal then.
    double rounded = std::fabs(std::stod(s));
    if (decimals > 0 && rounded != 0 && static_cast<int>(std::floor(std::log10(rounded))) > exponent) --decimals;
  } else {
    decimals = kSignificant - 1;
  }
  std::string s = Fixed(v, decimals);
  if (lang == Lang::kFr) std::replace(s.begin(), s.end(), '.', ',');
  return s;
}

std::string TaskSlug(const std::string& task) {
  std::string out;
  for (unsigned char c : task) {
    if (c < 0x80 && std::isalnum(c)) {
      out += static_cast<char>(std::tolower(c));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "task" : out;
}

std::string ChartFileName(const std::string& task, Lang lang) {
  return "chart-" + TaskSlug(task) + "." + std::string(LangCode(lang)) + ".svg";
}

std::vector<std::string> TasksOf(const Analysis& analysis) {
  std::vector<std::string> tasks;
  for (const Cell& c : analysis.cells) {
    if (tasks.empty() || tasks.back() != c.key.task) {
      if (std::find(tasks.begin(), tasks.end(), c.key.task) == tasks.end()) tasks.push_back(c.key.task);
    }
  }
  return tasks;
}

std::string RenderMarkdown(const Analysis& analysis, Lang lang) {
  const Messages& m = Msg(lang);
  std::string out = "# " + Title(analysis, m) + "\n\n";
  if (analysis.simulated) out += std::string(m.simulated_note) + "\n\n";
  out += std::string(m.sources_note) + "\n\n" + std::string(m.numbers_note) + "\n\n";
  out += "## " + std::string(m.table_section) + "\n\n";
  for (const std::string& task : TasksOf(analysis)) RenderTable(analysis, task, lang, m, out);
  RenderTraps(analysis, m, out);
  return out;
}

std::string RenderGuideMarkdown(const Analysis& analysis, const GuideModel& model,
                                const std::vector<std::string>& skipped, Lang lang) {
  const Messages& m = Msg(lang);
  std::string out = "# " + Title(analysis, m) + "\n\n";
  if (analysis.simulated) out += std::string(m.simulated_note) + "\n\n";
  std::string newest;
  for (const auto& s : model.series) newest = std::max(newest, s.last_start);
  if (!newest.empty()) out += std::string(m.newest_record) + " " + Code(newest) + ".\n\n";
  out += std::string(m.sources_note) + "\n\n" + std::string(m.numbers_note) + "\n\n";
  RenderConditionsSection(model, lang, out);
  out += "## " + std::string(m.table_section) + "\n\n";
  for (const std::string& task : TasksOf(analysis)) RenderTable(analysis, task, lang, m, out);
  RenderTraps(analysis, m, out);
  RenderVerdictsSection(model, lang, out);
  RenderThresholdsSection(model, lang, out);
  RenderCostSection(model, lang, out);
  RenderRulesSection(model, lang, out);
  out += "## " + std::string(m.skipped_section) + "\n\n";
  if (skipped.empty()) {
    out += std::string(m.skipped_none) + "\n";
  } else {
    for (const auto& line : skipped) out += "- " + Code(line) + "\n";
  }
  return out;
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
    std::string label = KeyLabel(c.key, m);
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
