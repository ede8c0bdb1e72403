#include "coordinator/store/proto_json_writer.h"

#include <algorithm>
#include <charconv>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/proto_json.h"
#include "coordinator/store/civil_time.h"
#include "google/protobuf/descriptor.h"

namespace benchfleet::coordinator {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Timestamp: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z; Duration: +-10000 years.
constexpr int64_t kMinTimestampSeconds = -62135596800;
constexpr int64_t kMaxTimestampSeconds = 253402300799;
constexpr int64_t kMaxDurationSeconds = 315576000000;

constexpr char kHex[] = "0123456789abcdef";

void AppendU16Escape(uint32_t unit, std::string* out) {
  out->append("\\u");
  out->push_back(kHex[(unit >> 12) & 0xf]);
  out->push_back(kHex[(unit >> 8) & 0xf]);
  out->push_back(kHex[(unit >> 4) & 0xf]);
  out->push_back(kHex[unit & 0xf]);
}

// Code points protobuf escapes although JSON does not require it (invisible and formatting
// characters that confuse JavaScript), as its json_escaping.cc lists them.
bool EscapedAboveLatin1(uint32_t cp) {
  return cp == 0xad || cp == 0x6dd || cp == 0x70f || cp == 0x17b4 || cp == 0x17b5 ||
         cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb) || (cp >= 0x600 && cp <= 0x603) ||
         (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
         (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x206a && cp <= 0x206f) || cp == 0xe0001 ||
         (cp >= 0x1d173 && cp <= 0x1d17a) || (cp >= 0xe0020 && cp <= 0xe007f);
}

// Appends a JSON string literal of valid UTF-8 (protobuf checked it when parsing).
void AppendString(std::string_view s, std::string* out) {
  out->push_back('"');
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t plain = 0;  // start of the run not yet copied
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>') {
      ++i;
      continue;
    }
    uint32_t cp = c;
    size_t len = 1;
    if (c >= 0x80) {
      len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
      if (i + len > n) break;  // cannot happen with valid UTF-8
      cp = c & (0x7f >> len);
      for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (p[i + k] & 0x3f);
      if (cp >= 0xa0 && !EscapedAboveLatin1(cp)) {
        i += len;
        continue;
      }
    }
    out->append(s.data() + plain, i - plain);
    switch (cp) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\b': out->append("\\b"); break;
      case '\t': out->append("\\t"); break;
      case '\n': out->append("\\n"); break;
      case '\f': out->append("\\f"); break;
      case '\r': out->append("\\r"); break;
      default:
        if (cp >= 0x10000) {
          const uint32_t v = cp - 0x10000;
          AppendU16Escape(0xd800 + (v >> 10), out);
          AppendU16Escape(0xdc00 + (v & 0x3ff), out);
        } else {
          AppendU16Escape(cp, out);
        }
    }
    i += len;
    plain = i;
  }
  out->append(s.data() + plain, n - plain);
  out->push_back('"');
}

// protobuf's SimpleDtoa / SimpleFtoa: "%.15g" ("%.6g" for float), or "%.17g" ("%.9g") when
// that does not read back exactly. std::to_chars gives printf's %g without its cost.
template <typename T>
void AppendFloating(T value, std::string* out) {
  if (std::isnan(value)) {
    out->append("\"NaN\"");
    return;
  }
  if (std::isinf(value)) {
    out->append(value > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  constexpr int kShort = sizeof(T) == sizeof(double) ? DBL_DIG : FLT_DIG;
  constexpr int kLong = sizeof(T) == sizeof(double) ? DBL_DIG + 2 : FLT_DIG + 3;
  char buf[64];
  auto written = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::general, kShort);
  T back{};
  std::from_chars(buf, written.ptr, back);
  if (back != value) {
    written = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::general, kLong);
  }
  out->append(buf, written.ptr);
}

// The seconds (field 1) and nanos (field 2) of a Timestamp or a Duration.
std::pair<int64_t, int32_t> SecondsAndNanos(const Message& m) {
  const Descriptor* d = m.GetDescriptor();
  const Reflection* r = m.GetReflection();
  return {r->GetInt64(m, d->FindFieldByNumber(1)), r->GetInt32(m, d->FindFieldByNumber(2))};
}

