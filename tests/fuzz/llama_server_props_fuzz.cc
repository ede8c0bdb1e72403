// libFuzzer target llama_server_props: llama-server's GET /props answer (ParseServerProps).
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_llama_server_props) over corpus/llama_server_props and regressions/llama_server_props in the normal build.
#include <cstddef>
#include <cstdint>

#include "agent/backends/llama_server/server_props.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)benchfleet::agent::llama_server::ParseServerProps(benchfleet::fuzz::AsText(data, size));
  return 0;
}
