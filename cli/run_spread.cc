#include "cli/run_spread.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/figures.h"
#include "common/record_validation.h"
#include "common/run_flags.h"
#include "common/stats/spread.h"

namespace benchfleet::cli {
namespace {

// "k=v;k=v" sorted by key, "-" without a matrix.
std::string MatrixText(const v1::RunRecord& r) {
  std::map<std::string, std::string> sorted(r.matrix().begin(), r.matrix().end());
  return sorted.empty() ? "-" : absl::StrJoin(sorted, ";", absl::PairFormatter("="));
}

// The figure's label, with its unit when the label does not say it: "generation tokens/s",
// "TTFT p99 (s)".
std::string FigureHeader(const v1::Metric& m) {
  const std::string label = FigureLabel(m);
  if (m.unit().empty() || LabelSaysUnit(label, m.unit())) return label;
  return absl::StrCat(label, " (", m.unit(), ")");
}

std::string Percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%", fraction * 100);
  return buf;
}

struct Setting {
  std::string agent, task, backend, mode;
  v1::Phase phase = v1::PHASE_UNSPECIFIED;
  std::string matrix, figure;
  auto Tie() const { return std::tie(agent, task, backend, mode, phase, matrix, figure); }
  bool operator<(const Setting& o) const { return Tie() < o.Tie(); }
};

struct Group {
  std::vector<const v1::RunRecord*> runs;
  std::string figure_header;
  bool simulated = false;
};

bool RunOrder(const v1::RunRecord* a, const v1::RunRecord* b) {
  return std::make_tuple(a->start_time().seconds(), a->start_time().nanos(), a->call_index(), a->run_id()) <
         std::make_tuple(b->start_time().seconds(), b->start_time().nanos(), b->call_index(), b->run_id());
}

}  // namespace

std::string FormatRunSpread(const std::vector<v1::RunRecord>& runs, const RunAgents& agents) {
  std::map<Setting, Group> groups;
  for (const v1::RunRecord& r : runs) {
    if (!IsAcceptedRun(r)) continue;
    const v1::Metric* main = MainFigure(r);
    if (main == nullptr) continue;
    Setting key{FormatAgentName(r.agent_id(), agents.Of(r)), r.task(), r.backend(), r.mode(), r.phase(),
                MatrixText(r), main->name()};
    Group& g = groups[key];
    if (g.runs.empty()) g.figure_header = FigureHeader(*main);
    g.runs.push_back(&r);
    g.simulated = g.simulated || r.simulated();
  }
  if (groups.empty()) return "";
  std::vector<std::vector<std::string>> rows = {{"AGENT", "TASK", "BACKEND", "MODE", "PHASE", "MATRIX", "FIGURE", "N",
                                                 "MEDIAN", "95% CI", "CV", "SOURCE"}};
  for (auto& [key, g] : groups) {
    std::sort(g.runs.begin(), g.runs.end(), RunOrder);
    std::vector<double> values;
    for (const v1::RunRecord* r : g.runs) values.push_back(MainFigure(*r)->value());
    std::string median = "-", interval = "-", cv = "-";
    if (values.size() >= static_cast<size_t>(stats::kMinRunsForSpread)) {
      median = FormatFigureNumber(*stats::Median(values));
      if (values.size() <= stats::kMaxFiguresForInterval) {
        if (std::optional<stats::Interval> ci = stats::BootstrapMedianInterval(values)) {
          interval = absl::StrCat(FormatFigureNumber(ci->low), " to ", FormatFigureNumber(ci->high));
        }
      }
      if (std::optional<double> c = stats::CoefficientOfVariation(values)) cv = Percent(*c);
    }
    auto or_dash = [](const std::string& text) { return text.empty() ? std::string("-") : text; };
    rows.push_back({or_dash(key.agent), or_dash(key.task), or_dash(key.backend), or_dash(key.mode), PhaseName(key.phase),
                    key.matrix, g.figure_header, absl::StrCat(values.size()), median, interval, cv,
                    g.simulated ? "SIMULATED" : "measured"});
  }
  return absl::StrCat("main figure per setting over its accepted runs (median, 95% CI of the median and CV from ",
                      stats::kMinRunsForSpread, " runs on):\n", AlignColumns(rows));
}

}  // namespace benchfleet::cli
