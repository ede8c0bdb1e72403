// ComfyUI's figures: the one declaration of what its records' metrics mean (common/figures.h).
#ifndef BENCHFLEET_AGENT_BACKENDS_COMFYUI_FIGURES_H_
#define BENCHFLEET_AGENT_BACKENDS_COMFYUI_FIGURES_H_

#include "common/figures.h"

namespace benchfleet::agent::comfyui {

inline constexpr FigureDeclaration kFigures[] = {
    {.name = "images_per_second", .unit = "images/s", .better = v1::BETTER_HIGHER, .headline = 1,
     .label = "images/s"},
    // The server's own execution time of the prompt (its execution_start to execution_success).
    {.name = "server_execution_seconds", .unit = "s", .better = v1::BETTER_LOWER, .headline = 2,
     .label = "server execution time"},
    {.name = "images", .unit = "images", .images = true},
    {.name = "cached_nodes", .unit = "nodes"},
    {.name = "executed_nodes", .unit = "nodes"},
};

}  // namespace benchfleet::agent::comfyui

#endif  // BENCHFLEET_AGENT_BACKENDS_COMFYUI_FIGURES_H_
