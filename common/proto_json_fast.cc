#include "common/proto_json_fast.h"

#include <simdjson.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "common/string_views.h"
#include "google/protobuf/descriptor.h"

namespace benchfleet::internal {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using simdjson::dom::element;
using simdjson::dom::element_type;

// Each field of a message type by its proto name and its JSON (lowerCamel) name: protobuf's
// parser accepts both.
struct FieldIndex {
  absl::flat_hash_map<std::string_view, const FieldDescriptor*> by_name;
};

const FieldIndex& IndexOf(const Descriptor* type) {
  thread_local absl::flat_hash_map<const Descriptor*, std::unique_ptr<FieldIndex>> indexes;
  std::unique_ptr<FieldIndex>& index = indexes[type];
  if (index == nullptr) {
    index = std::make_unique<FieldIndex>();
    for (int i = 0; i < type->field_count(); ++i) {
      const FieldDescriptor* f = type->field(i);
      index->by_name.emplace(f->name(), f);
      index->by_name.emplace(f->json_name(), f);
    }
  }
  return *index;
}

// Thrown nowhere: each step returns false when protobuf's parser must decide instead.
class Reader {
 public:
  explicit Reader(bool ignore_unknown_fields) : ignore_unknown_fields_(ignore_unknown_fields) {}

  bool ReadMessage(element value, Message* message) {
    simdjson::dom::object object;
    if (value.get_object().get(object) != simdjson::SUCCESS) return false;
    const Descriptor* type = message->GetDescriptor();
    const std::string& full_name = type->full_name();
    if (full_name.rfind("google.protobuf.", 0) == 0) return false;  // every well-known type as a message
    const FieldIndex& index = IndexOf(type);
    const Reflection* reflection = message->GetReflection();
    // Which fields this object named already: a repeated key is protobuf's to judge.
    std::vector<bool> seen(static_cast<size_t>(type->field_count()), false);
    for (simdjson::dom::key_value_pair member : object) {
      auto it = index.by_name.find(member.key);
      if (it == index.by_name.end()) {
        if (ignore_unknown_fields_) continue;
        return false;
      }
      const FieldDescriptor* field = it->second;
      if (seen[static_cast<size_t>(field->index())]) return false;
      seen[static_cast<size_t>(field->index())] = true;
      if (member.value.is_null()) continue;  // null: the field's default
      if (const auto* oneof = field->real_containing_oneof();
          oneof != nullptr && reflection->HasOneof(*message, oneof)) {
        return false;
      }
      if (!ReadField(member.value, field, message, reflection)) return false;
    }
    return true;
  }

 private:
  bool ReadField(element value, const FieldDescriptor* field, Message* message, const Reflection* reflection) {
    if (field->is_map()) return ReadMap(value, field, message, reflection);
    if (field->is_repeated()) {
      simdjson::dom::array array;
      if (value.get_array().get(array) != simdjson::SUCCESS) return false;
      for (element item : array) {
        if (item.is_null()) return false;
        if (!ReadValue(item, field, message, reflection, /*repeated=*/true)) return false;
      }
      return true;
    }
    return ReadValue(value, field, message, reflection, /*repeated=*/false);
  }

  // A map with string keys: a JSON object, each member one entry.
  bool ReadMap(element value, const FieldDescriptor* field, Message* message, const Reflection* reflection) {
    const Descriptor* entry_type = field->message_type();
    const FieldDescriptor* key_field = entry_type->map_key();
    const FieldDescriptor* value_field = entry_type->map_value();
    if (key_field->cpp_type() != FieldDescriptor::CPPTYPE_STRING) return false;
    simdjson::dom::object object;
    if (value.get_object().get(object) != simdjson::SUCCESS) return false;
    std::vector<std::string_view> keys;
    for (simdjson::dom::key_value_pair member : object) {
      for (std::string_view k : keys) {
        if (k == member.key) return false;
      }
      keys.push_back(member.key);
      if (member.value.is_null()) return false;
      Message* entry = reflection->AddMessage(message, field);
      const Reflection* entry_reflection = entry->GetReflection();
      entry_reflection->SetString(entry, key_field, std::string(member.key));
      if (!ReadValue(member.value, value_field, entry, entry_reflection, /*repeated=*/false)) return false;
    }
    return true;
  }

