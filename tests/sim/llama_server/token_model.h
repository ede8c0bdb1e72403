// The simulated model's text side: a deterministic tokenizer for prompts and a deterministic
// generator for completions. Tokenizer rule: BOS, then for each run of non-whitespace bytes
// ceil(bytes / 4) tokens ("Explain in one sentence what a GPU is." -> 10 + BOS = 11, as the real
// tiny model counted it). Generation draws pieces from a fixed vocabulary (the pieces the
// captured model produced plus common Llama-2 pieces, with their real ids) with a PRNG seeded by
// (seed, prompt): the same request gives the same text, whatever n_predict, and another seed
// other text. Owner: tests/sim. Pure; thread-safe.
#ifndef BENCHFLEET_TESTS_SIM_LLAMA_SERVER_TOKEN_MODEL_H_
#define BENCHFLEET_TESTS_SIM_LLAMA_SERVER_TOKEN_MODEL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace benchfleet::sim {

inline constexpr int32_t kBosToken = 1;
inline constexpr int32_t kEosToken = 2;
inline constexpr int32_t kVocabSize = 32000;

// Returns the prompt's token ids: BOS (when add_bos) then one id per 4-byte piece of each word.
std::vector<int32_t> Tokenize(std::string_view text, bool add_bos);

// Returns what llama-server echoes as "prompt": the detokenized prompt, "<s> text" for an SPM
// model (BOS, then the text with its leading space).
std::string DetokenizePrompt(std::string_view text, bool add_bos);

struct Piece {
  int32_t id;
  std::string_view text;
};

// The generator's vocabulary, in a fixed order.
const std::vector<Piece>& Vocabulary();

// The tokens one request generates, one at a time.
class Generator {
 public:
  // `seed` as the request gave it (4294967295 when unset), `prompt` as sent.
  Generator(uint32_t seed, std::string_view prompt);

  // Returns the next piece; with allow_eos, kEosToken (text "") once the natural end is reached
  // (llama-server stops there when a request sets no token limit).
  Piece Next(bool allow_eos);

  // Returns the number of pieces before the natural end: 16..64.
  int natural_length() const { return natural_length_; }

 private:
  uint64_t state_;
  int natural_length_;
  int produced_ = 0;
};

// Returns the 64-bit FNV-1a hash of bytes (used for ids and seeds).
uint64_t Fnv1a(std::string_view bytes, uint64_t h = 1469598103934665603ULL);

}  // namespace benchfleet::sim

#endif  // BENCHFLEET_TESTS_SIM_LLAMA_SERVER_TOKEN_MODEL_H_
