// The echo example backend's figures (common/figures.h).
#ifndef BENCHFLEET_TESTS_UNIT_AGENT_EXAMPLE_BACKEND_ECHO_FIGURES_H_
#define BENCHFLEET_TESTS_UNIT_AGENT_EXAMPLE_BACKEND_ECHO_FIGURES_H_

#include "common/figures.h"

namespace benchfleet::agent::echo {

inline constexpr FigureDeclaration kFigures[] = {
    {.name = "echo_bytes_per_second", .unit = "bytes/s", .better = v1::BETTER_HIGHER, .headline = 1,
     .label = "echoed bytes/s"},
    {.name = "echo_bytes", .unit = "bytes"},
};

}  // namespace benchfleet::agent::echo

#endif  // BENCHFLEET_TESTS_UNIT_AGENT_EXAMPLE_BACKEND_ECHO_FIGURES_H_
