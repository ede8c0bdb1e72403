#include "synthesis/readers/measurement_files.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/conditions_fingerprint.h"
#include "common/proto_json.h"
#include "common/record_validation.h"
#include "common/series_folder.h"
#include "synthesis/analysis/run_row.h"
#include "synthesis/readers/file_formats.h"
#include "synthesis/readers/file_record.h"
#include "common/simulated.h"

namespace benchfleet::synthesis {

std::string OutOfBoundsReason(const absl::Status& bounds) {
  return absl::StrCat("outside the record bounds: ", bounds.message());
}

namespace {

enum class Format {
  kUnknown, kRunsJsonl, kRunsCsv, kLlamaBenchJson, kLlamaBenchCsv, kLlamaBenchMarkdown,
  kGenericCsv, kComfyUiLog, kLlamaServerLog,
};

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

std::string_view FirstLine(std::string_view content) {
  if (content.substr(0, 3) == "\xEF\xBB\xBF") content.remove_prefix(3);  // UTF-8 BOM
  for (std::string_view line : SplitLines(content)) {
    if (!Trim(line).empty()) return Trim(line);
  }
  return {};
}

// Detects the format from the file's name and content (never from its extension alone: users
// rename outputs freely).
Format Detect(const std::string& path, std::string_view content) {
  const std::string base = BaseName(path);
  const std::string_view first = FirstLine(content);
  if (base == kRunsJsonlFile) return Format::kRunsJsonl;
  if (base == kRunsCsvFile || first.rfind("run_id,series_id,", 0) == 0) return Format::kRunsCsv;
  if (!first.empty() && first.front() == '{' && (Contains(first, "\"run_id\"") || Contains(first, "\"runId\""))) {
    return Format::kRunsJsonl;
  }
  if (!first.empty() && (first.front() == '[' || first.front() == '{') &&
      (Contains(content, "\"samples_ts\"") || Contains(content, "\"avg_ts\""))) {
    return Format::kLlamaBenchJson;
  }
  if (first.rfind("build_commit,", 0) == 0 && Contains(first, "avg_ts")) return Format::kLlamaBenchCsv;
  if (!first.empty() && first.front() == '|' && Contains(first, "t/s")) return Format::kLlamaBenchMarkdown;
  if (first == kGenericCsvHeader) return Format::kGenericCsv;
  if (Contains(content, "Prompt executed in ") || Contains(content, "got prompt")) return Format::kComfyUiLog;
  if (Contains(content, "print_timing") || Contains(content, " buffer size =") || Contains(content, "load_model:")) {
    return Format::kLlamaServerLog;
  }
  return Format::kUnknown;
}

// Keeps `record`, or skips it (with its line) when it is past a record bound: whatever a file or
// a database holds, no value can make the guide's time or memory grow (a call_index of
// 4294967295 next to 1 once did).
void KeepInBounds(const std::string& file, uint32_t line, v1::RunRecord record, ReadResult* out) {
  if (absl::Status bounds = CheckRecordBounds(record); !bounds.ok()) {
    out->skipped.push_back({file, line, OutOfBoundsReason(bounds)});
    return;
  }
  out->records.push_back(std::move(record));
}

// Parses one runs.jsonl line (1-based `number`) into *record: false, with the line added to
// *skipped and why, when it is malformed or past a record bound (both ways of reading runs.jsonl).
bool ReadRecordLine(const std::string& file, uint32_t number, std::string_view line, v1::RunRecord* record,
                    std::vector<Skipped>* skipped) {
  if (absl::Status s = JsonToMessage(line, record, /*ignore_unknown_fields=*/true); !s.ok()) {
    skipped->push_back({file, number, absl::StrCat("malformed record: ", s.message())});
    return false;
  }
  if (absl::Status bounds = CheckRecordBounds(*record); !bounds.ok()) {
    skipped->push_back({file, number, OutOfBoundsReason(bounds)});
    return false;
  }
  return true;
}

// Reads a benchfleet runs.jsonl (its `content`, already read) line by line: one bad line skips
// only itself.
void ReadRunsJsonl(const std::string& file, std::string_view content, ReadResult* out) {
  const std::vector<std::string_view> lines = SplitLines(content);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = Trim(lines[i]);
    if (line.empty()) continue;
    v1::RunRecord record;
    if (ReadRecordLine(file, static_cast<uint32_t>(i + 1), line, &record, &out->skipped)) {
      out->records.push_back(std::move(record));
    }
  }
}

// Skips the records read from `file` (from index `first` on) that are past a record bound.
void DropOutOfBounds(const std::string& file, size_t first, ReadResult* out) {
  std::vector<v1::RunRecord> read(std::make_move_iterator(out->records.begin() + static_cast<std::ptrdiff_t>(first)),
                                  std::make_move_iterator(out->records.end()));
  out->records.resize(first);
  for (v1::RunRecord& record : read) {
    const uint32_t line = record.provenance().kind() == v1::Provenance::KIND_FILE ? record.provenance().line() : 0;
    KeepInBounds(file, line, std::move(record), out);
  }
}

// Returns what says SIMULATED among a record's identity strings (an OpenAI-compatible answer's
// system_fingerprint, a workflow tool's name), "" when none does. Records stored before every
// backend checked them (the openai backend read only owned_by) said simulated: false.
std::string SimulatedParam(const v1::RunRecord& record) {
  for (const char* key : {"system_fingerprint", "tool"}) {
    auto it = record.params().find(key);
    if (it != record.params().end() && SaysSimulated(it->second)) return absl::StrCat(key, ": ", it->second);
  }
  return "";
}

// Returns what says SIMULATED among the versions and attributes of a series' conditions.
std::string SimulatedCondition(const v1::MachineConditions& conditions) {
  for (const auto& [name, version] : conditions.backend_versions()) {
    if (SaysSimulated(version)) return absl::StrCat("conditions backend_versions[", name, "]: ", version);
  }
  for (const auto& [key, value] : conditions.backend_attributes()) {
    if (SaysSimulated(value)) return absl::StrCat("conditions backend_attributes[", key, "]: ", value);
  }
  return "";
}

// Marks simulated the records (from index first on) whose identity strings, or whose series'
// conditions (the simulated_by reason given), say SIMULATED, saying why in params.simulated_by.
void MarkSimulated(v1::RunRecord* record, const std::string& by_conditions) {
  if (record->simulated()) return;
  std::string why = SimulatedParam(*record);
  if (why.empty()) why = by_conditions;
  if (why.empty()) return;
  record->set_simulated(true);
  (*record->mutable_params())["simulated_by"] = why;
}

void MarkSimulated(size_t first, const std::string& by_conditions, ReadResult* out) {
  for (size_t i = first; i < out->records.size(); ++i) MarkSimulated(&out->records[i], by_conditions);
}

// Keeps the conditions.json beside a runs.jsonl, when there is one. A malformed one is reported
// and the runs are kept: they only lose their machine's name. Returns what in them says
// SIMULATED ("" when nothing does, or there are none).
std::string ReadConditionsBeside(Env* env, const std::string& runs_file, ReadResult* out) {
  const std::string file = JoinPath(DirName(runs_file), kConditionsFile);
  if (!env->FileExists(file)) return "";
  auto content = env->ReadFile(file);
  v1::MachineConditions conditions;
  absl::Status parsed = content.ok() ? JsonToMessage(*content, &conditions, /*ignore_unknown_fields=*/true)
                                     : content.status();
  if (!parsed.ok()) {
    out->skipped.push_back({file, 0, absl::StrCat("conditions not read: ", parsed.message())});
    return "";
  }
  std::string fingerprint = conditions.fingerprint();
  if (fingerprint.empty()) fingerprint = ConditionsFingerprint(conditions);
  std::string simulated = SimulatedCondition(conditions);
  out->conditions[fingerprint] = std::move(conditions);
  return simulated;
}

// ReadRunsJsonl and MarkSimulated as rows: each line parsed into one reused message
// (ReadRecordLine), marked simulated and made a row of a store of its thread; the lines split
// into one contiguous part per thread, the parts appended in order, so rows and skipped lines come
// in line order as they do from the messages' path. The conditions beside are read first (their
// verdict on SIMULATED is needed per record) but listed after the lines, as that path lists them.
// Returns how many rows it added.
size_t ReadRunsJsonlAsRows(Env* env, const std::string& file, std::string_view content, ReadResult* out,
                           RunRows* rows) {
  ReadResult beside;
  const std::string by_conditions = ReadConditionsBeside(env, file, &beside);
  const std::vector<std::string_view> lines = SplitLines(content);
  constexpr size_t kLinesPerThread = 20000;  // below this a thread costs more than it saves
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = std::clamp<size_t>(lines.size() / kLinesPerThread, 1, std::min<size_t>(cores, 8));
  struct Part {
    std::shared_ptr<RunRowStore> store = std::make_shared<RunRowStore>();
    std::vector<const RunRow*> rows;
    std::vector<Skipped> skipped;
  };
  std::vector<Part> parts(threads);
  auto parse = [&](size_t t) {
    Part& part = parts[t];
    v1::RunRecord record;
    const size_t end = lines.size() * (t + 1) / threads;
    part.rows.reserve(end - lines.size() * t / threads);
    for (size_t i = lines.size() * t / threads; i < end; ++i) {
      const std::string_view line = Trim(lines[i]);
      if (line.empty()) continue;
      if (!ReadRecordLine(file, static_cast<uint32_t>(i + 1), line, &record, &part.skipped)) continue;
      MarkSimulated(&record, by_conditions);
      part.rows.push_back(part.store->Add(record));
    }
  };
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t) workers.emplace_back(parse, t);
  parse(0);
  for (std::thread& w : workers) w.join();
  size_t added = 0;
  for (Part& part : parts) {
    added += part.rows.size();
    rows->rows.insert(rows->rows.end(), part.rows.begin(), part.rows.end());
    rows->stores.push_back(std::move(part.store));
    out->skipped.insert(out->skipped.end(), std::make_move_iterator(part.skipped.begin()),
                        std::make_move_iterator(part.skipped.end()));
  }
  for (auto& [fingerprint, conditions] : beside.conditions) out->conditions[fingerprint] = std::move(conditions);
  out->skipped.insert(out->skipped.end(), std::make_move_iterator(beside.skipped.begin()),
                      std::make_move_iterator(beside.skipped.end()));
  return added;
}

