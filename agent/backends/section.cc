#include "agent/backends/section.h"

#include <algorithm>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/spec/series_spec.h"
#include "common/string_views.h"

namespace benchfleet::agent {

std::string SectionReader::Key(std::string_view key) const { return absl::StrCat(ToAbsl(backend_), ".", ToAbsl(key)); }

absl::Status SectionReader::ErrorAt(const YAML::Node& node, std::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("line ", node.Mark().line + 1, ": ", ToAbsl(message)));
}

std::string SectionReader::Shown(const YAML::Node& node) { return node.IsScalar() ? node.Scalar() : "a non-scalar"; }

absl::Status SectionReader::CheckKeys(const YAML::Node& map, std::span<const char* const> known,
                                      std::string_view prefix) const {
  const std::string listed = absl::StrJoin(known, ", ");
  if (!map.IsMap()) {
    const std::string what = prefix.empty() ? std::string(backend_) : Key(prefix.substr(0, prefix.size() - 1));
    return ErrorAt(map, absl::StrCat(what, " must be a map with the keys ", listed));
  }
  std::set<std::string> seen;
  for (const auto& entry : map) {
    const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "?";
    const std::string key = Key(absl::StrCat(ToAbsl(prefix), name));
    if (std::find_if(known.begin(), known.end(), [&](const char* k) { return name == k; }) == known.end()) {
      return ErrorAt(entry.first, absl::StrCat("unknown key ", key, " (known keys: ", listed, ")"));
    }
    if (!seen.insert(name).second) return ErrorAt(entry.first, absl::StrCat("key ", key, " is given twice"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> SectionReader::String(const YAML::Node& node, std::string_view key) const {
  if (!node.IsScalar()) return ErrorAt(node, absl::StrCat(Key(key), " must be a string"));
  return node.Scalar();
}

absl::StatusOr<std::string> SectionReader::NonEmptyString(const YAML::Node& node, std::string_view key) const {
  if (!node.IsScalar() || node.Scalar().empty())
    return ErrorAt(node, absl::StrCat(Key(key), " must be a non-empty string"));
  return node.Scalar();
}

absl::StatusOr<std::vector<std::string>> SectionReader::StringList(const YAML::Node& node, std::string_view key) const {
  std::vector<std::string> out;
  if (node.IsNull()) return out;
  if (!node.IsSequence()) return ErrorAt(node, absl::StrCat(Key(key), " must be a list of strings"));
  for (const YAML::Node& item : node) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      return ErrorAt(item, absl::StrCat(Key(key), " must be a list of non-empty strings"));
    }
    out.push_back(item.Scalar());
  }
  return out;
}

absl::StatusOr<int64_t> SectionReader::Integer(const YAML::Node& node, std::string_view key, int64_t min, int64_t max,
                                               std::string_view what) const {
  int64_t value = 0;
  if (!node.IsScalar() || !absl::SimpleAtoi(node.Scalar(), &value) || value < min || value > max) {
    const std::string expected = what.empty() ? absl::StrCat("an integer from ", min, " to ", max) : std::string(what);
    return ErrorAt(node, absl::StrCat(Key(key), " must be ", expected, ", got '", Shown(node), "'"));
  }
  return value;
}

absl::StatusOr<absl::Duration> SectionReader::Duration(const YAML::Node& node, std::string_view key) const {
  absl::Duration value;
  if (!node.IsScalar() || !absl::ParseDuration(node.Scalar(), &value) || value <= absl::ZeroDuration() ||
      value == absl::InfiniteDuration()) {
    return ErrorAt(node, absl::StrCat(Key(key), " must be a positive duration such as 120s, 2m or 500ms, got '",
                                      Shown(node), "'"));
  }
  // The agent's stop waits out a stop grace; everything else is a timeout or a cooldown.
  const absl::Duration max = key == "stop_grace" ? kMaxStopGrace : kMaxSpecDuration;
  if (std::string above = DurationAboveBound(value, max); !above.empty()) {
    return ErrorAt(node, absl::StrCat(Key(key), " ", above));
  }
  return value;
}

}  // namespace benchfleet::agent
