#include "synthesis/render/chart_targets.h"

#include <algorithm>
#include <cmath>

namespace benchfleet::synthesis {

std::vector<ChartTarget> ChartTargets(const Analysis& analysis, const GuideModel& model, const std::string& task) {
  std::vector<ChartTarget> out;
  const TaskVerdicts* tv = nullptr;
  for (const TaskVerdicts& t : model.verdicts) {
    if (t.task == task) tv = &t;
  }
  if (tv == nullptr || tv->targets == nullptr || tv->cells.empty()) return out;
  const Cell* cell = FindCell(analysis, tv->cells.front().key);
  if (cell == nullptr) return out;
  const bool rate = cell->better == v1::BETTER_HIGHER;
  // A rate of the task's items per second takes a minimum rate as it is and a maximum time per
  // item inverted; a time in seconds the other way round. Any other unit has no target line.
  const bool per_second = rate && (cell->unit == tv->item + "s/s" || cell->unit == tv->item + "/s");
  const bool seconds = !rate && cell->unit == "s";
  if (!per_second && !seconds) return out;
  const std::vector<UseVerdict>& uses = tv->cells.front().uses;
  for (size_t i = 0; i < tv->targets->uses.size() && i < uses.size(); ++i) {
    const UseTarget& use = tv->targets->uses[i];
    ChartTarget t;
    t.use = use.name;
    t.source = uses[i].target;
    if (use.min_items_per_second) {
      t.inverted = seconds;
      t.value = seconds ? 1 / use.min_items_per_second->value : use.min_items_per_second->value;
    } else if (use.max_seconds_per_item) {
      t.inverted = per_second;
      t.value = per_second ? 1 / use.max_seconds_per_item->value : use.max_seconds_per_item->value;
    } else {
      continue;
    }
    if (!(t.value > 0) || !std::isfinite(t.value)) continue;
    t.at_least = rate;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace benchfleet::synthesis
