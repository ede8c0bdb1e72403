#include "agent/outbox/frame.h"

#include <array>

namespace benchfleet::agent {
namespace {

std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}

void PutU32(uint32_t v, std::string* out) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t GetU32(std::string_view s, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

}  // namespace

uint32_t Crc32(std::string_view data) {
  static const std::array<uint32_t, 256> kTable = MakeCrcTable();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data) c = kTable[(c ^ b) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void AppendFrame(std::string_view payload, std::string* out) {
  PutU32(static_cast<uint32_t>(payload.size()), out);
  PutU32(Crc32(payload), out);
  out->append(payload);
}

ParsedSegment ParseFrames(std::string_view content) {
  ParsedSegment parsed;
  if (content.size() < kSegmentMagic.size() || content.substr(0, kSegmentMagic.size()) != kSegmentMagic) {
    // A crash right after creating the file leaves it empty or with part of the header.
    parsed.bad_tail_bytes = content.size();
    return parsed;
  }
  parsed.has_header = true;
  size_t at = kSegmentMagic.size();
  while (at < content.size()) {
    if (content.size() - at < kFrameHeaderBytes) break;
    const uint32_t length = GetU32(content, at);
    const uint32_t crc = GetU32(content, at + 4);
    if (length == 0 || length > kMaxFramePayloadBytes) break;
    if (content.size() - at - kFrameHeaderBytes < length) break;
    if (Crc32(content.substr(at + kFrameHeaderBytes, length)) != crc) break;
    parsed.frames.push_back(FrameRef{at + kFrameHeaderBytes, length});
    at += kFrameHeaderBytes + length;
  }
  parsed.valid_bytes = at;
  parsed.bad_tail_bytes = content.size() - at;
  return parsed;
}

}  // namespace benchfleet::agent
