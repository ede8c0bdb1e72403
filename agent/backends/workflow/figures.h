// The workflow backend's figures (the Workflow v6 method: mean latency, tokens/s, the container's
// peak memory, the per-request distribution): the one declaration of what its records' metrics
// mean (common/figures.h). The names are those SummaryMetrics (workflow_results.cc) records; the
// container's peak is a MemoryFigure (MEMORY_KIND_CONTAINER_PEAK, scope kContainerScope or
// kCgroupScope below), not a metric.
#ifndef BENCHFLEET_AGENT_BACKENDS_WORKFLOW_FIGURES_H_
#define BENCHFLEET_AGENT_BACKENDS_WORKFLOW_FIGURES_H_

#include "common/figures.h"

namespace benchfleet::agent::workflow {

inline constexpr FigureDeclaration kFigures[] = {
    {.name = "output_tokens_per_second", .unit = "tokens/s", .better = v1::BETTER_HIGHER, .headline = 1,
     .label = "tokens/s"},
    {.name = "latency_mean_seconds", .unit = "s", .better = v1::BETTER_LOWER, .headline = 2,
     .label = "mean latency"},
    {.name = "latency_p99_seconds", .unit = "s", .better = v1::BETTER_LOWER, .headline = 3, .label = "latency p99",
     .distribution = "latency", .percentile = 99},
    {.name = "requests_per_second", .unit = "requests/s", .better = v1::BETTER_HIGHER},
    {.name = "latency_p50_seconds", .unit = "s", .better = v1::BETTER_LOWER, .distribution = "latency", .percentile = 50},
    {.name = "latency_p90_seconds", .unit = "s", .better = v1::BETTER_LOWER, .distribution = "latency", .percentile = 90},
    {.name = "time_to_first_token_mean_seconds", .unit = "s", .better = v1::BETTER_LOWER},
    {.name = "time_to_first_token_p50_seconds", .unit = "s", .better = v1::BETTER_LOWER,
     .distribution = "time_to_first_token", .percentile = 50},
    {.name = "time_to_first_token_p90_seconds", .unit = "s", .better = v1::BETTER_LOWER,
     .distribution = "time_to_first_token", .percentile = 90},
    {.name = "time_to_first_token_p99_seconds", .unit = "s", .better = v1::BETTER_LOWER,
     .distribution = "time_to_first_token", .percentile = 99},
    {.name = "requests", .unit = "requests"},
    {.name = "failed_requests", .unit = "requests", .better = v1::BETTER_LOWER},
    {.name = "output_tokens", .unit = "tokens", .output_tokens = true},
};

// The scopes of its memory figures (MEMORY_KIND_CONTAINER_PEAK): the class of what is measured,
// the same for every run, so that the repetitions of a series share one column; the run's own
// container or cgroup is named in the figure's source.
inline constexpr char kContainerScope[] = "container";  // docker stats of the container it names
inline constexpr char kCgroupScope[] = "cgroup";        // the memory cgroup the agent made for the command

}  // namespace benchfleet::agent::workflow

#endif  // BENCHFLEET_AGENT_BACKENDS_WORKFLOW_FIGURES_H_