  bool ReadValue(element value, const FieldDescriptor* field, Message* message, const Reflection* reflection,
                 bool repeated) {
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: {
        int64_t v = 0;
        if (!ReadInteger(value, &v) || v < std::numeric_limits<int32_t>::min() ||
            v > std::numeric_limits<int32_t>::max()) {
          return false;
        }
        repeated ? reflection->AddInt32(message, field, static_cast<int32_t>(v))
                 : reflection->SetInt32(message, field, static_cast<int32_t>(v));
        return true;
      }
      case FieldDescriptor::CPPTYPE_INT64: {
        int64_t v = 0;
        if (!ReadInteger(value, &v)) return false;
        repeated ? reflection->AddInt64(message, field, v) : reflection->SetInt64(message, field, v);
        return true;
      }
      case FieldDescriptor::CPPTYPE_UINT32: {
        uint64_t v = 0;
        if (!ReadUnsigned(value, &v) || v > std::numeric_limits<uint32_t>::max()) return false;
        repeated ? reflection->AddUInt32(message, field, static_cast<uint32_t>(v))
                 : reflection->SetUInt32(message, field, static_cast<uint32_t>(v));
        return true;
      }
      case FieldDescriptor::CPPTYPE_UINT64: {
        uint64_t v = 0;
        if (!ReadUnsigned(value, &v)) return false;
        repeated ? reflection->AddUInt64(message, field, v) : reflection->SetUInt64(message, field, v);
        return true;
      }
      case FieldDescriptor::CPPTYPE_DOUBLE: {
        double v = 0;
        if (!ReadFloating(value, &v)) return false;
        repeated ? reflection->AddDouble(message, field, v) : reflection->SetDouble(message, field, v);
        return true;
      }
      case FieldDescriptor::CPPTYPE_FLOAT: {
        double v = 0;
        if (!ReadFloating(value, &v)) return false;
        if (std::isfinite(v) && std::fabs(v) > std::numeric_limits<float>::max()) return false;
        repeated ? reflection->AddFloat(message, field, static_cast<float>(v))
                 : reflection->SetFloat(message, field, static_cast<float>(v));
        return true;
      }
      case FieldDescriptor::CPPTYPE_BOOL: {
        bool v = false;
        if (value.get_bool().get(v) != simdjson::SUCCESS) return false;
        repeated ? reflection->AddBool(message, field, v) : reflection->SetBool(message, field, v);
        return true;
      }
      case FieldDescriptor::CPPTYPE_STRING: {
        if (field->type() == FieldDescriptor::TYPE_BYTES) return false;  // base64: protobuf's
        std::string_view v;
        if (value.get_string().get(v) != simdjson::SUCCESS) return false;
        repeated ? reflection->AddString(message, field, std::string(v))
                 : reflection->SetString(message, field, std::string(v));
        return true;
      }
      case FieldDescriptor::CPPTYPE_ENUM: {
        const google::protobuf::EnumValueDescriptor* e = nullptr;
        std::string_view name;
        int64_t number = 0;
        if (value.get_string().get(name) == simdjson::SUCCESS) {
          e = field->enum_type()->FindValueByName(std::string(name));
        } else if (value.get_int64().get(number) == simdjson::SUCCESS &&
                   number >= std::numeric_limits<int32_t>::min() && number <= std::numeric_limits<int32_t>::max()) {
          e = field->enum_type()->FindValueByNumber(static_cast<int>(number));
        }
        if (e == nullptr) return false;
        repeated ? reflection->AddEnum(message, field, e) : reflection->SetEnum(message, field, e);
        return true;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE: {
        Message* sub = repeated ? reflection->AddMessage(message, field) : reflection->MutableMessage(message, field);
        const std::string& type = field->message_type()->full_name();
        if (type == "google.protobuf.Timestamp") return ReadTimestamp(value, sub);
        if (type == "google.protobuf.Duration") return ReadDuration(value, sub);
        return ReadMessage(value, sub);
      }
    }
    return false;
  }

