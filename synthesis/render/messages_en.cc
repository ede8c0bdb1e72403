#include "synthesis/render/messages.h"

namespace benchfleet::synthesis {

const Messages& MessagesEn() {
  static const Messages m{
      .title = "Sizing guide",
      .simulated = "SIMULATED",
      .simulated_note = "**Warning:** some of these records are simulated; the figures do not describe real hardware.",
      .sources_note = "Every figure is followed by its source id, e.g. `[S3]`. The file `sources.csv` lists each "
                      "source: its runs, their provenance (file:line for imported files) and, for a derived figure, "
                      "the operation (min, max, median, q1, q3) and its inputs.",
      .numbers_note = "Numbers: 3 significant digits (the whole integer part always kept), decimal point. "
                      "A median is shown from 5 accepted runs on; above 20 runs, min/q1/median/q3/max replace the list.",
      .table_section = "Synthesis table",
      .task = "Task",
      .chart_alt = "Figure per call index",
      .col_machine = "Machine",
      .col_backend = "Backend",
      .col_mode = "Mode",
      .col_matrix = "Matrix",
      .col_phase = "Phase",
      .col_metric = "Metric",
      .col_runs = "Accepted runs (in order)",
      .col_range = "Min–max",
      .col_median = "Median",
      .col_excluded = "Excluded runs",
      .distribution = "distribution",
      .dist_min = "min",
      .dist_q1 = "q1",
      .dist_median = "median",
      .dist_q3 = "q3",
      .dist_max = "max",
      .none_value = "—",
      .phase_validation = "validation",
      .phase_cold = "cold",
      .phase_warm = "warm",
      .phase_unspecified = "unspecified",
      .traps_section = "Traps",
      .cache_hits = "Cache hits (excluded)",
      .throughput_drops = "Throughput drops",
      .failed_runs = "Failed runs",
      .other_flags = "Other flags",
      .no_trap = "None.",
      .run = "run",
      .call = "call",
      .chart_title = "Figure per call index",
      .chart_desc = "One line per cell (machine, backend, mode, matrix, phase): the accepted runs' figure by call "
                    "index. Circles: warm runs; squares: cold runs; triangles: other phases.",
      .x_axis = "Call index",
      .legend_warm = "warm",
      .legend_cold = "cold",
      .legend_other = "other",
  };
  return m;
}

}  // namespace benchfleet::synthesis
