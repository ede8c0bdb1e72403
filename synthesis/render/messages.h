// The guide's message catalogue: every word the render step prints, per language. No figure is
// ever part of a message; figures are formatted by FormatNumber and inserted by the renderer.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_MESSAGES_H_
#define BENCHFLEET_SYNTHESIS_RENDER_MESSAGES_H_

#include <string_view>

namespace benchfleet::synthesis {

struct Messages {
  std::string_view title;            // "Sizing guide"
  std::string_view simulated;        // "SIMULATED"
  std::string_view simulated_note;   // warning paragraph when simulated
  std::string_view sources_note;     // how to read [S..] and sources.csv
  std::string_view numbers_note;     // the number rule
  std::string_view table_section;    // "Synthesis table"
  std::string_view task;             // "Task"
  std::string_view chart_alt;        // alt text of the chart link
  std::string_view col_machine, col_backend, col_mode, col_matrix, col_phase, col_metric, col_runs,
      col_range, col_median, col_excluded;
  std::string_view distribution;     // prefix for min/q1/median/q3/max
  std::string_view dist_min, dist_q1, dist_median, dist_q3, dist_max;
  std::string_view none_value;       // "—"
  std::string_view phase_validation, phase_cold, phase_warm, phase_unspecified;
  std::string_view traps_section;    // "Traps"
  std::string_view cache_hits, throughput_drops, failed_runs, other_flags;
  std::string_view no_trap;          // "None."
  std::string_view run;              // "run"
  std::string_view call;             // "call"
  std::string_view chart_title;      // "Figure per call index"
  std::string_view chart_desc;       // description prefix
  std::string_view x_axis;           // "Call index"
  std::string_view legend_warm, legend_cold, legend_other;
};

const Messages& MessagesFr();
const Messages& MessagesEn();

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_MESSAGES_H_
