// The outbox's on-disk framing. A segment is an 8-byte header, then one frame per record:
//   BFOUTBX2 (now):  [4-byte marker][u32 length][u32 CRC-32C of the length's 4 bytes and the
//                    payload][payload]
//   BFOUTBX1 (earlier agents; read, never written): [u32 length][u32 CRC-32 of payload][payload]
// little-endian. The checksum tells damage from records; the marker lets the reader find the next
// frame after damage, so a bad sector costs the records it hit and no more. Only a crash's torn
// last append, or damage no good frame follows, ends a segment early. Pure functions; thread-safe.
#ifndef BENCHFLEET_AGENT_OUTBOX_FRAME_H_
#define BENCHFLEET_AGENT_OUTBOX_FRAME_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace benchfleet::agent {

// Opens every segment this agent writes.
inline constexpr std::string_view kSegmentMagic = "BFOUTBX2";
// Opens segments written in the earlier format, which are still read (and sent) after an upgrade.
inline constexpr std::string_view kSegmentMagicV1 = "BFOUTBX1";
// Opens every BFOUTBX2 frame. Any 4 bytes would do (the checksum decides); these are rare in a
// serialized RunRecord, so resynchronising rarely tries a false start.
inline constexpr std::string_view kFrameMarker{"\xB7\xF1\x0E\x5A", 4};
inline constexpr size_t kFrameHeaderBytes = 12;    // marker, length, CRC-32C
inline constexpr size_t kFrameHeaderBytesV1 = 8;   // length, CRC-32

// A frame longer than this is damage, not a record (records are at most 1 MiB; see
// common/record_validation.h), so a corrupted length cannot make the reader allocate gigabytes.
inline constexpr uint32_t kMaxFramePayloadBytes = 64u << 20;

// Returns the CRC-32 (IEEE 802.3, as zlib's crc32) of data: the BFOUTBX1 frames' checksum.
uint32_t Crc32(std::string_view data);

// Appends one BFOUTBX2 frame holding payload to out.
void AppendFrame(std::string_view payload, std::string* out);

// Appends one BFOUTBX1 frame (tests of the upgrade path write old segments with it).
void AppendFrameV1(std::string_view payload, std::string* out);

// One frame found by ParseFrames: where its payload lies in the segment's content.
struct FrameRef {
  size_t offset = 0;  // of the payload
  uint32_t length = 0;
};

// Bytes between two good frames that are no frame: damage (a crash only cuts the last append).
struct DamagedRange {
  size_t offset = 0;  // in the segment file
  size_t bytes = 0;
};

struct ParsedSegment {
  bool has_header = false;  // a BFOUTBX2 or BFOUTBX1 header
  int version = 0;          // 2, 1, or 0 without a header
  std::vector<FrameRef> frames;
  // Skipped ranges with good frames after them (BFOUTBX2 only), in file order.
  std::vector<DamagedRange> damaged;
  // Bytes after the last good frame: a torn tail after a crash, or damage. 0 when clean.
  size_t bad_tail_bytes = 0;
  size_t valid_bytes = 0;  // where the bad tail begins (the content's size when there is none)
};

// Splits a segment's content into frames. In a BFOUTBX2 segment a frame whose marker, length or
// checksum is wrong is skipped up to the next good frame (found by its marker); what no good frame
// follows is the bad tail. A BFOUTBX1 segment has no marker to resynchronise on: it ends at its
// first bad frame. Without a known header a crash cut the file at its creation (or damage hit
// the header): the reader still looks for BFOUTBX2 frames in it.
ParsedSegment ParseFrames(std::string_view content);

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_OUTBOX_FRAME_H_
