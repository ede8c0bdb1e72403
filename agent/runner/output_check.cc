#include "agent/runner/output_check.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/record_validation.h"
#include "common/run_flags.h"

namespace benchfleet::agent {
namespace {

std::string Prefix(const std::string& sha256) { return sha256.substr(0, kHashPrefixLength); }

// "text content", "image ComfyUI_00001_.png", "image".
std::string Describe(const v1::Output& output) {
  if (output.name().empty()) return output.kind().empty() ? "no kind" : output.kind();
  return absl::StrCat(output.kind().empty() ? "no kind" : output.kind(), " ", output.name());
}

bool SameContent(const v1::Output& a, const v1::Output& b) { return a.kind() == b.kind() && a.sha256() == b.sha256(); }

}  // namespace

OutputCheck::OutputCheck(const OutputsSpec& spec) : spec_(spec) {}

std::optional<std::string> OutputCheck::Observe(v1::RunRecord* record) {
  auto& params = *record->mutable_params();
  if (spec_.given) {
    params[std::string(kOutputsDeterministicParam)] = std::string(OutputDeterminismName(spec_.deterministic));
  }
  if (spec_.deterministic == OutputDeterminism::kNone) return std::nullopt;
  if (record->status().code() != v1::RunStatus::CODE_OK || record->outputs().empty()) return std::nullopt;
  auto inputs = params.find(std::string(kInputsSha256Param));
  if (inputs == params.end() || inputs->second.empty()) return std::nullopt;
  if (std::any_of(record->flags().begin(), record->flags().end(),
                  [](const v1::Flag& flag) { return IsExcludingFlag(flag.code()); })) {
    return std::nullopt;
  }
  // The matrix in key order (a proto map has none of its own).
  std::map<std::string, std::string> matrix(record->matrix().begin(), record->matrix().end());
  std::string key = absl::StrCat(record->mode(), "\n");
  for (const auto& [axis, value] : matrix) absl::StrAppend(&key, axis, "=", value, ";");
  absl::StrAppend(&key, "\n", inputs->second);

  auto [it, first] = references_.try_emplace(std::move(key));
  Reference& reference = it->second;
  if (first) {
    reference.outputs.assign(record->outputs().begin(), record->outputs().end());
    reference.run_id = record->run_id();
    reference.phase = record->phase();
    reference.call_index = record->call_index();
    reference.repetition = record->repetition();
    return std::nullopt;
  }

  const size_t expected = reference.outputs.size();
  const size_t found = static_cast<size_t>(record->outputs_size());
  std::string what;
  if (found != expected) {
    what = absl::StrCat(found, found == 1 ? " output" : " outputs", ", expected ", expected);
  } else {
    size_t differing = 0;
    size_t first_differing = 0;
    for (size_t i = 0; i < found; ++i) {
      if (SameContent(record->outputs(static_cast<int>(i)), reference.outputs[i])) continue;
      if (differing++ == 0) first_differing = i;
    }
    if (differing == 0) return std::nullopt;
    const v1::Output& got = record->outputs(static_cast<int>(first_differing));
    const v1::Output& want = reference.outputs[first_differing];
    what = absl::StrCat("output ", first_differing + 1, " of ", found, " (", Describe(got), "): sha256 ",
                        Prefix(got.sha256()), ", expected ", Prefix(want.sha256()));
    if (differing > 1) absl::StrAppend(&what, " (", differing - 1, " more output(s) differ)");
  }
  std::string where = absl::StrCat(PhaseName(reference.phase), " ", reference.call_index);
  if (reference.repetition > 1) absl::StrAppend(&where, ", repetition ", reference.repetition);
  std::string reason = absl::StrCat(what, " as run ", reference.run_id, " (", where, ") gave for the same inputs (",
                                    kInputsSha256Param, " ", Prefix(inputs->second), ")");
  v1::Flag* flag = record->add_flags();
  flag->set_code(std::string(kOutputMismatchFlag));
  flag->set_reason(reason);
  return reason;
}

}  // namespace benchfleet::agent