  // A JSON integer, or a string of decimal digits with an optional '-' (protobuf writes 64-bit
  // integers as strings).
  static bool ReadInteger(element value, int64_t* out) {
    if (value.type() == element_type::INT64) return value.get_int64().get(*out) == simdjson::SUCCESS;
    std::string_view s;
    if (value.get_string().get(s) != simdjson::SUCCESS || !IsDecimal(s)) return false;
    return absl::SimpleAtoi(ToAbsl(s), out);
  }

  static bool ReadUnsigned(element value, uint64_t* out) {
    if (value.type() == element_type::UINT64) return value.get_uint64().get(*out) == simdjson::SUCCESS;
    if (value.type() == element_type::INT64) {
      int64_t v = 0;
      if (value.get_int64().get(v) != simdjson::SUCCESS || v < 0) return false;
      *out = static_cast<uint64_t>(v);
      return true;
    }
    std::string_view s;
    if (value.get_string().get(s) != simdjson::SUCCESS || !IsDecimal(s) || s.front() == '-') return false;
    return absl::SimpleAtoi(ToAbsl(s), out);
  }

  // A JSON number, or "NaN", "Infinity", "-Infinity" (other numeric strings: protobuf's).
  static bool ReadFloating(element value, double* out) {
    switch (value.type()) {
      case element_type::DOUBLE: return value.get_double().get(*out) == simdjson::SUCCESS;
      case element_type::INT64: {
        int64_t v = 0;
        if (value.get_int64().get(v) != simdjson::SUCCESS) return false;
        *out = static_cast<double>(v);
        return true;
      }
      case element_type::UINT64: {
        uint64_t v = 0;
        if (value.get_uint64().get(v) != simdjson::SUCCESS) return false;
        *out = static_cast<double>(v);
        return true;
      }
      case element_type::STRING: {
        std::string_view s;
        if (value.get_string().get(s) != simdjson::SUCCESS) return false;
        if (s == "NaN") *out = std::numeric_limits<double>::quiet_NaN();
        else if (s == "Infinity") *out = std::numeric_limits<double>::infinity();
        else if (s == "-Infinity") *out = -std::numeric_limits<double>::infinity();
        else return false;
        return true;
      }
      default: return false;
    }
  }

  static bool IsDecimal(std::string_view s) {
    if (!s.empty() && s.front() == '-') s.remove_prefix(1);
    if (s.empty() || s.size() > 20) return false;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
    }
    return true;
  }

