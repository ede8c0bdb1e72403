// llama-bench -o json / jsonl / csv. llama-bench runs each test r times and prints the mean and
// standard deviation; json/jsonl also hold each repetition in samples_ns / samples_ts, and each
// repetition becomes a record (a guide publishes runs, never only a mean).
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/figures.h"
#include "common/proto_time.h"
#include "nlohmann/json.hpp"
#include "synthesis/readers/file_formats.h"
#include "synthesis/readers/file_record.h"
#include "common/simulated.h"

namespace benchfleet::synthesis {
namespace {

// What llama-bench measures (common/figures.h): its tokens/s (avg_ts or one sample's), the test's
// time and its token count.
constexpr FigureDeclaration kLlamaBenchFigures[] = {
    {.name = "tokens_per_second", .unit = "tokens/s", .better = v1::BETTER_HIGHER, .headline = 1,
     .label = "tokens/s"},
    {.name = "wall_seconds", .unit = "s", .better = v1::BETTER_LOWER},
    {.name = "tokens", .unit = "tokens"},
};

constexpr char kBackend[] = "llama-bench";

// A test's settings, as strings, from either a JSON object or a CSV row.
using Fields = std::map<std::string, std::string>;

std::string Field(const Fields& f, const std::string& name) {
  auto it = f.find(name);
  return it == f.end() ? "" : it->second;
}

int64_t IntField(const Fields& f, const std::string& name) {
  const double value = ParseDouble(Field(f, name)).value_or(0);
  // A count beyond 10^15 (or not a number) is no count; converting one beyond int64_t would be
  // undefined, and n_prompt + n_gen must not overflow either.
  return std::abs(value) < 1e15 ? static_cast<int64_t>(value) : 0;
}

// Returns "pp512", "tg128", "pp512+tg128", with "@d<depth>" when n_depth > 0 (llama-bench's own names).
std::string TestName(const Fields& f) {
  int64_t n_prompt = IntField(f, "n_prompt"), n_gen = IntField(f, "n_gen"), n_depth = IntField(f, "n_depth");
  std::string name;
  if (n_prompt > 0 && n_gen > 0) {
    name = absl::StrCat("pp", n_prompt, "+tg", n_gen);
  } else if (n_gen > 0) {
    name = absl::StrCat("tg", n_gen);
  } else {
    name = absl::StrCat("pp", n_prompt);
  }
  if (n_depth > 0) absl::StrAppend(&name, " @ d", n_depth);
  return name;
}

// Fills what every record of one test shares.
v1::RunRecord TestRecord(const std::string& path, uint32_t line, int part, const Fields& f) {
  v1::RunRecord record = NewFileRecord(path, line, kBackend, part);
  record.set_task(absl::StrCat(Field(f, "model_type"), " ", TestName(f)));
  // -ngl -1 (auto) on a CPU-only build offloads nothing: the backends column says which.
  int64_t ngl = IntField(f, "n_gpu_layers");
  bool gpu = ngl > 0 || (ngl < 0 && Field(f, "backends") != "CPU" && !Field(f, "backends").empty());
  record.set_mode(gpu ? "gpu" : "cpu");
  record.set_phase(v1::PHASE_WARM);  // llama-bench warms up before its repetitions
  for (const char* key : {"build_commit", "model_filename", "n_prompt", "n_gen", "n_depth", "n_batch",
                          "n_ubatch", "n_threads", "n_gpu_layers", "type_k", "type_v", "flash_attn",
                          "cpu_info", "gpu_info", "backends"}) {
    if (f.count(key)) (*record.mutable_params())[key] = Field(f, key);
  }
  // A simulator announces itself in the build it reports (llama-server-sim's build is
  // "benchfleet-sim (SIMULATED)"): then every record of the test is simulated.
  for (const char* key : {"build_commit", "build_number"}) {
    if (!SaysSimulated(Field(f, key))) continue;
    record.set_simulated(true);
    (*record.mutable_params())["simulated_by"] = absl::StrCat(key, ": ", Field(f, key));
    break;
  }
  // What a sweep varies besides the test itself.
  for (const char* key : {"n_threads", "n_batch", "n_ubatch", "n_gpu_layers", "type_k", "type_v", "flash_attn"}) {
    if (f.count(key)) (*record.mutable_matrix())[key] = Field(f, key);
  }
  absl::Time start;
  std::string err;
  if (absl::ParseTime(absl::RFC3339_full, Field(f, "test_time"), &start, &err)) {
    record.mutable_start_time()->set_seconds(absl::ToUnixSeconds(start));
  }
  return record;
}

// Adds one record holding the mean over the repetitions, for outputs without samples (-o csv, old
// llama-bench JSON), flagged MEAN_ONLY so a guide can tell it from a run.
void AddMeanRecord(const std::string& path, uint32_t line, const Fields& f, const std::string& why,
                   CallCounter* calls, ReadResult* out) {
  auto avg_ts = ParseDouble(Field(f, "avg_ts"));
  auto avg_ns = ParseDouble(Field(f, "avg_ns"));
  if (!avg_ts.has_value() || !avg_ns.has_value()) {
    out->skipped.push_back({path, line, "avg_ts / avg_ns is missing or not a number"});
    return;
  }
  v1::RunRecord record = TestRecord(path, line, -1, f);
  record.set_call_index(calls->Next(record));
  AddMetric(&record, "tokens_per_second", *avg_ts, "tokens/s");
  AddMetric(&record, "wall_seconds", *avg_ns / 1e9, "s");
  AddMetric(&record, "tokens", static_cast<double>(IntField(f, "n_prompt") + IntField(f, "n_gen")), "tokens");
  v1::Flag* flag = record.add_flags();
  flag->set_code("MEAN_ONLY");
  flag->set_reason(absl::StrCat(why, ": avg_ts ", Field(f, "avg_ts"),
                                " tokens/s is the mean over the repetitions (stddev_ts ", Field(f, "stddev_ts"),
                                "); llama-bench -o json keeps each repetition"));
  StampFigures(kLlamaBenchFigures, &record);
  out->records.push_back(std::move(record));
}

std::string ScalarText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return v.dump();  // round-trip precision (StrCat keeps 6 digits)
  return "";
}

// Reads one test object; line is the line its '{' is on.
void ReadTestObject(const std::string& path, uint32_t line, const nlohmann::json& obj, CallCounter* calls,
                    ReadResult* out) {
  if (!obj.is_object() || !obj.contains("avg_ts")) {
    out->skipped.push_back({path, line, "not a llama-bench test object: no avg_ts"});
    return;
  }
  Fields f;
  for (auto it = obj.begin(); it != obj.end(); ++it) f[it.key()] = ScalarText(it.value());
  if (!obj.contains("samples_ts") || !obj["samples_ts"].is_array() || !obj.contains("samples_ns") ||
      !obj["samples_ns"].is_array()) {
    AddMeanRecord(path, line, f, "this llama-bench output has no samples_ts / samples_ns", calls, out);
    return;
  }
  const auto& ts = obj["samples_ts"];
  const auto& ns = obj["samples_ns"];
  if (ts.size() != ns.size() || ts.empty()) {
    out->skipped.push_back({path, line, absl::StrCat("samples_ts has ", ts.size(), " values and samples_ns ",
                                                     ns.size(), ": need the same non-zero count")});
    return;
  }
  for (size_t i = 0; i < ts.size(); ++i) {
    if (!ts[i].is_number() || !ns[i].is_number()) {
      out->skipped.push_back({path, line, absl::StrCat("sample ", i + 1, " is not a number")});
      continue;
    }
    // Converting nanoseconds beyond int64_t would be undefined (about 292 years).
    if (!(std::abs(ns[i].get<double>()) < 9e18)) {
      out->skipped.push_back({path, line, absl::StrCat("sample ", i + 1, " has samples_ns out of range")});
      continue;
    }
    v1::RunRecord record = TestRecord(path, line, static_cast<int>(i), f);
    record.set_call_index(calls->Next(record));
    double seconds = ns[i].get<double>() / 1e9;
    SetDuration(absl::Nanoseconds(static_cast<int64_t>(ns[i].get<double>())), record.mutable_wall_duration());
    AddMetric(&record, "tokens_per_second", ts[i].get<double>(), "tokens/s");
    AddMetric(&record, "wall_seconds", seconds, "s");
    int64_t tokens = IntField(f, "n_prompt") + IntField(f, "n_gen");
    AddMetric(&record, "tokens", static_cast<double>(tokens), "tokens");
    (*record.mutable_params())["sample"] = absl::StrCat(i + 1, "/", ts.size());
    StampFigures(kLlamaBenchFigures, &record);
    out->records.push_back(std::move(record));
  }
}

// Returns the 1-based lines of the top-level objects of a JSON array ("[ {...}, {...} ]").
std::vector<uint32_t> ArrayElementLines(std::string_view content) {
  std::vector<uint32_t> lines;
  uint32_t line = 1;
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : content) {
    if (c == '\n') ++line;
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (depth == 1 && c == '{') lines.push_back(line);
      ++depth;
    } else if (c == ']' || c == '}') --depth;
  }
  return lines;
}

