#include "common/yaml_text.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/string_views.h"

namespace benchfleet {
namespace {

constexpr char kHint[] = "a series spec is YAML text: is this the right file?";

// Returns the length of the valid UTF-8 sequence at text[at], or 0 (overlong forms, surrogates
// and code points past U+10FFFF are not valid).
size_t Utf8SequenceAt(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char b0 = byte(at);
  if (b0 < 0x80) return 1;
  size_t length;
  uint32_t min;
  uint32_t cp;
  if ((b0 & 0xE0) == 0xC0) {
    length = 2, min = 0x80, cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    length = 3, min = 0x800, cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    length = 4, min = 0x10000, cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (text.size() - at < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    const unsigned char b = byte(at + i);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return length;
}

}  // namespace

absl::Status CheckYamlText(std::string_view text, std::string_view source) {
  size_t line = 1, column = 1;
  for (size_t at = 0; at < text.size();) {
    const unsigned char b = static_cast<unsigned char>(text[at]);
    const size_t length = Utf8SequenceAt(text, at);
    if (length == 0) {
      return absl::InvalidArgumentError(absl::StrFormat("%s:%d:%d: not UTF-8 text (byte 0x%02X); %s", ToAbsl(source),
                                                        line, column, b, kHint));
    }
    if (length == 1 && ((b < 0x20 && b != '\t' && b != '\n' && b != '\r') || b == 0x7F)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s:%d:%d: control character 0x%02X is not allowed in YAML text; %s", ToAbsl(source), line, column, b, kHint));
    }
    if (b == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    at += length;
  }
  return absl::OkStatus();
}

}  // namespace benchfleet
