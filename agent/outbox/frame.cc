#include "agent/outbox/frame.h"

#include <array>

#include "common/crc32c.h"

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

// The BFOUTBX2 checksum: the length field too, so a damaged length is caught by the CRC even when
// it still points at plausible bytes.
uint32_t FrameCrc(std::string_view length_bytes, std::string_view payload) {
  return Crc32cExtend(Crc32c(length_bytes), payload);
}

// Returns the payload length of a good BFOUTBX2 frame starting at `at`, or 0.
uint32_t GoodFrameAt(std::string_view content, size_t at) {
  if (content.size() - at < kFrameHeaderBytes) return 0;
  if (content.substr(at, kFrameMarker.size()) != kFrameMarker) return 0;
  const uint32_t length = GetU32(content, at + 4);
  if (length == 0 || length > kMaxFramePayloadBytes) return 0;
  if (content.size() - at - kFrameHeaderBytes < length) return 0;
  const uint32_t crc = GetU32(content, at + 8);
  if (FrameCrc(content.substr(at + 4, 4), content.substr(at + kFrameHeaderBytes, length)) != crc) return 0;
  return length;
}

// Returns where the next good BFOUTBX2 frame at or after `from` begins, or npos.
size_t NextGoodFrame(std::string_view content, size_t from) {
  for (size_t at = content.find(kFrameMarker, from); at != std::string_view::npos;
       at = content.find(kFrameMarker, at + 1)) {
    if (GoodFrameAt(content, at) != 0) return at;
  }
  return std::string_view::npos;
}

void ParseV2(std::string_view content, size_t at, ParsedSegment* parsed) {
  while (at < content.size()) {
    if (const uint32_t length = GoodFrameAt(content, at); length != 0) {
      parsed->frames.push_back(FrameRef{at + kFrameHeaderBytes, length});
      at += kFrameHeaderBytes + length;
      continue;
    }
    const size_t next = NextGoodFrame(content, at + 1);
    if (next == std::string_view::npos) break;
    parsed->damaged.push_back(DamagedRange{at, next - at});
    at = next;
  }
  parsed->valid_bytes = at;
  parsed->bad_tail_bytes = content.size() - at;
}

void ParseV1(std::string_view content, size_t at, ParsedSegment* parsed) {
  while (at < content.size()) {
    if (content.size() - at < kFrameHeaderBytesV1) break;
    const uint32_t length = GetU32(content, at);
    const uint32_t crc = GetU32(content, at + 4);
    if (length == 0 || length > kMaxFramePayloadBytes) break;
    if (content.size() - at - kFrameHeaderBytesV1 < length) break;
    if (Crc32(content.substr(at + kFrameHeaderBytesV1, length)) != crc) break;
    parsed->frames.push_back(FrameRef{at + kFrameHeaderBytesV1, length});
    at += kFrameHeaderBytesV1 + length;
  }
  parsed->valid_bytes = at;
  parsed->bad_tail_bytes = content.size() - at;
}

}  // namespace

uint32_t Crc32(std::string_view data) {
  static const std::array<uint32_t, 256> kTable = MakeCrcTable();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data) c = kTable[(c ^ b) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void AppendFrame(std::string_view payload, std::string* out) {
  out->append(kFrameMarker);
  const size_t length_at = out->size();
  PutU32(static_cast<uint32_t>(payload.size()), out);
  const uint32_t crc = FrameCrc(std::string_view(*out).substr(length_at, 4), payload);
  PutU32(crc, out);
  out->append(payload);
}

void AppendFrameV1(std::string_view payload, std::string* out) {
  PutU32(static_cast<uint32_t>(payload.size()), out);
  PutU32(Crc32(payload), out);
  out->append(payload);
}

ParsedSegment ParseFrames(std::string_view content) {
  ParsedSegment parsed;
  const std::string_view header = content.substr(0, std::min(content.size(), kSegmentMagic.size()));
  if (header == kSegmentMagic) {
    parsed.has_header = true;
    parsed.version = 2;
    ParseV2(content, kSegmentMagic.size(), &parsed);
  } else if (header == kSegmentMagicV1) {
    parsed.has_header = true;
    parsed.version = 1;
    ParseV1(content, kSegmentMagicV1.size(), &parsed);
  } else {
    // A crash right after creating the file leaves it empty or with part of the header; damage
    // may have hit the header of a full one. Any good frame in it is still a record.
    const size_t first = NextGoodFrame(content, 0);
    if (first == std::string_view::npos) {
      parsed.bad_tail_bytes = content.size();
      return parsed;
    }
    parsed.damaged.push_back(DamagedRange{0, first});
    ParseV2(content, first, &parsed);
  }
  return parsed;
}

}  // namespace benchfleet::agent
