// libFuzzer target docker_stats: what the workflow backend reads from `docker stats --no-stream
// --format '{{json .}}'` (ParseDockerStatsLine on every line, ParseDockerSize on the input as a
// whole, in agent/backends/workflow/container_stats).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_docker_stats) over corpus/docker_stats and regressions/docker_stats in
// the normal build.
#include <cstddef>
#include <cstdint>

#include "agent/backends/workflow/container_stats.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest = benchfleet::fuzz::AsText(data, size);
  (void)benchfleet::agent::workflow::ParseDockerSize(rest);
  while (!rest.empty()) {
    auto [line, next] = benchfleet::fuzz::SplitFirstLine(rest);
    (void)benchfleet::agent::workflow::ParseDockerStatsLine(line);
    rest = next;
  }
  return 0;
}
