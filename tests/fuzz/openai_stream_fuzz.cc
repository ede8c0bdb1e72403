// libFuzzer target openai_stream: an OpenAI-compatible server's SSE stream (/v1/completions and
// /v1/chat/completions with stream: true) fed to StreamReader piece by piece. Input: a first line
// whose length (1..64) is the piece size, then the body.
// Built with -fsanitize=fuzzer,address,undefined by scripts/fuzz (BENCHFLEET_FUZZ=ON), and as a
// replay test (fuzz_replay_openai_stream) over corpus/openai_stream and regressions/openai_stream in the normal build.
#include <cstddef>
#include <cstdint>

#include "agent/backends/openai/openai_stream.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [first, body] = benchfleet::fuzz::SplitFirstLine(benchfleet::fuzz::AsText(data, size));
  benchfleet::agent::openai::StreamReader reader;
  benchfleet::fuzz::ForEachPiece(body, first.size() % 64 + 1, [&](std::string_view piece) { reader.Feed(piece); });
  return 0;
}