  // `n` digits of `s` from `*at` as a number; false unless all are digits.
  static bool Digits(std::string_view s, size_t* at, size_t n, int* out) {
    if (*at + n > s.size()) return false;
    int v = 0;
    for (size_t i = 0; i < n; ++i) {
      const char c = s[*at + i];
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    *at += n;
    *out = v;
    return true;
  }

  static bool Expect(std::string_view s, size_t* at, char c) {
    if (*at >= s.size() || s[*at] != c) return false;
    ++*at;
    return true;
  }

  // The fraction after a '.': 1 to 9 digits, as nanoseconds.
  static bool Fraction(std::string_view s, size_t* at, int* nanos) {
    *nanos = 0;
    if (*at >= s.size() || s[*at] != '.') return true;
    ++*at;
    int digits = 0;
    int value = 0;
    while (*at < s.size() && s[*at] >= '0' && s[*at] <= '9') {
      if (++digits > 9) return false;
      value = value * 10 + (s[*at] - '0');
      ++*at;
    }
    if (digits == 0) return false;
    for (int i = digits; i < 9; ++i) value *= 10;
    *nanos = value;
    return true;
  }

  static void SetSecondsAndNanos(Message* message, int64_t seconds, int32_t nanos) {
    const Descriptor* type = message->GetDescriptor();
    const Reflection* reflection = message->GetReflection();
    reflection->SetInt64(message, type->FindFieldByNumber(1), seconds);
    reflection->SetInt32(message, type->FindFieldByNumber(2), nanos);
  }

  // Timestamps and durations are parsed here, not by TimeUtil::FromString: that accepts durations
  // protobuf's JSON parser refuses ("+1s", "1.s"), and the fast path must read exactly what that
  // parser reads (proto_json_test's edge cases).
  // RFC 3339 as protobuf writes and reads it: "2026-12-06T03:17:56.5Z" or with "+01:00" / "-05:30",
  // years 0001 to 9999.
  static bool ReadTimestamp(element value, Message* message) {
    std::string_view s;
    if (value.get_string().get(s) != simdjson::SUCCESS) return false;
    size_t at = 0;
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, nanos = 0;
    if (!Digits(s, &at, 4, &year) || !Expect(s, &at, '-') || !Digits(s, &at, 2, &month) || !Expect(s, &at, '-') ||
        !Digits(s, &at, 2, &day) || !Expect(s, &at, 'T') || !Digits(s, &at, 2, &hour) || !Expect(s, &at, ':') ||
        !Digits(s, &at, 2, &minute) || !Expect(s, &at, ':') || !Digits(s, &at, 2, &second) ||
        !Fraction(s, &at, &nanos)) {
      return false;
    }
    int offset_seconds = 0;
    if (at < s.size() && s[at] == 'Z') {
      ++at;
    } else if (at < s.size() && (s[at] == '+' || s[at] == '-')) {
      const int sign = s[at] == '-' ? -1 : 1;
      ++at;
      int oh = 0, om = 0;
      if (!Digits(s, &at, 2, &oh) || !Expect(s, &at, ':') || !Digits(s, &at, 2, &om) || oh > 23 || om > 59) {
        return false;
      }
      offset_seconds = sign * (oh * 3600 + om * 60);
    } else {
      return false;
    }
    if (at != s.size() || year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 ||
        second > 59) {
      return false;
    }
    const absl::CivilSecond civil(year, month, day, hour, minute, second);
    // A day past the month's end normalises in CivilSecond: protobuf refuses it.
    if (civil.year() != year || civil.month() != month || civil.day() != day) return false;
    const int64_t seconds = absl::ToUnixSeconds(absl::FromCivil(civil, absl::UTCTimeZone())) - offset_seconds;
    // protobuf's range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z.
    if (seconds < -62135596800 || seconds > 253402300799) return false;
    SetSecondsAndNanos(message, seconds, nanos);
    return true;
  }

  // "1.5s", "-0.25s", "3s": seconds and up to 9 fraction digits, within +-315,576,000,000 s.
  static bool ReadDuration(element value, Message* message) {
    std::string_view s;
    if (value.get_string().get(s) != simdjson::SUCCESS) return false;
    if (s.size() < 2 || s.back() != 's') return false;
    s.remove_suffix(1);
    bool negative = false;
    if (!s.empty() && s.front() == '-') {
      negative = true;
      s.remove_prefix(1);
    }
    const size_t dot = s.find('.');
    std::string_view whole = s.substr(0, dot);
    if (whole.empty() || whole.size() > 12) return false;
    int64_t seconds = 0;
    for (char c : whole) {
      if (c < '0' || c > '9') return false;
      seconds = seconds * 10 + (c - '0');
    }
    int nanos = 0;
    if (dot != std::string_view::npos) {
      size_t at = dot;
      if (!Fraction(s, &at, &nanos) || at != s.size()) return false;
    }
    if (seconds > 315576000000) return false;
    SetSecondsAndNanos(message, negative ? -seconds : seconds, negative ? -nanos : nanos);
    return true;
  }

  const bool ignore_unknown_fields_;
};

}  // namespace

FastJson FastJsonToMessage(std::string_view json, Message* message, bool ignore_unknown_fields) {
  thread_local simdjson::dom::parser parser;
  message->Clear();
  element root;
  if (parser.parse(json.data(), json.size()).get(root) != simdjson::SUCCESS) return FastJson::kNotHandled;
  Reader reader(ignore_unknown_fields);
  if (!reader.ReadMessage(root, message)) {
    message->Clear();
    return FastJson::kNotHandled;
  }
  return FastJson::kParsed;
}

}  // namespace benchfleet::internal
