#include "coordinator/store/run_rows.h"

#include <cctype>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/figures.h"
#include "common/hashing.h"
#include "common/proto_time.h"
#include "common/record_validation.h"
#include "coordinator/store/civil_time.h"
#include "coordinator/store/pg_text.h"
#include "coordinator/store/proto_json_writer.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"

namespace benchfleet::coordinator {
namespace {

void Tab(std::string* out) { out->push_back('\t'); }

void AppendTimestamp(bool has, const google::protobuf::Timestamp& ts, std::string* out) {
  // An unset or zero timestamp is "unknown", as in runs.csv.
  if (!has || (ts.seconds() == 0 && ts.nanos() == 0)) {
    AppendCopyNull(out);
    return;
  }
  // Already range-checked by the JSON writer. PostgreSQL rounds the nanoseconds to microseconds.
  AppendCivilSecond(ToCivilSecond(ts.seconds()), ' ', out);
  AppendJsonFraction(ts.nanos(), out);
  out->append("+00");
}

// Appends the flag codes as a text[] literal, e.g. {"CACHE_HIT","NEW_CODE"}.
void AppendFlagArray(const v1::RunRecord& record, std::string* out) {
  std::string literal = "{";
  for (int i = 0; i < record.flags_size(); ++i) {
    if (i > 0) literal.push_back(',');
    literal.push_back('"');
    for (const char c : record.flags(i).code()) {
      if (c == '"' || c == '\\') literal.push_back('\\');
      literal.push_back(c);
    }
    literal.push_back('"');
  }
  literal.push_back('}');
  AppendCopyField(literal, out);
}

// Appends the metrics as one object {name: value}, so SQL reads a figure with ->>.
void AppendMetricsObject(const v1::RunRecord& record, std::string* out) {
  std::string json = "{";
  for (int i = 0; i < record.metrics_size(); ++i) {
    if (i > 0) json.push_back(',');
    AppendJsonString(record.metrics(i).name(), &json);
    json.push_back(':');
    AppendJsonNumber(record.metrics(i).value(), &json);
  }
  json.push_back('}');
  AppendCopyField(json, out);
}

// Appends `json` (the small JSON column of a record part) as a COPY field, or NULL when the part
// is empty. A NUL escape becomes U+FFFD, as jsonb refuses \u0000 (the record itself, in
// record_pb, keeps the NUL).
void AppendJsonColumn(std::string* json, bool empty, std::string* out) {
  if (empty) {
    AppendCopyNull(out);
    return;
  }
  ReplaceJsonNulEscapes(json);
  AppendCopyJson(*json, out);
}

// Appends the JSON array of the elements of `list` that `keep` selects (the proto3 JSON form of
// each), or NULL when none is kept. Only fails as CheckJsonForm would, which AppendRunRow ran.
template <typename List, typename Keep>
void AppendJsonList(const List& list, Keep keep, std::string* out) {
  thread_local std::string json;
  json.assign("[");
  for (const auto& element : list) {
    if (!keep(element)) continue;
    if (json.size() > 1) json.push_back(',');
    (void)AppendProtoJson(element, &json);
  }
  json.push_back(']');
  AppendJsonColumn(&json, json.size() == 2, out);
}

// Appends the matrix point as a JSON object of strings, or NULL when the record has none.
void AppendMatrixObject(const v1::RunRecord& record, std::string* out) {
  thread_local std::string json;
  json.assign("{");
  for (const auto& [key, value] : record.matrix()) {
    if (json.size() > 1) json.push_back(',');
    AppendJsonString(key, &json);
    json.push_back(':');
    AppendJsonString(value, &json);
  }
  json.push_back('}');
  AppendJsonColumn(&json, record.matrix().empty(), out);
}

// Appends the headline_label, headline_unit, headline_value and headline_better fields: the
// record's main figure as its backend declared it (all four NULL when it has none).
void AppendMainFigure(const v1::RunRecord& record, std::string* out) {
  const v1::Metric* main = MainFigure(record);
  if (main == nullptr) {
    out->append("\\N\t\\N\t\\N\t\\N");
    return;
  }
  // FigureLabel's rule (the label, else the name) without its copy: this runs for every record.
  AppendCopyField(main->label().empty() ? main->name() : main->label(), out);
  Tab(out);
  AppendCopyField(main->unit(), out);
  Tab(out);
  if (std::isfinite(main->value())) {
    AppendJsonNumber(main->value(), out);
  } else {
    AppendCopyNull(out);
  }
  Tab(out);
  const std::string_view better = BetterWord(main->better());
  if (better.empty()) {
    AppendCopyNull(out);
  } else {
    out->append(better);
  }
}

// Serializes `record` deterministically (map entries sorted by key), so that the same record
// always gives the same bytes: its content hash is taken from them.
void SerializeDeterministic(const v1::RunRecord& record, std::string* bytes) {
  bytes->clear();
  google::protobuf::io::StringOutputStream stream(bytes);
  google::protobuf::io::CodedOutputStream out(&stream);
  out.SetSerializationDeterministic(true);
  record.SerializeToCodedStream(&out);
}

// The SHA-256 of `bytes` (a serialized RunRecord) without its top-level fields run_id (the key,
// compared on its own in lower case) and provenance (where a record was read from is not its
// content).
std::string ContentSha256(std::string_view bytes) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  std::string kept;
  kept.reserve(bytes.size());
  int from = 0;
  while (true) {
    const int at = in.CurrentPosition();
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    if (!WireFormatLite::SkipField(&in, tag)) break;
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    if (field == v1::RunRecord::kRunIdFieldNumber || field == v1::RunRecord::kProvenanceFieldNumber) {
      kept.append(bytes.substr(from, at - from));
      from = in.CurrentPosition();
    }
  }
  kept.append(bytes.substr(from));
  return Sha256Hex(kept);
}

// Appends a serialized record as a bytea field in COPY text: the hex form "\\x..." (its
// backslash doubled, as COPY text escapes one).
void AppendBytea(std::string_view bytes, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  const size_t start = out->size();
  out->resize(start + 3 + 2 * bytes.size());
  char* p = out->data() + start;
  *p++ = '\\';
  *p++ = '\\';
  *p++ = 'x';
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    *p++ = kHex[b >> 4];
    *p++ = kHex[b & 0xf];
  }
}

}  // namespace

