// The outbox's on-disk framing: each record is one frame [u32 length][u32 CRC-32 of payload]
// [payload], little-endian, after an 8-byte segment header. The CRC tells a torn or damaged tail
// (a crash mid-append) from real records. Pure functions; thread-safe.
#ifndef BENCHFLEET_AGENT_OUTBOX_FRAME_H_
#define BENCHFLEET_AGENT_OUTBOX_FRAME_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace benchfleet::agent {

// Opens every segment file; a file without it was not written by this format.
inline constexpr std::string_view kSegmentMagic = "BFOUTBX1";
inline constexpr size_t kFrameHeaderBytes = 8;

// A frame longer than this is damage, not a record (records are at most 1 MiB; see
// common/record_validation.h), so a corrupted length cannot make the reader allocate gigabytes.
inline constexpr uint32_t kMaxFramePayloadBytes = 64u << 20;

// Returns the CRC-32 (IEEE 802.3, as zlib's crc32) of data.
uint32_t Crc32(std::string_view data);

// Appends one frame holding payload to out.
void AppendFrame(std::string_view payload, std::string* out);

// One frame found by ParseFrames: where its payload lies in the segment's content.
struct FrameRef {
  size_t offset = 0;  // of the payload
  uint32_t length = 0;
};

struct ParsedSegment {
  bool has_header = false;
  std::vector<FrameRef> frames;
  // Bytes after the last good frame: a torn tail after a crash, or damage. 0 when clean.
  size_t bad_tail_bytes = 0;
  size_t valid_bytes = 0;  // header + good frames
};

// Splits a segment's content into frames, stopping at the first frame whose header is cut short,
// whose length is implausible or whose CRC does not match: after a bad length nothing further can
// be trusted to start on a frame boundary.
ParsedSegment ParseFrames(std::string_view content);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_OUTBOX_FRAME_H_