void ReadOne(Env* env, const std::string& path, ReadResult* out, RunRows* as_rows) {
  std::string file = path;
  if (env->IsDirectory(path)) {
    file = JoinPath(path, kRunsJsonlFile);
    if (!env->FileExists(file)) {
      out->skipped.push_back({path, 0, env->FileExists(JoinPath(path, kRunsCsvFile))
                                           ? "series folder without runs.jsonl: runs.csv is not read, "
                                             "read runs.jsonl instead (runs.csv is a lossy view of it)"
                                           : "directory is not a series folder: it has no runs.jsonl"});
      return;
    }
  } else if (!env->FileExists(path)) {
    out->skipped.push_back({path, 0, "no such file or directory"});
    return;
  }
  auto content = env->ReadFile(file);
  if (!content.ok()) {
    out->skipped.push_back({file, 0, absl::StrCat("unreadable: ", content.status().message())});
    return;
  }
  const size_t records_before = out->records.size();
  const size_t skipped_before = out->skipped.size();
  size_t rows_added = 0;
  const Format format = Detect(file, *content);
  switch (format) {
    case Format::kRunsJsonl:
      if (as_rows != nullptr) {
        rows_added = ReadRunsJsonlAsRows(env, file, *content, out, as_rows);
        break;
      }
      ReadRunsJsonl(file, *content, out);
      MarkSimulated(records_before, ReadConditionsBeside(env, file, out), out);
      break;
    case Format::kRunsCsv:
      out->skipped.push_back({file, 0, "benchfleet runs.csv is not read: read runs.jsonl instead "
                                       "(the same runs at full fidelity)"});
      return;
    case Format::kLlamaBenchJson: ReadLlamaBenchJson(file, *content, out); break;
    case Format::kLlamaBenchCsv: ReadLlamaBenchCsv(file, *content, out); break;
    case Format::kLlamaBenchMarkdown:
      out->skipped.push_back({file, 0, "llama-bench Markdown table is not read: use llama-bench -o json "
                                       "(it keeps each repetition)"});
      return;
    case Format::kGenericCsv: ReadGenericCsv(file, *content, out); break;
    case Format::kComfyUiLog: ReadComfyUiLog(file, *content, out); break;
    case Format::kLlamaServerLog: ReadLlamaServerLog(file, *content, out); break;
    case Format::kUnknown:
      out->skipped.push_back({file, 0, absl::StrCat("unrecognised format (expected a series folder, runs.jsonl, ",
                                                    "llama-bench -o json/jsonl/csv, a ComfyUI or llama-server log, ",
                                                    "or the generic CSV with header \"", kGenericCsvHeader, "\")")});
      return;
  }
  if (format != Format::kRunsJsonl) DropOutOfBounds(file, records_before, out);
  if (out->records.size() == records_before && rows_added == 0 && out->skipped.size() == skipped_before) {
    out->skipped.push_back({file, 0, "no runs found in it"});
  }
}

}  // namespace

absl::StatusOr<ReadResult> ReadMeasurementFiles(Env* env, const std::vector<std::string>& paths, RunRows* as_rows) {
  ReadResult result;
  const size_t rows_before = as_rows == nullptr ? 0 : as_rows->rows.size();
  for (const std::string& path : paths) ReadOne(env, path, &result, as_rows);
  if (result.records.empty() && (as_rows == nullptr || as_rows->rows.size() == rows_before)) {
    std::vector<std::string> reasons;
    for (const Skipped& s : result.skipped) {
      reasons.push_back(absl::StrCat(s.path, s.line > 0 ? absl::StrCat(":", s.line) : "", ": ", s.reason));
    }
    return absl::InvalidArgumentError(absl::StrCat("no records in ", absl::StrJoin(paths, ", "),
                                                   reasons.empty() ? "" : " (", absl::StrJoin(reasons, "; "),
                                                   reasons.empty() ? "" : ")"));
  }
  return result;
}

}  // namespace benchfleet::synthesis