uint32_t LineOfOffset(std::string_view content, size_t offset) {
  uint32_t line = 1;
  for (size_t i = 0; i < offset && i < content.size(); ++i) line += content[i] == '\n';
  return line;
}

}  // namespace

void ReadLlamaBenchJson(const std::string& path, std::string_view content, ReadResult* out) {
  CallCounter calls;
  std::string_view trimmed = Trim(content);
  if (!trimmed.empty() && trimmed.front() == '[') {
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(content.begin(), content.end());
    } catch (const nlohmann::json::parse_error& e) {
      out->skipped.push_back({path, LineOfOffset(content, e.byte > 0 ? e.byte - 1 : 0),
                              absl::StrCat("malformed llama-bench JSON: ", e.what())});
      return;
    }
    std::vector<uint32_t> lines = ArrayElementLines(content);
    for (size_t i = 0; i < doc.size(); ++i) {
      ReadTestObject(path, i < lines.size() ? lines[i] : 0, doc[i], &calls, out);
    }
    return;
  }
  std::vector<std::string_view> lines = SplitLines(content);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = Trim(lines[i]);
    if (line.empty()) continue;
    uint32_t number = static_cast<uint32_t>(i + 1);
    nlohmann::json obj = nlohmann::json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (obj.is_discarded()) {
      out->skipped.push_back({path, number, "malformed JSON line"});
      continue;
    }
    ReadTestObject(path, number, obj, &calls, out);
  }
}

void ReadLlamaBenchCsv(const std::string& path, std::string_view content, ReadResult* out) {
  std::vector<std::string_view> lines = SplitLines(content);
  if (lines.empty()) return;
  auto header = SplitCsvLine(lines[0]);
  if (!header.has_value()) {
    out->skipped.push_back({path, 1, "malformed CSV header"});
    return;
  }
  CallCounter calls;
  for (size_t i = 1; i < lines.size(); ++i) {
    uint32_t number = static_cast<uint32_t>(i + 1);
    if (Trim(lines[i]).empty()) continue;
    auto cells = SplitCsvLine(lines[i]);
    if (!cells.has_value() || cells->size() != header->size()) {
      out->skipped.push_back({path, number, absl::StrCat("expected ", header->size(), " cells, got ",
                                                         cells.has_value() ? cells->size() : 0)});
      continue;
    }
    Fields f;
    for (size_t c = 0; c < header->size(); ++c) f[(*header)[c]] = (*cells)[c];
    AddMeanRecord(path, number, f, "llama-bench -o csv has no per-repetition samples", &calls, out);
  }
}

}  // namespace benchfleet::synthesis
