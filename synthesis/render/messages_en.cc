#include "synthesis/render/messages.h"

namespace benchfleet::synthesis {

const Messages& MessagesEn() {
  static const Messages m{
      .title = "Sizing guide",
      .simulated = "SIMULATED",
      .simulated_note = "**Warning:** some of these records are simulated; the figures do not describe real hardware.",
      .sources_note = "Every figure is followed by its source id, e.g. `[S3]`. The file `sources.csv` lists each "
                      "source: its runs, their provenance (file:line for imported files) and, for a derived figure, "
                      "the operation (min, max, median, `q1`, `q3`, `cv`, the median's interval `median_ci_low` and `median_ci_high`, "
                      "count, target, or a formula over other sources) and its inputs.",
      .numbers_note = "Numbers: `3` significant digits (the whole integer part always kept), decimal point. "
                      "A median is shown from `5` accepted runs on; above `20` runs, min/`q1`/median/`q3`/max replace "
                      "the list. Runs served from a cache and failed runs are listed but never enter a figure.",
      .spread_note = "Beside every median, from {min_runs} accepted runs on: the {level} confidence interval of the "
                     "median (a percentile bootstrap of {resamples} resamples drawn from a fixed seed, so the same runs "
                     "always give the same interval; computed up to {max_runs} runs) and the coefficient of variation "
                     "(CV: the standard deviation over the mean). Below {min_runs} runs the runs themselves are listed, "
                     "without a spread: so few calls say little about how noisy a setting is.",
      .spread_ci = "{level} CI {low} – {high}",
      .spread_cv = "CV {cv} %",
      .newest_record = "Newest record used: started",
      .skipped_section = "Inputs skipped",
      .skipped_none = "None: every input was read.",
      .skipped_count = "inputs skipped (unreadable, or a record past a bound of README.md \"Record bounds\"):",
      .table_section = "Results per task",
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
      .col_median = "Median (interval, CV)",
      .col_excluded = "Excluded runs",
      .distribution = "distribution",
      .dist_min = "min",
      .dist_q1 = "`q1`",
      .dist_median = "median",
      .dist_q3 = "`q3`",
      .dist_max = "max",
      .none_value = "—",
      .phase_validation = "validation",
      .phase_cold = "cold",
      .phase_warm = "warm",
      .phase_unspecified = "unspecified",
      .traps_section = "Every flag",
      .cache_hits = "Cache hits (excluded)",
      .throughput_drops = "Unexplained throughput drops",
      .failed_runs = "Failed runs",
      .other_flags = "Other flags",
      .drops_throttled = "Throughput drops while the device throttled",
      .drops_contended = "Throughput drops on a busy host (CONTENDED)",
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
      .outputs_section = "Outputs of the same inputs",
      .outputs_intro = "Runs of one task, mode and setting given the same inputs under deterministic settings "
                       "(temperature `0` and a fixed seed, or a ComfyUI graph with its seed: the record's "
                       "`inputs_sha256`) should give the same outputs on every run and every machine, unless their "
                       "spec says otherwise (`outputs.deterministic`). Runs kept out of the figures (cache hits, "
                       "failed or invalidated runs) are not compared. A hash shows its first `12` hex digits; each "
                       "run is named by its short id and its source.",
      .outputs_inputs = "{setting}, inputs {inputs}: ",
      .outputs_same = "the same output {output} on every run: {runs} runs, on {on}.",
      .outputs_mismatch = "`OUTPUT_MISMATCH`: {mismatched} of {runs} runs differ from {output}, the output of the "
                          "first run with these inputs, {run} ({machine}, {phase}, call {call}):",
      .outputs_mismatch_run = "{machine}: run {run} {ref} ({phase}, call {call}) gave {found}",
      .outputs_groups = "{distinct} distinct outputs over {runs} runs ({rule}): {groups}.",
      .outputs_group = "{output} on {on}",
      .outputs_per_machine = "machines may differ: `outputs.deterministic: per_machine`",
      .outputs_not_expected = "no agreement expected: `outputs.deterministic: false`",
      .cond_section = "Appendix: machine conditions",
      .cond_intro = "One entry per series: the runs sharing a conditions fingerprint (measured live), or the runs "
                    "of one imported file on one machine. Versions, dates and sizes are quoted as recorded.",
      .cond_none = "No series.",
      .cond_machine = "Machine",
      .cond_class = "class",
      .cond_os = "Operating system",
      .cond_kernel = "kernel",
      .cond_architecture = "architecture",
      .cond_cpu = "CPU",
      .cond_cores = "logical cores",
      .cond_memory = "Host memory",
      .cond_accelerator = "Accelerator",
      .cond_vendor = "vendor",
      .cond_driver = "driver",
      .cond_accel_memory = "device memory",
      .cond_backend_versions = "Backend versions",
      .cond_agent_version = "Agent version",
      .cond_series_ids = "Series ids",
      .cond_tasks = "Tasks",
      .cond_backends = "Backends",
      .cond_settings = "Settings shared by every run",
      .cond_ran_on = "What each mode ran on, as the server reported it",
      .cond_offloaded = "offloaded layers",
      .cond_backend_attributes = "Reported by the measured server",
      .cond_matrix = "Matrix combinations",
      .cond_dates = "First and last start (UTC)",
      .cond_runs = "Runs",
      .cond_ok_runs = "OK runs",
      .cond_fingerprint = "Conditions fingerprint",
      .cond_file = "Imported file",
      .cond_unknown = "Machine conditions unknown (no conditions.json for this series).",
      .further_heading = "Further headline figures",
      .further_note = "as each backend declares them; the median over the accepted runs that carry the figure when "
                      "there are at least five, else their range",
      .mem_heading = "Memory",
      .mem_note = "peak per kind and scope over the accepted runs; each kind is its own measure",
      .mem_bytes = "B",
      .mem_kind_unspecified = "memory of unspecified kind",
      .mem_kind_process_peak_rss = "process peak RSS (host memory)",
      .mem_kind_process_footprint = "process footprint (host memory, macOS)",
      .mem_kind_device_used = "accelerator memory in use (whole device)",
      .mem_kind_device_buffer = "accelerator buffer reported by the backend",
      .mem_kind_container_peak = "container peak memory (host)",
      .mem_kind_host_buffer = "host-memory buffer reported by the backend",
      .mem_kind_buffer_unknown = "buffer reported by the backend on a device its log does not name (neither host nor device memory claimed)",
      .duration_title = "Duration of each run",
      .duration_desc = "One column per cell (machine, backend, mode, matrix, phase): each accepted run's wall time "
                       "as a point, spread sideways so that none hides another. Circles: warm runs; squares: cold "
                       "runs; triangles: other phases. Excluded runs (cache hits, failures) are not drawn.",
      .duration_y_axis = "Wall time (s)",
      .memory_title = "Peak memory by kind",
      .memory_desc = "Peak memory of each cell per kind and scope, in GiB. Accelerator memory and host memory "
                     "(processes, containers, host buffers) are drawn in separate panels, each with its own axis.",
      .memory_panel_device = "Accelerator memory",
      .memory_panel_host = "Host memory (processes, containers, host buffers)",
      .gib = "GiB",
      .binned_about = "binned: about",
      .binned_per_mark = "runs per mark",
      .runs_word = "runs",
      .reg_section = "Regression checks",
      .reg_intro = "The coordinator's newest check of each machine, task and setting: the runs of a series (the "
                   "sample) against the same machine's earlier runs of that setting (the baseline). A regression "
                   "or an improvement needs both a significant difference and a change of the median beyond the "
                   "threshold. sources.csv lists the runs behind each count.",
      .reg_none_found = "No regression and no improvement.",
      .reg_others = "Other checks",
      .reg_regression = "Regression",
      .reg_improvement = "Improvement",
      .reg_no_change = "No change",
      .reg_not_significant = "Not significant",
      .reg_baseline_too_small = "Baseline too small",
      .reg_sample_too_small = "Sample too small",
      .reg_medians = "{figure} median {sample} vs {baseline} ({change}, threshold {threshold})",
      .reg_test = "{test}: {p}",
      .reg_no_test = "no test, {needed} baseline runs needed",
      .reg_needs = "({needed} runs needed)",
      .reg_never = "(no sample of up to 100 runs could reach the level)",
      .reg_runs = "runs: {sample} vs {baseline} in the baseline ({runs})",
  };
  return m;
}

}  // namespace benchfleet::synthesis
