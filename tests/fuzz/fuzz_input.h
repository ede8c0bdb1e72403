// Small helpers shared by the libFuzzer targets of tests/fuzz: the input as text, and the input
// split into a leading parameter line and the body a parser reads. Header-only; stateless.
#ifndef BENCHFLEET_TESTS_FUZZ_FUZZ_INPUT_H_
#define BENCHFLEET_TESTS_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

namespace benchfleet::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// Returns (the first line without its "\n", everything after it). A target that needs a small
// parameter (a prompt id, a piece size) reads it from the first line, so the fuzzer mutates it
// along with the body and a seed stays a readable text file.
inline std::pair<std::string_view, std::string_view> SplitFirstLine(std::string_view text) {
  const size_t newline = text.find('\n');
  if (newline == std::string_view::npos) return {text, {}};
  return {text.substr(0, newline), text.substr(newline + 1)};
}

// Returns the pieces a body arrives in over HTTP: chunks of `size` bytes (at least 1), so the
// incremental readers see every split point of lines and events.
template <typename Fn>
void ForEachPiece(std::string_view body, size_t size, Fn fn) {
  if (size == 0) size = 1;
  for (size_t at = 0; at < body.size(); at += size) fn(body.substr(at, size));
}

}  // namespace benchfleet::fuzz

#endif  // BENCHFLEET_TESTS_FUZZ_FUZZ_INPUT_H_