absl::Status CheckTimestamp(int64_t seconds, int32_t nanos) {
  if (seconds < kMinTimestampSeconds || seconds > kMaxTimestampSeconds || nanos < 0 ||
      nanos > 999999999) {
    return absl::InvalidArgumentError(absl::StrCat("cannot write a Timestamp of ", seconds,
                                                   " s and ", nanos, " ns as JSON: out of range"));
  }
  return absl::OkStatus();
}

absl::Status CheckDuration(int64_t seconds, int32_t nanos) {
  if (seconds < -kMaxDurationSeconds || seconds > kMaxDurationSeconds || nanos < -999999999 ||
      nanos > 999999999 || (seconds < 0 && nanos > 0) || (seconds > 0 && nanos < 0)) {
    return absl::InvalidArgumentError(absl::StrCat("cannot write a Duration of ", seconds,
                                                   " s and ", nanos, " ns as JSON: out of range"));
  }
  return absl::OkStatus();
}

absl::Status AppendTimestamp(const Message& m, std::string* out) {
  const auto [seconds, nanos] = SecondsAndNanos(m);
  absl::Status in_range = CheckTimestamp(seconds, nanos);
  if (!in_range.ok()) return in_range;
  out->push_back('"');
  AppendCivilSecond(ToCivilSecond(seconds), 'T', out);
  AppendJsonFraction(nanos, out);
  out->append("Z\"");
  return absl::OkStatus();
}

absl::Status AppendDuration(const Message& m, std::string* out) {
  const auto [seconds, nanos] = SecondsAndNanos(m);
  absl::Status in_range = CheckDuration(seconds, nanos);
  if (!in_range.ok()) return in_range;
  out->push_back('"');
  if (seconds < 0 || nanos < 0) out->push_back('-');
  absl::StrAppend(out, seconds < 0 ? -seconds : seconds);
  AppendJsonFraction(nanos < 0 ? -nanos : nanos, out);
  out->append("s\"");
  return absl::OkStatus();
}

absl::Status AppendMessage(const Message& m, std::string* out);

// Appends one value of a field (element `index` when repeated, else -1).
absl::Status AppendValue(const Message& m, const FieldDescriptor* f, int index, std::string* out) {
  const Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      absl::StrAppend(out, rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      absl::StrAppend(out, rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      absl::StrAppend(out, "\"", rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f), "\"");
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      absl::StrAppend(out, "\"", rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f), "\"");
      break;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      AppendFloating(rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f), out);
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
      AppendFloating(rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f), out);
      break;
    case FieldDescriptor::CPPTYPE_BOOL:
      out->append((rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f)) ? "true" : "false");
      break;
    case FieldDescriptor::CPPTYPE_ENUM: {
      const int number = rep ? r->GetRepeatedEnumValue(m, f, index) : r->GetEnumValue(m, f);
      const auto* value = f->enum_type()->FindValueByNumber(number);
      if (value == nullptr) {
        absl::StrAppend(out, number);  // a value this build does not know: its number
      } else {
        out->push_back('"');
        out->append(value->name());
        out->push_back('"');
      }
      break;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string scratch;
      const std::string& s = rep ? r->GetRepeatedStringReference(m, f, index, &scratch)
                                 : r->GetStringReference(m, f, &scratch);
      if (f->type() == FieldDescriptor::TYPE_BYTES) {
        out->push_back('"');
        out->append(absl::Base64Escape(s));
        out->push_back('"');
      } else {
        AppendString(s, out);
      }
      break;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return AppendMessage(rep ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f), out);
  }
  return absl::OkStatus();
}

