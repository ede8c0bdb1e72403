// The message catalogue of the guide's verdicts, thresholds, cost and rules sections
// (render_model.cc), per language. Templates hold "{name}" placeholders filled by the renderer
// (Fill in inline_text.h); no figure and no digit is ever part of a message.
// Internal to synthesis/render; constant data, thread-safe.
#ifndef BENCHFLEET_SYNTHESIS_RENDER_MESSAGES_MODEL_H_
#define BENCHFLEET_SYNTHESIS_RENDER_MESSAGES_MODEL_H_

#include <string_view>

namespace benchfleet::synthesis {

struct ModelMessages {
  // Section 4: verdicts.
  std::string_view verdicts_section;    // "Verdicts"
  std::string_view targets_used;        // {file}
  std::string_view figure_rule;         // how a setting's figure is chosen
  std::string_view task_heading;        // {task}
  std::string_view task_entry;          // {match} {item}
  std::string_view no_targets;          // no entry of the targets matches the task
  std::string_view use_max;             // {use} {target} {item}
  std::string_view use_min;             // {use} {target} {items}
  std::string_view use_interactive;     // appended to an interactive use
  std::string_view no_warm_cell;        // no setting to judge
  std::string_view setting_cold;        // after a setting judged on its cold runs (no warm run)
  std::string_view col_class, col_setting, col_figure, col_basis, col_seconds_per_item, col_best;  // {item}
  std::string_view basis_median, basis_worst_run;
  std::string_view use_ok, use_not_ok, best_mark, no_mark;
  std::string_view class_sentence;            // {class} {setting} {seconds} {item} {judgement}
  std::string_view class_sentence_no_target;  // {class} {setting} {seconds} {item}
  std::string_view fine_for, not_for;         // {use}
  std::string_view list_separator;            // ", "

  // Section 5: thresholds.
  std::string_view thresholds_section;
  std::string_view thresholds_intro;      // {k3600}
  std::string_view no_threshold;
  std::string_view reference_dedicated;   // {class} {setting}
  std::string_view reference_fastest;     // {class} {setting}
  std::string_view capacity_line;         // {class} {setting} {ips} {items} {k3600} {hours} {day}
  std::string_view users_part;            // {ips} {items} {min} {users}
  std::string_view other_line;            // {day} {items} {class} {ref_class} {ref_ips} {ips} {ratio}
  std::string_view other_not_slower;      // {class} {ref_class} {ref_ips} {ips} {ratio}

  // Section 6: cost.
  std::string_view cost_section;
  std::string_view cost_intro;            // {k3600}
  std::string_view no_cost;
  std::string_view cost_line;     // {task} {class} {setting} {price} {currency} {k3600} {seconds} {item} {cost}
  std::string_view cost_million;  // {k1000000} {cost} {currency} {items}

  // Section 7: rules.
  std::string_view rules_section;
  std::string_view rules_intro;
  std::string_view no_rule;
  std::string_view rule_gpu_over_cpu;    // {task} {machine} {ratio} {gpu} {cpu} {items} {gpu_setting} {cpu_setting}
  std::string_view rule_cold_start;      // {task} {machine} {setting} {ratio} {item} {cold} {warm}
  std::string_view rule_cache_hits;      // {task} {count} {codes}: the execution cache (CACHE_HIT)
  std::string_view rule_prompt_cache_hits;  // {task} {count} {codes}: the prompt cache (PROMPT_CACHE_USED)
  std::string_view rule_throughput_drop; // {task} {count} {reason}
  std::string_view rule_fastest_class;   // {task} {class} {second_class} {ratio} {best} {second} {items} {setting}
  // {task} {class} {setting} {best_matrix} {worst_matrix} {ratio} {best} {worst} {items}
  std::string_view rule_best_setting;
  std::string_view rule_failed_setting;  // {task} {machine} {setting} {count} {message}
  std::string_view rule_memory_need;     // {task} {machine} {setting} {memory} {kind}
  std::string_view rule_memory_need_of;  // the same and {capacity}: the memory the kind lives in
  std::string_view rule_fastest_drop;    // {drop_class} {burst} {items} {drop_call}: after rule_fastest_class
  std::string_view rule_cheapest;        // {task} {class} {setting} {cost} {per} {second_class} {second_cost} {ratio}
  std::string_view rule_per_million, rule_per_item;  // {currency} {item} {items}

