// The wording of the guide's charts (charts.cc, chart_*.cc), per language: what the charts print
// beyond the words they share with the document (messages.h). No figure is part of a message.
// Internal to synthesis/render; constant data, thread-safe.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_MESSAGES_CHARTS_H_
#define BENCHFLEET_SYNTHESIS_RENDER_MESSAGES_CHARTS_H_

#include <string_view>

#include "synthesis/render/render.h"

namespace benchfleet::synthesis {

struct ChartMessages {
  // Every chart.
  std::string_view shared;           // "All: " before the parts every line or column shares
  std::string_view key_warm, key_cold, key_other;  // the phase key's words, next to their marker
  std::string_view median_of;        // "median of" (followed by a count of runs)
  // Figure by call index (chart_call_index.cc).
  std::string_view call_desc;
  // Duration of each run (charts.cc).
  std::string_view duration_desc;
  // Main figure by machine class (chart_class.cc).
  std::string_view class_title;      // "Main figure by machine class"
  std::string_view class_desc;
  std::string_view class_cold_only;  // "cold only", after a setting measured cold only
  std::string_view class_target;     // "target", in a target line's tooltip
  std::string_view worst_run;        // "worst run", the verdict's figure of a cell of < 5 runs
  // Sweeps (chart_sweep.cc).
  std::string_view sweep_title;      // "Sweep of {axis}"
  std::string_view sweep_desc;
  std::string_view sweep_figure;     // "{figure} by {axis}", the first panel's heading
  std::string_view sweep_latency;    // "{latency} against {figure}", the second panel's heading
  std::string_view sweep_range;      // "range", a bar standing for a latency of fewer than five runs
  // Peak memory (charts.cc).
  std::string_view memory_desc;
  std::string_view not_measured;     // a panel without any figure
  std::string_view peak_in;          // "peak in" (followed by the cell holding the maximum)
};

const ChartMessages& ChartMessagesFr();
const ChartMessages& ChartMessagesEn();
inline const ChartMessages& ChartMessagesOf(Lang lang) {
  return lang == Lang::kFr ? ChartMessagesFr() : ChartMessagesEn();
}

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_MESSAGES_CHARTS_H_
