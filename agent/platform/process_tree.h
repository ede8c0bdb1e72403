// Whether a process belongs to the agent's own tree (the agent and what it started: the
// measured server, a workflow command), so that the sampler counts only the others as
// contention. Linux reads /proc/PID/stat through the Env; elsewhere nothing is known to be ours.
// Thread-safe when the Env is.
#ifndef BENCHFLEET_AGENT_PLATFORM_PROCESS_TREE_H_
#define BENCHFLEET_AGENT_PLATFORM_PROCESS_TREE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "common/env.h"

namespace benchfleet::agent {

// Returns the parent pid of a /proc/PID/stat text (the field after the command name, which is
// in parentheses and may itself hold spaces and parentheses); nullopt when malformed.
std::optional<int64_t> ParseProcStatParent(std::string_view stat);

// True when pid is ancestor or one of its descendants, walking parents through
// root + "/proc/PID/stat" (at most 64 steps). False when pid's stat cannot be read (a process of
// another pid namespace, one that ended).
bool IsInProcessTree(Env* env, int64_t pid, int64_t ancestor, const std::string& root = "");

// Returns the predicate "pid is this agent process or one of its descendants".
std::function<bool(int64_t)> OwnProcessTree(Env* env);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_PLATFORM_PROCESS_TREE_H_