// Appends a map field as an object, entries in key order so the output is deterministic.
absl::Status AppendMap(const Message& m, const FieldDescriptor* f, std::string* out) {
  const Reflection* r = m.GetReflection();
  const FieldDescriptor* key = f->message_type()->FindFieldByNumber(1);
  const FieldDescriptor* value = f->message_type()->FindFieldByNumber(2);
  const int n = r->FieldSize(m, f);
  struct Entry {
    std::string_view key;
    std::string owned_key;  // for non-string keys and copied strings
    const Message* entry;
  };
  std::vector<Entry> entries(n);
  for (int i = 0; i < n; ++i) {
    const Message& entry = r->GetRepeatedMessage(m, f, i);
    const Reflection* er = entry.GetReflection();
    Entry& e = entries[i];
    e.entry = &entry;
    switch (key->cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING: {
        const std::string& k = er->GetStringReference(entry, key, &e.owned_key);
        e.key = &k == &e.owned_key ? std::string_view() : std::string_view(k);
        break;
      }
      case FieldDescriptor::CPPTYPE_INT32: e.owned_key = absl::StrCat(er->GetInt32(entry, key)); break;
      case FieldDescriptor::CPPTYPE_UINT32: e.owned_key = absl::StrCat(er->GetUInt32(entry, key)); break;
      case FieldDescriptor::CPPTYPE_INT64: e.owned_key = absl::StrCat(er->GetInt64(entry, key)); break;
      case FieldDescriptor::CPPTYPE_UINT64: e.owned_key = absl::StrCat(er->GetUInt64(entry, key)); break;
      case FieldDescriptor::CPPTYPE_BOOL: e.owned_key = er->GetBool(entry, key) ? "true" : "false"; break;
      default: break;
    }
  }
  // Views into owned keys are taken once the vector no longer moves.
  for (Entry& e : entries) {
    if (e.key.data() == nullptr) e.key = e.owned_key;
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.key < b.key; });
  out->push_back('{');
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendString(entries[i].key, out);
    out->push_back(':');
    absl::Status s = AppendValue(*entries[i].entry, value, -1, out);
    if (!s.ok()) return s;
  }
  out->push_back('}');
  return absl::OkStatus();
}

absl::Status AppendMessage(const Message& m, std::string* out) {
  const Descriptor* d = m.GetDescriptor();
  switch (d->well_known_type()) {
    case Descriptor::WELLKNOWNTYPE_UNSPECIFIED:
      break;
    case Descriptor::WELLKNOWNTYPE_TIMESTAMP:
      return AppendTimestamp(m, out);
    case Descriptor::WELLKNOWNTYPE_DURATION:
      return AppendDuration(m, out);
    default: {
      // Rare types (Any, Struct, wrappers, ...): protobuf's own converter.
      absl::StatusOr<std::string> json = MessageToJson(m);
      if (!json.ok()) return json.status();
      out->append(*json);
      return absl::OkStatus();
    }
  }
  const Reflection* r = m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(m, &fields);  // set fields only, by number: what proto3 JSON prints
  out->push_back('{');
  bool first = true;
  for (const FieldDescriptor* f : fields) {
    if (!first) out->push_back(',');
    first = false;
    out->push_back('"');
    out->append(f->name());
    out->append("\":");
    absl::Status s;
    if (f->is_map()) {
      s = AppendMap(m, f, out);
    } else if (f->is_repeated()) {
      out->push_back('[');
      const int n = r->FieldSize(m, f);
      for (int i = 0; i < n && s.ok(); ++i) {
        if (i > 0) out->push_back(',');
        s = AppendValue(m, f, i, out);
      }
      out->push_back(']');
    } else {
      s = AppendValue(m, f, -1, out);
    }
    if (!s.ok()) return s;
  }
  out->push_back('}');
  return absl::OkStatus();
}

}  // namespace

absl::Status AppendProtoJson(const Message& message, std::string* out) {
  return AppendMessage(message, out);
}

absl::Status CheckJsonForm(const Message& message) {
  const Descriptor* d = message.GetDescriptor();
  if (d->well_known_type() == Descriptor::WELLKNOWNTYPE_TIMESTAMP) {
    const auto [seconds, nanos] = SecondsAndNanos(message);
    return CheckTimestamp(seconds, nanos);
  }
  if (d->well_known_type() == Descriptor::WELLKNOWNTYPE_DURATION) {
    const auto [seconds, nanos] = SecondsAndNanos(message);
    return CheckDuration(seconds, nanos);
  }
  const Reflection* r = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(message, &fields);
  for (const FieldDescriptor* f : fields) {
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (f->is_repeated()) {  // maps too: their entries are messages, the value a field of each
      const int n = r->FieldSize(message, f);
      for (int i = 0; i < n; ++i) {
        absl::Status s = CheckJsonForm(r->GetRepeatedMessage(message, f, i));
        if (!s.ok()) return s;
      }
    } else {
      absl::Status s = CheckJsonForm(r->GetMessage(message, f));
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace benchfleet::coordinator