const char kRunRowColumns[] =
    "run_id, series_id, task_id, agent_id, conditions_fingerprint, backend, task, mode, phase, "
    "call_index, repetition, start_time, end_time, wall_seconds, status, simulated, provenance, "
    "agent_version, flags, metrics, record_pb, memory, flag_details, headline_figures, matrix, "
    "headline_label, headline_unit, headline_value, headline_better, content_sha256";

std::string RunContentSha256(const v1::RunRecord& record) {
  std::string bytes;
  SerializeDeterministic(record, &bytes);
  return ContentSha256(bytes);
}

std::string CanonicalRunId(const std::string& run_id) {
  std::string id = run_id;
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return id;
}

absl::Status AppendRunRow(const v1::RunRecord& record, PreparedRuns* out) {
  // The row keeps the record in binary (record_pb, 0007_lean_row.sql), but readers derive its JSON
  // form when asked: a record that has none (a timestamp or duration out of range) is refused
  // here, the one step that can fail, before anything is appended.
  absl::Status has_json_form = CheckJsonForm(record);
  if (!has_json_form.ok()) return has_json_form;

  std::string& line = out->rows;
  const size_t offset = line.size();
  PreparedRun run;
  run.run_id = CanonicalRunId(record.run_id());
  line.append(run.run_id);
  Tab(&line);
  AppendCopyField(record.series_id(), &line);
  Tab(&line);
  AppendCopyField(record.task_id(), &line);
  Tab(&line);
  AppendCopyField(record.agent_id(), &line);
  Tab(&line);
  AppendCopyField(record.conditions_fingerprint(), &line);
  Tab(&line);
  AppendCopyField(record.backend(), &line);
  Tab(&line);
  AppendCopyField(record.task(), &line);
  Tab(&line);
  AppendCopyField(record.mode(), &line);
  Tab(&line);
  line.append(PhaseName(record.phase()));
  Tab(&line);
  absl::StrAppend(&line, record.call_index());
  Tab(&line);
  absl::StrAppend(&line, record.repetition());
  Tab(&line);
  AppendTimestamp(record.has_start_time(), record.start_time(), &line);
  Tab(&line);
  AppendTimestamp(record.has_end_time(), record.end_time(), &line);
  Tab(&line);
  if (record.has_wall_duration()) {
    AppendJsonNumber(ToSeconds(record.wall_duration()), &line);
  } else {
    AppendCopyNull(&line);
  }
  Tab(&line);
  line.append(StatusName(record.status().code()));
  Tab(&line);
  line.append(record.simulated() ? "t" : "f");
  Tab(&line);
  AppendCopyField(ProvenanceText(record.provenance()), &line);
  Tab(&line);
  AppendCopyField(record.agent_version(), &line);
  Tab(&line);
  AppendFlagArray(record, &line);
  Tab(&line);
  AppendMetricsObject(record, &line);
  Tab(&line);
  thread_local std::string bytes;
  SerializeDeterministic(record, &bytes);
  AppendBytea(bytes, &line);
  Tab(&line);
  AppendJsonList(record.memory(), [](const v1::MemoryFigure&) { return true; }, &line);
  Tab(&line);
  AppendJsonList(record.flags(), [](const v1::Flag&) { return true; }, &line);
  Tab(&line);
  AppendJsonList(record.metrics(), [](const v1::Metric& m) { return m.headline() > 0; }, &line);
  Tab(&line);
  AppendMatrixObject(record, &line);
  Tab(&line);
  AppendMainFigure(record, &line);
  Tab(&line);
  run.content_sha256 = ContentSha256(bytes);
  line.append(run.content_sha256);
  line.push_back('\n');

  run.offset = offset;
  run.size = line.size() - offset;
  out->runs.push_back(std::move(run));
  return absl::OkStatus();
}

}  // namespace benchfleet::coordinator
