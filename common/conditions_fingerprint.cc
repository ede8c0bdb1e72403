#include "common/conditions_fingerprint.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "common/hashing.h"

namespace benchfleet {
namespace {

// Escapes the characters that would make two different inputs print the same text.
std::string Escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '=': out += "\\="; break;
      default: out += c;
    }
  }
  return out;
}

void AddMap(std::string& out, const char* prefix,
            const google::protobuf::Map<std::string, std::string>& map) {
  std::map<std::string, std::string> sorted(map.begin(), map.end());
  for (const auto& [key, value] : sorted) {
    absl::StrAppend(&out, prefix, ".", Escape(key), "=", Escape(value), "\n");
  }
}

}  // namespace

std::string CanonicalConditions(const v1::MachineConditions& c) {
  std::string out = "benchfleet-conditions-v1\n";
  absl::StrAppend(&out, "hostname=", Escape(c.hostname()), "\n");
  absl::StrAppend(&out, "os_name=", Escape(c.os_name()), "\n");
  absl::StrAppend(&out, "os_version=", Escape(c.os_version()), "\n");
  absl::StrAppend(&out, "kernel=", Escape(c.kernel()), "\n");
  absl::StrAppend(&out, "architecture=", Escape(c.architecture()), "\n");
  absl::StrAppend(&out, "cpu_model=", Escape(c.cpu_model()), "\n");
  absl::StrAppend(&out, "logical_cores=", c.logical_cores(), "\n");
  absl::StrAppend(&out, "memory_bytes=", c.memory_bytes(), "\n");
  for (int i = 0; i < c.accelerators_size(); ++i) {
    const auto& a = c.accelerators(i);
    const std::string p = absl::StrCat("accelerators[", i, "]");
    absl::StrAppend(&out, p, ".name=", Escape(a.name()), "\n");
    absl::StrAppend(&out, p, ".vendor=", Escape(a.vendor()), "\n");
    absl::StrAppend(&out, p, ".driver=", Escape(a.driver()), "\n");
    absl::StrAppend(&out, p, ".memory_bytes=", a.memory_bytes(), "\n");
    absl::StrAppend(&out, p, ".index=", Escape(a.index()), "\n");
    AddMap(out, (p + ".attributes").c_str(), a.attributes());
  }
  AddMap(out, "backend_versions", c.backend_versions());
  AddMap(out, "labels", c.labels());
  absl::StrAppend(&out, "agent_version=", Escape(c.agent_version()), "\n");
  // Last, and nothing at all when empty: conditions captured before host_attributes (and
  // backend_attributes) existed keep their fingerprints. probe_notes and capture_time are left out on purpose.
  AddMap(out, "host_attributes", c.host_attributes());
  AddMap(out, "backend_attributes", c.backend_attributes());
  return out;
}

std::string ConditionsFingerprint(const v1::MachineConditions& conditions) {
  return Sha256Hex(CanonicalConditions(conditions));
}

}  // namespace benchfleet
