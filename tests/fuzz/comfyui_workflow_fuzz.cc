// libFuzzer target comfyui_workflow: a ComfyUI API-format workflow file (Graph::Parse, then Dependents of
// every node), as a spec's workflow: file.
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_comfyui_workflow) over corpus/comfyui_workflow and regressions/comfyui_workflow in the normal build.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "agent/backends/comfyui/graph.h"
#include "tests/fuzz/fuzz_input.h"

using benchfleet::agent::comfyui::Graph;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto graph = Graph::Parse(benchfleet::fuzz::AsText(data, size));
  if (!graph.ok()) return 0;
  for (const auto& [id, node] : graph->nodes()) (void)graph->Dependents({id});
  return 0;
}
