// CheckYamlText: whether bytes can be YAML text at all (UTF-8, no control characters YAML
// forbids), before any parser or protobuf string field sees them: a binary or Latin-1 file given
// as a spec is answered "FILE:LINE:COLUMN: ..." instead of a parser's or libprotobuf's confusion.
// The CLI checks a spec before sending it, the spec parser before parsing. Pure; thread-safe.
#ifndef BENCHFLEET_COMMON_YAML_TEXT_H_
#define BENCHFLEET_COMMON_YAML_TEXT_H_

#include <string_view>

#include "absl/status/status.h"

namespace benchfleet {

// OK for UTF-8 text without C0 control characters other than tab, LF and CR, and without DEL
// (what YAML 1.2 allows in a stream; a byte-order mark is fine). INVALID_ARGUMENT otherwise, at
// the first bad byte: "SOURCE:LINE:COLUMN: not UTF-8 text (byte 0xFF); a series spec is YAML
// text: is this the right file?" or "SOURCE:LINE:COLUMN: control character 0x00 is not allowed in
// YAML text; ...". LINE and COLUMN are 1-based; COLUMN counts characters.
absl::Status CheckYamlText(std::string_view text, std::string_view source);

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_YAML_TEXT_H_
