// The guide's message catalogue: every word the render step prints, per language. No figure is
// ever part of a message; figures are formatted by FormatNumber and inserted by the renderer.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_MESSAGES_H_
#define BENCHFLEET_SYNTHESIS_RENDER_MESSAGES_H_

#include <string_view>

#include "benchfleet/v1/record.pb.h"
#include "synthesis/render/render.h"

namespace benchfleet::synthesis {

struct Messages {
  std::string_view title;            // "Sizing guide"
  std::string_view simulated;        // "SIMULATED"
  std::string_view simulated_note;   // warning paragraph when simulated
  std::string_view sources_note;     // how to read [S..] and sources.csv
  std::string_view numbers_note;     // the number rule
  // The spread beside a median (spread_text.h): the note of "How to read" ({min_runs}, {level},
  // {resamples}, {max_runs}), the interval ({level}, {low}, {high}) and the coefficient of
  // variation ({cv}, in %).
  std::string_view spread_note;
  std::string_view spread_ci;
  std::string_view spread_cv;
  std::string_view newest_record;    // "Newest record:" (followed by its start time)
  std::string_view skipped_section;  // "Inputs skipped"
  std::string_view skipped_none;     // "None: every input was read."
  std::string_view skipped_count;    // after the number: "inputs skipped (unreadable, or past a record bound ...):"
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
  // Throughput drops whose run the device throttled during, and those on a busy host (CONTENDED);
  // throughput_drops heads the unexplained ones.
  std::string_view drops_throttled, drops_contended;
  std::string_view no_trap;          // "None."
  std::string_view run;              // "run"
  std::string_view call;             // "call"
  std::string_view chart_title;      // "Figure per call index"
  std::string_view chart_desc;       // description prefix
  std::string_view x_axis;           // "Call index"
  std::string_view legend_warm, legend_cold, legend_other;
  // The outputs of the same inputs across machines (render_outputs.cc). Templates with "{name}"
  // placeholders (Fill in inline_text.h).
  std::string_view outputs_section;       // "Outputs of the same inputs"
  std::string_view outputs_intro;
  std::string_view outputs_inputs;        // {setting} {inputs}: the start of a line
  std::string_view outputs_same;          // {output} {runs} {on}: one output on every run
  std::string_view outputs_mismatch;      // {mismatched} {runs} {output} {run} {machine} {phase} {call}
  std::string_view outputs_mismatch_run;  // {machine} {run} {ref} {phase} {call} {found}
  std::string_view outputs_groups;        // {distinct} {runs} {rule} {groups}: no agreement expected
  std::string_view outputs_group;         // {output} {on}: one group
  std::string_view outputs_per_machine;   // {rule} of outputs_groups for per_machine
  std::string_view outputs_not_expected;  // {rule} of outputs_groups for false
  // Section 1, conditions of every series (render_conditions.cc).
  std::string_view cond_section;     // "Conditions"
  std::string_view cond_intro;       // what one series is
  std::string_view cond_none;        // no series
  std::string_view cond_machine, cond_class, cond_os, cond_kernel, cond_architecture, cond_cpu, cond_cores,
      cond_memory, cond_accelerator, cond_vendor, cond_driver, cond_accel_memory, cond_backend_versions,
      cond_agent_version, cond_series_ids, cond_tasks, cond_backends, cond_settings, cond_ran_on, cond_offloaded,
      cond_backend_attributes, cond_matrix, cond_dates,
      cond_runs, cond_ok_runs, cond_fingerprint, cond_file;
  std::string_view cond_unknown;     // no conditions.json for the series
  // Memory per kind under each task's table (render.cc). One wording per kind: process memory is
  // never called GPU memory.
  // The further headline figures of each cell (its backend's declaration), under the table.
  std::string_view further_heading;  // "Further headline figures"
  std::string_view further_note;     // median over the accepted runs that carry it, else their range
  std::string_view mem_heading;      // "Memory"
  std::string_view mem_note;         // peak per kind and scope over the accepted runs
  std::string_view mem_bytes;        // unit after a byte figure: "B" / "octets"
  std::string_view mem_kind_unspecified, mem_kind_process_peak_rss, mem_kind_process_footprint,
      mem_kind_device_used, mem_kind_device_buffer, mem_kind_container_peak, mem_kind_host_buffer,
      mem_kind_buffer_unknown;
  // Duration and memory charts (charts.cc).
  std::string_view duration_title;   // "Duration of each run"
  std::string_view duration_desc;
  std::string_view duration_y_axis;  // "Wall time (s)"
  std::string_view memory_title;     // "Peak memory by kind"
  std::string_view memory_desc;
  std::string_view memory_panel_device, memory_panel_host;
  std::string_view gib;              // "GiB" / "Gio"
  // Charts of cells with many runs (run_bins.h): "binned: about K runs per mark".
  std::string_view binned_about;     // "binned: about"
  std::string_view binned_per_mark;  // "runs per mark"
  std::string_view runs_word;        // "runs", after a count in a mark's tooltip
  // Regression checks (render_regression.cc): the coordinator's verdicts, one line each.
  std::string_view reg_section;      // "Regression checks"
  std::string_view reg_intro;        // what a check compares and what a verdict needs
  std::string_view reg_none_found;   // "No regression and no improvement."
  std::string_view reg_others;       // "Other checks", before each other kind and its count
  std::string_view reg_regression, reg_improvement, reg_no_change, reg_not_significant, reg_baseline_too_small,
      reg_sample_too_small;          // the kinds
  std::string_view reg_medians;      // "{figure} median {sample} vs {baseline} ({change}, threshold {threshold})"
  std::string_view reg_test;         // "{test}: {p}"
  std::string_view reg_no_test;      // BASELINE_TOO_SMALL: "no test, {needed} baseline runs needed"
  std::string_view reg_needs;        // SAMPLE_TOO_SMALL: "({needed} runs needed)"
  std::string_view reg_never;        // SAMPLE_TOO_SMALL, no size up to 100 would do
  std::string_view reg_runs;         // "runs: {sample} vs {baseline} in the baseline ({runs})"
};

const Messages& MessagesFr();
const Messages& MessagesEn();

// The catalogue of a language.
inline const Messages& MessagesOf(Lang lang) { return lang == Lang::kFr ? MessagesFr() : MessagesEn(); }

// The catalogue's word for a phase (phase_*).
inline std::string_view PhaseWording(const Messages& m, v1::Phase phase) {
  switch (phase) {
    case v1::PHASE_VALIDATION: return m.phase_validation;
    case v1::PHASE_COLD: return m.phase_cold;
    case v1::PHASE_WARM: return m.phase_warm;
    default: return m.phase_unspecified;
  }
}

// The catalogue's wording of a memory kind (mem_kind_*): each kind has its own, so process or host
// memory never reads as accelerator memory.
inline std::string_view MemoryKindWording(const Messages& m, v1::MemoryKind kind) {
  switch (kind) {
    case v1::MEMORY_KIND_PROCESS_PEAK_RSS: return m.mem_kind_process_peak_rss;
    case v1::MEMORY_KIND_PROCESS_FOOTPRINT: return m.mem_kind_process_footprint;
    case v1::MEMORY_KIND_DEVICE_USED: return m.mem_kind_device_used;
    case v1::MEMORY_KIND_DEVICE_BUFFER: return m.mem_kind_device_buffer;
    case v1::MEMORY_KIND_CONTAINER_PEAK: return m.mem_kind_container_peak;
    case v1::MEMORY_KIND_HOST_BUFFER: return m.mem_kind_host_buffer;
    case v1::MEMORY_KIND_BUFFER_UNKNOWN: return m.mem_kind_buffer_unknown;
    default: return m.mem_kind_unspecified;
  }
}

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_MESSAGES_H_
