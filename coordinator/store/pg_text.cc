#include "coordinator/store/pg_text.h"

#include <array>
#include <charconv>
#include <cstring>
#include <cmath>

namespace benchfleet::coordinator {
namespace {

constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

}  // namespace

void AppendCopyField(std::string_view value, std::string* out) {
  // Bytes that need care, found by table; most fields have none and go out in one append.
  static constexpr auto kSpecial = [] {
    std::array<bool, 256> t{};
    t['\\'] = t['\t'] = t['\n'] = t['\r'] = t[0] = true;
    return t;
  }();
  size_t start = 0;
  for (size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (!kSpecial[c]) continue;
    out->append(value.data() + start, i - start);
    switch (c) {
      case '\\': out->append("\\\\"); break;
      case '\t': out->append("\\t"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      default: out->append(kReplacementChar); break;
    }
    start = i + 1;
  }
  out->append(value.data() + start, value.size() - start);
}

void AppendCopyJson(std::string_view json, std::string* out) {
  // JSON text holds no raw tab, newline, carriage return or NUL: only backslashes (its escapes)
  // need doubling, and memchr finds them fast.
  const char* p = json.data();
  const char* end = p + json.size();
  while (const void* hit = std::memchr(p, '\\', static_cast<size_t>(end - p))) {
    const char* backslash = static_cast<const char*>(hit);
    out->append(p, backslash + 1);
    out->push_back('\\');
    p = backslash + 1;
  }
  out->append(p, end);
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

std::string TextArrayLiteral(const std::vector<std::string>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.push_back('"');
    for (const char c : values[i]) {
      if (c == '\0') {
        out.append("\xEF\xBF\xBD");  // U+FFFD
        continue;
      }
      if (c == '"' || c == '\\') out.push_back('\\');
      out.push_back(c);
    }
    out.push_back('"');
  }
  out.push_back('}');
  return out;
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
