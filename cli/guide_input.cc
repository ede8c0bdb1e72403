#include "cli/guide_input.h"

#include "absl/strings/str_cat.h"

namespace benchfleet::cli {

absl::StatusOr<synthesis::GuideInput> LoadGuideInput(Env* env, const GuideSource& source) {
  if (source.files.empty()) return absl::InvalidArgumentError("give --files PATH...");
  auto read = synthesis::ReadMeasurementFiles(env, source.files);
  if (!read.ok()) return read.status();
  synthesis::GuideInput input;
  input.records = std::move(read->records);
  input.conditions = std::move(read->conditions);
  input.skipped = std::move(read->skipped);
  return input;
}

}  // namespace benchfleet::cli
