// The openai backend's figures: the one declaration of what its records' metrics mean
// (common/figures.h). The names are those RunMetrics (request_stats.cc) records.
#ifndef BENCHFLEET_AGENT_BACKENDS_OPENAI_FIGURES_H_
#define BENCHFLEET_AGENT_BACKENDS_OPENAI_FIGURES_H_

#include "common/figures.h"

namespace benchfleet::agent::openai {

inline constexpr FigureDeclaration kFigures[] = {
    {.name = "output_tokens_per_second", .unit = "tokens/s", .better = v1::BETTER_HIGHER, .headline = 1,
     .label = "output tokens/s"},
    {.name = "ttft_p99_seconds", .unit = "s", .better = v1::BETTER_LOWER, .headline = 2, .label = "TTFT p99",
     .distribution = "ttft", .percentile = 99},
    {.name = "latency_mean_seconds", .unit = "s", .better = v1::BETTER_LOWER, .headline = 3,
     .label = "mean latency"},
    // Requests per second that met every SLO of the spec (only when the spec sets one).
    {.name = "goodput_requests_per_second", .unit = "requests/s", .better = v1::BETTER_HIGHER, .headline = 4,
     .label = "goodput"},
    {.name = "tpot_p99_seconds", .unit = "s", .better = v1::BETTER_LOWER, .headline = 5, .label = "TPOT p99",
     .distribution = "tpot", .percentile = 99},
    {.name = "requests_per_second", .unit = "requests/s", .better = v1::BETTER_HIGHER},
    {.name = "latency_p50_seconds", .unit = "s", .better = v1::BETTER_LOWER, .distribution = "latency", .percentile = 50},
    {.name = "latency_p90_seconds", .unit = "s", .better = v1::BETTER_LOWER, .distribution = "latency", .percentile = 90},
    {.name = "latency_p99_seconds", .unit = "s", .better = v1::BETTER_LOWER, .distribution = "latency", .percentile = 99},
    {.name = "ttft_p50_seconds", .unit = "s", .better = v1::BETTER_LOWER, .distribution = "ttft", .percentile = 50},
    {.name = "ttft_p90_seconds", .unit = "s", .better = v1::BETTER_LOWER, .distribution = "ttft", .percentile = 90},
    {.name = "tpot_p50_seconds", .unit = "s", .better = v1::BETTER_LOWER, .distribution = "tpot", .percentile = 50},
    {.name = "tpot_p90_seconds", .unit = "s", .better = v1::BETTER_LOWER, .distribution = "tpot", .percentile = 90},
    {.name = "itl_p50_seconds", .unit = "s", .better = v1::BETTER_LOWER, .distribution = "itl", .percentile = 50},
    {.name = "itl_p90_seconds", .unit = "s", .better = v1::BETTER_LOWER, .distribution = "itl", .percentile = 90},
    {.name = "itl_p99_seconds", .unit = "s", .better = v1::BETTER_LOWER, .distribution = "itl", .percentile = 99},
    {.name = "requests", .unit = "requests"},
    {.name = "requests_ok", .unit = "requests", .better = v1::BETTER_HIGHER},
    {.name = "errors", .unit = "requests", .better = v1::BETTER_LOWER},
    {.name = "slo_met_requests", .unit = "requests", .better = v1::BETTER_HIGHER},
    {.name = "output_tokens", .unit = "tokens", .output_tokens = true},
};

}  // namespace benchfleet::agent::openai

#endif  // BENCHFLEET_AGENT_BACKENDS_OPENAI_FIGURES_H_
