// A task's targets (targets.yaml, through the verdicts of the GuideModel) expressed in the unit of
// its main figure, for the charts to draw as lines. Internal to synthesis/render; pure functions.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_CHART_TARGETS_H_
#define BENCHFLEET_SYNTHESIS_RENDER_CHART_TARGETS_H_

#include <string>
#include <vector>

#include "synthesis/analysis/guide_model.h"
#include "synthesis/analysis/sources.h"
#include "synthesis/analysis/table.h"

namespace benchfleet::synthesis {

struct ChartTarget {
  std::string use;        // the use's name, verbatim
  double value = 0;       // in the main figure's unit
  bool at_least = false;  // a rate: the figure must reach it; a time: stay under it
  bool inverted = false;  // value = 1 / source (items/s from s/item, or the other way)
  Figure source;          // the target as the verdicts cite it ("target" source)
};

// The targets of `task` that its main figure can be compared with: for a rate per second
// (better higher, unit "<item>s/s" such as
// "tokens/s") each use's min_items_per_second, or 1 / max_seconds_per_item; for
// a time in seconds (better lower, unit "s") max_seconds_per_item, or 1 / min_items_per_second.
// Empty when the task has no targets, no judged cell, or a figure in any other unit.
std::vector<ChartTarget> ChartTargets(const Analysis& analysis, const GuideModel& model, const std::string& task);

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_CHART_TARGETS_H_