  // What one item is, singular and plural ("image", "images"; "jeton", "jetons").
  std::string_view image, images, token, tokens, request, requests, run, runs;

  // The answer, the contents and the decision tables (render_decision.cc).
  std::string_view answer_heading;      // "The answer"
  std::string_view answer_task;         // {task} {uses}
  std::string_view answer_meets_all, answer_meets_some, answer_meets_none;  // {met} {missed}
  std::string_view and_word;            // " and "
  std::string_view answer_machine;      // {machine} {verdict} {details}: setting, figure, cost
  std::string_view answer_sustained;    // {figure} {call} {burst}: the judged figure of a machine that drops
  std::string_view answer_no_target;    // {task}: no targets entry
  std::string_view contents;            // "Contents"
  std::string_view decision_section;    // "Decision tables"
  std::string_view decision_intro;      // how a row is chosen
  std::string_view decision_targets;    // {targets}
  std::string_view col_machine, col_verdict, col_working_setting, col_burst, col_sustained, col_runs, col_memory,
      col_cost, col_energy;             // col_burst / col_sustained: {label}
  std::string_view verdict_judged_sustained;  // {figure} {basis} {call}
  std::string_view level_runs;          // {range} {calls}: "52.9 (calls 1–2)"
  std::string_view no_drop;             // sustained column without a drop
  std::string_view runs_excluded;       // {runs} {excluded}
  std::string_view memory_of;           // {memory} {kind} {capacity}
  std::string_view memory_no_capacity;  // {memory} {kind}
  std::string_view not_measured;        // "not measured"
  std::string_view no_price;            // "no price"
  std::string_view no_cost_column;      // under a decision table without a priced class
  std::string_view no_energy_column;    // under a decision table without an energy figure
  std::string_view per_million;         // {cost} {currency} {items}
  std::string_view per_item;            // {cost} {currency} {item}
  std::string_view watch_section;       // "What to watch"
  std::string_view watch_intro;
  std::string_view watch_none;
  std::string_view watch_cache_hit, watch_prompt_cache, watch_drop, watch_failed, watch_contended, watch_throttled,
      watch_no_offload, watch_partial_offload, watch_invalidated, watch_other;  // {machine} {setting} {count} {runs} {reason} {code}
  // Throughput drops whose runs the device throttled during, or on a busy host (Watch::cause).
  std::string_view watch_drop_throttled, watch_drop_contended;  // {count} {runs} {reason}
  std::string_view threshold_move;      // {day} {items} {users} {class} {ref_class} {ref_day}
  std::string_view threshold_users;     // {users} {use}
  std::string_view threshold_holds;     // {class} {ref_class}
  std::string_view threshold_how;       // "How:"
  std::string_view repetition_section;  // "Workflow v6 results"
  std::string_view repetition_intro;
  std::string_view col_platform, col_axis, col_latency_ms, col_rate, col_max_memory;  // col_latency_ms: {label}
  std::string_view median_of;           // {median} {values}
  std::string_view max_of;              // {max} {values}
  std::string_view setting_cold_short;  // "cold runs" after a decision row's setting judged on cold runs
  // A memory kind in a decision table's cell, short: "device memory", "GPU buffers", "process RSS"...
  std::string_view short_device_used, short_device_buffer, short_process_rss, short_process_footprint,
      short_container, short_host_buffer, short_buffer_unknown, short_unspecified;
  std::string_view reading_section;     // "How to read this guide"
};

const ModelMessages& ModelMessagesFr();
const ModelMessages& ModelMessagesEn();

}  // namespace benchfleet::synthesis

#endif  // BENCHFLEET_SYNTHESIS_RENDER_MESSAGES_MODEL_H_
