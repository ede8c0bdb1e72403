// libFuzzer target llama_server_log_memory: ParseLogMemory and LogMemoryFigures (agent/backends/llama_server)
// with ParseLogReport and ClassifyBuffer (common/llama_cpp_log),
// the llama-server log parser the backend runs over the log of the server it started.
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_llama_server_log_memory) over corpus/llama_server_log_memory and regressions/llama_server_log_memory in the normal build.
#include <cstddef>
#include <cstdint>

#include "agent/backends/llama_server/log_memory_parser.h"
#include "tests/fuzz/fuzz_input.h"

using namespace benchfleet::agent::llama_server;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view log = benchfleet::fuzz::AsText(data, size);
  const LogMemory memory = ParseLogMemory(log);
  const benchfleet::llama_cpp::LogReport report = benchfleet::llama_cpp::ParseLogReport(log);
  (void)LogMemoryFigures(memory, report);
  for (const LogBuffer& buffer : memory.buffers) (void)benchfleet::llama_cpp::ClassifyBuffer(buffer.name, report);
  for (const auto& gpu : report.Gpus()) (void)benchfleet::llama_cpp::DescribeDevice(gpu);
  return 0;
}
