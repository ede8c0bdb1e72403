// SectionReader: how every backend reads its section of the spec (the mapping under the backend's
// name, e.g. `llama-server:`), so that a key, a wrong type or a value out of range reads the same
// whichever backend refuses it: "line 5: llama-server.n_predict must be an integer from 1 to
// 1048576, got '0'". Each backend's *_config.cc parses its own keys with it. Holds only the
// backend's name; thread-safe.
#ifndef BENCHFLEET_AGENT_BACKENDS_SECTION_H_
#define BENCHFLEET_AGENT_BACKENDS_SECTION_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "yaml-cpp/yaml.h"

namespace benchfleet::agent {

class SectionReader {
 public:
  // backend: the backend's name as in specs ("llama-server"), the prefix of every key named; a
  // literal, so a backend's reader is a constant (constexpr SectionReader kSection{"comfyui"}).
  constexpr explicit SectionReader(std::string_view backend) : backend_(backend) {}

  // The key as people read it in the spec: "llama-server.url", "openai.slo.ttft".
  std::string Key(std::string_view key) const;

  // INVALID_ARGUMENT "line N: <message>" at the node's line.
  static absl::Status ErrorAt(const YAML::Node& node, std::string_view message);

  // The section itself: a map whose keys are all in `known` (each once), with `prefix` before
  // each name in messages ("slo." for a nested map). The first refusal of: "<backend> must be a
  // map with the keys a, b", "unknown key <backend>.x (known keys: a, b)", "key <backend>.a is
  // given twice". The section check comes first in every backend, so the known keys are what a
  // section with an unknown key is told (the tests compare them with the backend's schema).
  absl::Status CheckKeys(const YAML::Node& map, std::span<const char* const> known, std::string_view prefix = "") const;

  // A string; "<key> must be a string" otherwise.
  absl::StatusOr<std::string> String(const YAML::Node& node, std::string_view key) const;
  // A string of at least one character; "<key> must be a non-empty string" otherwise.
  absl::StatusOr<std::string> NonEmptyString(const YAML::Node& node, std::string_view key) const;
  // A list of non-empty strings; a null node is the empty list.
  absl::StatusOr<std::vector<std::string>> StringList(const YAML::Node& node, std::string_view key) const;

  // An integer from min to max; "<key> must be an integer from MIN to MAX, got 'x'" otherwise, or
  // "<key> must be <what>, got 'x'" when `what` is given (e.g. "a positive integer").
  absl::StatusOr<int64_t> Integer(const YAML::Node& node, std::string_view key, int64_t min, int64_t max,
                                  std::string_view what = "") const;

  // A positive duration ("120s", "2m", "500ms"), at most 24 h (kMaxSpecDuration), or at most
  // 10 min for a key named stop_grace (kMaxStopGrace): what the agent waits out when stopping.
  absl::StatusOr<absl::Duration> Duration(const YAML::Node& node, std::string_view key) const;

  // The node's text for messages: its scalar, or "a non-scalar".
  static std::string Shown(const YAML::Node& node);

 private:
  std::string_view backend_;
};

}  // namespace benchfleet::agent

#endif  // BENCHFLEET_AGENT_BACKENDS_SECTION_H_
