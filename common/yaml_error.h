// YamlErrorAt: INVALID_ARGUMENT errors that point at the line of a YAML file where the problem is
// ("agent.yaml:7: labels must be a map"), for agent.yaml and series specs alike. Immutable;
// thread-safe.
#ifndef BENCHFLEET_COMMON_YAML_ERROR_H_
#define BENCHFLEET_COMMON_YAML_ERROR_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/string_views.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet {

class YamlErrorAt {
 public:
  // source names the file (its path, or how the text was given).
  explicit YamlErrorAt(std::string_view source) : source_(source) {}

  // Returns INVALID_ARGUMENT "SOURCE:LINE: message" for the line node starts on.
  absl::Status operator()(const YAML::Node& node, std::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(source_), ":", node.Mark().line + 1, ": ", ToAbsl(message)));
  }

 private:
  std::string source_;
};

}  // namespace benchfleet

#endif  // BENCHFLEET_COMMON_YAML_ERROR_H_
