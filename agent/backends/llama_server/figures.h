// llama-server's figures: the one declaration of what its records' metrics mean (common/figures.h).
// The names are those CompletionMetrics and the backend record: each field of the completion's
// "timings" (a "_ms" field as "_seconds"), the token counts, and the client's time to first token.
// The llama-server log reader (synthesis/readers/) stamps the same declaration.
#ifndef BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_FIGURES_H_
#define BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_FIGURES_H_

#include "common/figures.h"

namespace benchfleet::agent::llama_server {

// The names of the figures of the completion's "timings" that a llama-server log also prints
// (its "prompt eval time" and "eval time" lines), for the log reader.
inline constexpr char kPredictedPerSecond[] = "predicted_per_second";
inline constexpr char kPromptPerSecond[] = "prompt_per_second";
inline constexpr char kPredictedSeconds[] = "predicted_seconds";
inline constexpr char kPromptSeconds[] = "prompt_seconds";
inline constexpr char kPredictedN[] = "predicted_n";
inline constexpr char kPromptN[] = "prompt_n";

inline constexpr FigureDeclaration kFigures[] = {
    {.name = kPredictedPerSecond, .unit = "tokens/s", .better = v1::BETTER_HIGHER, .headline = 1,
     .label = "generation tokens/s"},
    {.name = "time_to_first_token_seconds", .unit = "s", .better = v1::BETTER_LOWER, .headline = 2,
     .label = "time to first token"},
    {.name = kPromptPerSecond, .unit = "tokens/s", .better = v1::BETTER_HIGHER, .headline = 3,
     .label = "prompt tokens/s"},
    {.name = "predicted_per_token_seconds", .unit = "s/token", .better = v1::BETTER_LOWER},
    {.name = "prompt_per_token_seconds", .unit = "s/token", .better = v1::BETTER_LOWER},
    {.name = kPredictedSeconds, .unit = "s", .better = v1::BETTER_LOWER},
    {.name = kPromptSeconds, .unit = "s", .better = v1::BETTER_LOWER},
    {.name = kPredictedN, .unit = "tokens"},
    {.name = kPromptN, .unit = "tokens"},
    {.name = "cache_n", .unit = "tokens"},
    {.name = "tokens_predicted", .unit = "tokens", .output_tokens = true},
    {.name = "tokens_evaluated", .unit = "tokens"},
    {.name = "tokens_cached", .unit = "tokens"},
};

}  // namespace benchfleet::agent::llama_server

#endif  // BENCHFLEET_AGENT_BACKENDS_LLAMA_SERVER_FIGURES_H_
