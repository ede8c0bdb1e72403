#include "coordinator/store/pg_text.h"

#include <charconv>
#include <cmath>

namespace benchfleet::coordinator {
namespace {

constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

}  // namespace

void AppendCopyField(std::string_view value, std::string* out) {
  // Most fields need no escaping: append them in one go.
  size_t start = 0;
  for (size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    const char* escape = nullptr;
    switch (c) {
      case '\\': escape = "\\\\"; break;
      case '\t': escape = "\\t"; break;
      case '\n': escape = "\\n"; break;
      case '\r': escape = "\\r"; break;
      case '\0': break;
      default: continue;
    }
    out->append(value.data() + start, i - start);
    if (escape != nullptr) {
      out->append(escape);
    } else {
      out->append(kReplacementChar);
    }
    start = i + 1;
  }
  out->append(value.data() + start, value.size() - start);
}

void AppendJsonString(std::string_view value, std::string* out) {
  out->push_back('"');
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (u == 0) {
      out->append(kReplacementChar);
    } else if (u < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out->append("\\u00");
      out->push_back(kHex[u >> 4]);
      out->push_back(kHex[u & 0xf]);
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

void AppendJsonNumber(double value, std::string* out) {
  if (!std::isfinite(value)) {
    out->append("null");
    return;
  }
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  out->append(buf, end);
}

std::string JsonStringArray(const std::vector<std::string>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendJsonString(values[i], &out);
  }
  out.push_back(']');
  return out;
}

std::string JsonStringObject(const std::map<std::string, std::string>& values) {
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : values) {
    if (!first) out.push_back(',');
    first = false;
    AppendJsonString(key, &out);
    out.push_back(':');
    AppendJsonString(value, &out);
  }
  out.push_back('}');
  return out;
}

void ReplaceJsonNulEscapes(std::string* json) {
  if (json->find("\\u0000") == std::string::npos) return;
  // Walk escape by escape: "\\u0000" (an escaped backslash followed by text) is not a NUL.
  for (size_t i = 0; i + 1 < json->size(); ++i) {
    if ((*json)[i] != '\\') continue;
    if ((*json)[i + 1] == 'u' && json->compare(i + 2, 4, "0000") == 0) {
      json->replace(i + 2, 4, "fffd");
    }
    ++i;  // skip the escaped character
  }
}

std::string TimestamptzLiteral(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%E6S+00", t, absl::UTCTimeZone());
}

}  // namespace benchfleet::coordinator
