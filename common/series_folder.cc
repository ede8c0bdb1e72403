#include "common/series_folder.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/proto_json.h"
#include "common/record_csv.h"

namespace benchfleet {

absl::StatusOr<std::unique_ptr<SeriesFolderWriter>> SeriesFolderWriter::Open(
    Env* env, const std::string& dir, const v1::MachineConditions& conditions) {
  if (auto s = env->CreateDirs(dir); !s.ok()) return s;
  auto json = MessageToJson(conditions, /*pretty=*/true);
  if (!json.ok()) return json.status();
  if (auto s = env->WriteFileAtomically(JoinPath(dir, kConditionsFile), *json + "\n"); !s.ok()) {
    return s;
  }
  std::unique_ptr<SeriesFolderWriter> writer(new SeriesFolderWriter(env, dir));
  const std::string jsonl_path = JoinPath(dir, kRunsJsonlFile);
  if (env->FileExists(jsonl_path)) {
    auto existing = ReadRecords(env, jsonl_path);
    if (!existing.ok()) return existing.status();
    for (auto& sourced : *existing) writer->records_.push_back(std::move(sourced.record));
  }
  auto file = env->NewAppendableFile(jsonl_path);
  if (!file.ok()) return file.status();
  writer->jsonl_ = std::move(*file);
  return writer;
}

absl::Status SeriesFolderWriter::Add(const v1::RunRecord& record) { return AddBatch({record}); }

absl::Status SeriesFolderWriter::AddBatch(const std::vector<v1::RunRecord>& records) {
  std::string lines;
  for (const v1::RunRecord& record : records) {
    auto line = MessageToJson(record);
    if (!line.ok()) return line.status();
    absl::StrAppend(&lines, *line, "\n");
  }
  if (auto s = jsonl_->Append(lines); !s.ok()) return s;
  if (auto s = jsonl_->Sync(); !s.ok()) return s;
  records_.insert(records_.end(), records.begin(), records.end());
  return env_->WriteFileAtomically(JoinPath(dir_, kRunsCsvFile), RunsToCsv(records_));
}

absl::StatusOr<std::vector<SourcedRecord>> ReadRecords(Env* env, const std::string& path) {
  std::string file = path;
  if (env->IsDirectory(path)) {
    file = JoinPath(path, kRunsJsonlFile);
    if (!env->FileExists(file)) {
      return absl::NotFoundError(
          absl::StrCat(path, " is not a series folder: it has no ", kRunsJsonlFile));
    }
  }
  auto content = env->ReadFile(file);
  if (!content.ok()) return content.status();
  std::vector<SourcedRecord> out;
  uint32_t line_number = 0;
  for (absl::string_view line : absl::StrSplit(*content, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    SourcedRecord sourced;
    sourced.file = file;
    sourced.line = line_number;
    if (auto s = JsonToMessage(std::string_view(line.data(), line.size()), &sourced.record, /*ignore_unknown_fields=*/true); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(file, ":", line_number, ": ", s.message()));
    }
    out.push_back(std::move(sourced));
  }
  return out;
}

}  // namespace benchfleet
