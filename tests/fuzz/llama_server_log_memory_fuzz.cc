// libFuzzer target llama_server_log_memory: ParseLogMemory and LogMemoryFigures (agent/backends/llama_server),
// the llama-server log parser the backend runs over the log of the server it started.
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_llama_server_log_memory) over corpus/llama_server_log_memory and regressions/llama_server_log_memory in the normal build.
#include <cstddef>
#include <cstdint>

#include "agent/backends/llama_server/log_memory_parser.h"
#include "tests/fuzz/fuzz_input.h"

using namespace benchfleet::agent::llama_server;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const LogMemory memory = ParseLogMemory(benchfleet::fuzz::AsText(data, size));
  (void)LogMemoryFigures(memory);
  for (const LogBuffer& buffer : memory.buffers) (void)IsHostBufferName(buffer.name);
  return 0;
}
