// Deterministic PNG images for comfyui-sim: a valid RGB PNG (IHDR, one IDAT of zlib "stored"
// deflate blocks, IEND) whose pixels come from a seed, so the same graph inputs give the same
// bytes. Owner: tests/sim. Thread-safe (pure functions).
#ifndef BENCHFLEET_TESTS_SIM_COMFYUI_PNG_H_
#define BENCHFLEET_TESTS_SIM_COMFYUI_PNG_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace benchfleet::sim::comfyui {

// Returns the PNG bytes of a width x height 8-bit RGB image filled from `seed`.
std::string MakePng(int width, int height, uint64_t seed);

// Returns the CRC-32 (ISO-HDLC, as PNG uses) of data.
uint32_t Crc32(std::string_view data);
// Returns the Adler-32 checksum of data (zlib's trailer).
uint32_t Adler32(std::string_view data);

}  // namespace benchfleet::sim::comfyui

#endif  // BENCHFLEET_TESTS_SIM_COMFYUI_PNG_H_
