#include "tests/sim/comfyui/png.h"

namespace benchfleet::sim::comfyui {
namespace {

void PutBe32(std::string* out, uint32_t v) {
  out->push_back(static_cast<char>(v >> 24));
  out->push_back(static_cast<char>(v >> 16));
  out->push_back(static_cast<char>(v >> 8));
  out->push_back(static_cast<char>(v));
}

void Chunk(std::string* out, const char* type, const std::string& data) {
  PutBe32(out, static_cast<uint32_t>(data.size()));
  std::string typed = std::string(type, 4) + data;
  out->append(typed);
  PutBe32(out, Crc32(typed));
}

}  // namespace

uint32_t Crc32(std::string_view data) {
  static const auto* table = [] {
    auto* t = new uint32_t[256];
    for (uint32_t n = 0; n < 256; n++) {
      uint32_t c = n;
      for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t Adler32(std::string_view data) {
  uint32_t a = 1, b = 0;
  for (unsigned char c : data) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  return (b << 16) | a;
}

std::string MakePng(int width, int height, uint64_t seed) {
  // Raw scanlines: filter byte 0, then RGB from an xorshift stream (smooth enough to look like
  // noise, cheap enough for 256x256).
  std::string raw;
  raw.reserve(static_cast<size_t>(height) * (1 + 3 * static_cast<size_t>(width)));
  uint64_t x = seed ? seed : 0x9E3779B97F4A7C15ull;
  for (int y = 0; y < height; y++) {
    raw.push_back('\0');
    for (int i = 0; i < 3 * width; i++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      raw.push_back(static_cast<char>(x & 0xFF));
    }
  }
  std::string z = "\x78\x01";
  for (size_t off = 0; off < raw.size() || off == 0;) {
    const size_t n = std::min<size_t>(65535, raw.size() - off);
    const bool last = off + n >= raw.size();
    z.push_back(last ? 1 : 0);
    z.push_back(static_cast<char>(n & 0xFF));
    z.push_back(static_cast<char>(n >> 8));
    z.push_back(static_cast<char>(~n & 0xFF));
    z.push_back(static_cast<char>((~n >> 8) & 0xFF));
    z.append(raw, off, n);
    off += n;
    if (last) break;
  }
  PutBe32(&z, Adler32(raw));

  std::string png = "\x89PNG\r\n\x1a\n";
  std::string ihdr;
  PutBe32(&ihdr, static_cast<uint32_t>(width));
  PutBe32(&ihdr, static_cast<uint32_t>(height));
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit RGB, deflate, adaptive filter, no interlace
  Chunk(&png, "IHDR", ihdr);
  Chunk(&png, "IDAT", z);
  Chunk(&png, "IEND", "");
  return png;
}

}  // namespace benchfleet::sim::comfyui
