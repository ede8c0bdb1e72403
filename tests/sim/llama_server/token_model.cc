#include "tests/sim/llama_server/token_model.h"

#include <algorithm>

namespace benchfleet::sim {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

uint64_t Fnv1a(std::string_view bytes, uint64_t h) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::vector<int32_t> Tokenize(std::string_view text, bool add_bos) {
  std::vector<int32_t> ids;
  if (add_bos) ids.push_back(kBosToken);
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && IsSpace(text[i])) i++;
    size_t end = i;
    while (end < text.size() && !IsSpace(text[end])) end++;
    for (size_t p = i; p < end; p += 4) {
      const std::string_view piece = text.substr(p, std::min<size_t>(4, end - p));
      // Ids 3..31999: never BOS/EOS/UNK, stable per piece so equal prompts share a prefix.
      ids.push_back(static_cast<int32_t>(3 + Fnv1a(piece) % (kVocabSize - 3)));
    }
    i = end;
  }
  return ids;
}

std::string DetokenizePrompt(std::string_view text, bool add_bos) {
  std::string out = add_bos ? "<s>" : "";
  if (!text.empty() && text.front() != ' ') out += ' ';
  out.append(text);
  return out;
}

const std::vector<Piece>& Vocabulary() {
  static const std::vector<Piece>* vocab = new std::vector<Piece>{
      // What the captured tiny random model produced (tests/fixtures/llama-server).
      {25563, " Після"}, {6948, "uns"}, {11884, "even"}, {18810, "ského"}, {19199, "rés"},
      {29504, " terminate"}, {16712, " differential"}, {30575, "川"}, {7532, "rift"},
      {11159, " `@"}, {22207, " Paolo"}, {15650, " января"}, {16285, " indices"},
      {9036, " скла"}, {28245, " Gan"}, {16246, " sitting"}, {9656, " Ty"}, {445, " this"},
      {11891, "(."}, {18584, "\");\r"}, {22817, "igg"},
      // Common Llama-2 SentencePiece pieces.
      {278, " the"}, {310, " of"}, {322, " and"}, {304, " to"}, {263, " a"}, {297, " in"},
      {338, " is"}, {393, " that"}, {363, " for"}, {372, " it"}, {411, " with"}, {408, " as"},
      {373, " on"}, {471, " was"}, {526, " are"}, {367, " be"}, {29889, "."}, {29892, ","},
      {13, "\n"},
  };
  return *vocab;
}

Generator::Generator(uint32_t seed, std::string_view prompt) {
  const std::string seed_text = std::to_string(seed);
  state_ = Fnv1a(prompt, Fnv1a(seed_text + "\x1f"));
  uint64_t length_state = state_ ^ 0x5DEECE66DULL;
  natural_length_ = 16 + static_cast<int>(SplitMix64(&length_state) % 49);
}

Piece Generator::Next(bool allow_eos) {
  if (allow_eos && produced_ >= natural_length_) return Piece{kEosToken, ""};
  produced_++;
  const std::vector<Piece>& vocab = Vocabulary();
  return vocab[SplitMix64(&state_) % vocab.size()];
}

}  // namespace benchfleet::sim
