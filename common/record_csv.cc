#include "common/record_csv.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "benchfleet/v1/record.pb.h"
#include "common/proto_time.h"
#include "common/record_validation.h"

namespace benchfleet {
namespace {

std::string FormatDouble(double v) {
  // %.17g round-trips; trim to what the figure needs.
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.10g", v);
  return buf;
}

std::string MetricColumn(const v1::Metric& m) {
  return m.unit().empty() ? absl::StrCat("metric:", m.name())
                          : absl::StrCat("metric:", m.name(), " [", m.unit(), "]");
}

std::string MemoryColumn(const v1::MemoryFigure& f) {
  std::string kind = v1::MemoryKind_Name(f.kind());
  if (kind.empty()) kind = absl::StrCat("KIND_", static_cast<int>(f.kind()));
  constexpr std::string_view kPrefix = "MEMORY_KIND_";
  if (kind.rfind(kPrefix, 0) == 0) kind = kind.substr(kPrefix.size());
  return absl::StrCat("memory:", kind, f.scope().empty() ? "" : ":", f.scope(), " [bytes]");
}

std::string JoinFlags(const v1::RunRecord& r) {
  std::vector<std::string> codes;
  for (const auto& f : r.flags()) codes.push_back(f.code());
  return absl::StrJoin(codes, ";");
}

std::string JoinMap(const google::protobuf::Map<std::string, std::string>& map) {
  std::map<std::string, std::string> sorted(map.begin(), map.end());
  return absl::StrJoin(sorted, ";", absl::PairFormatter("="));
}

}  // namespace

std::string CsvField(std::string_view value) {
  if (value.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string FormatTimestamp(const google::protobuf::Timestamp& ts) {
  if (ts.seconds() == 0 && ts.nanos() == 0) return "";
  return FormatUtc(ToTime(ts));
}

std::string RunsToCsv(const std::vector<v1::RunRecord>& records) {
  static const std::vector<std::string> kFixed = {
      "run_id", "series_id", "task_id", "agent_id", "conditions_fingerprint", "backend", "task",
      "mode", "phase", "call_index", "repetition", "matrix", "start_time", "end_time",
      "wall_seconds", "status", "status_message", "flags", "outputs_sha256", "simulated",
      "provenance", "agent_version"};
  std::set<std::string> metric_cols, memory_cols, param_cols;
  for (const auto& r : records) {
    for (const auto& m : r.metrics()) metric_cols.insert(MetricColumn(m));
    for (const auto& f : r.memory()) memory_cols.insert(MemoryColumn(f));
    for (const auto& [k, v] : r.params()) param_cols.insert(absl::StrCat("param:", k));
  }
  std::vector<std::string> header = kFixed;
  header.insert(header.end(), metric_cols.begin(), metric_cols.end());
  header.insert(header.end(), memory_cols.begin(), memory_cols.end());
  header.insert(header.end(), param_cols.begin(), param_cols.end());

  std::string out;
  std::vector<std::string> cells;
  for (const auto& h : header) cells.push_back(CsvField(h));
  absl::StrAppend(&out, absl::StrJoin(cells, ","), "\n");

  for (const auto& r : records) {
    std::map<std::string, std::string> row;
    row["run_id"] = r.run_id();
    row["series_id"] = r.series_id();
    row["task_id"] = r.task_id();
    row["agent_id"] = r.agent_id();
    row["conditions_fingerprint"] = r.conditions_fingerprint();
    row["backend"] = r.backend();
    row["task"] = r.task();
    row["mode"] = r.mode();
    row["phase"] = PhaseName(r.phase());
    row["call_index"] = absl::StrCat(r.call_index());
    row["repetition"] = r.repetition() == 0 ? "" : absl::StrCat(r.repetition());
    row["matrix"] = JoinMap(r.matrix());
    row["start_time"] = FormatTimestamp(r.start_time());
    row["end_time"] = FormatTimestamp(r.end_time());
    if (r.has_wall_duration()) {
      row["wall_seconds"] =
          FormatDouble(ToSeconds(r.wall_duration()));
    }
    row["status"] = StatusName(r.status().code());
    row["status_message"] = r.status().message();
    row["flags"] = JoinFlags(r);
    std::vector<std::string> hashes;
    for (const auto& o : r.outputs()) hashes.push_back(o.sha256());
    row["outputs_sha256"] = absl::StrJoin(hashes, ";");
    row["simulated"] = r.simulated() ? "SIMULATED" : "";
    row["provenance"] =
        r.provenance().kind() == v1::Provenance::KIND_UNSPECIFIED ? "" : ProvenanceText(r.provenance());
    row["agent_version"] = r.agent_version();
    for (const auto& m : r.metrics()) row[MetricColumn(m)] = FormatDouble(m.value());
    for (const auto& f : r.memory()) row[MemoryColumn(f)] = absl::StrCat(f.bytes());
    for (const auto& [k, v] : r.params()) row[absl::StrCat("param:", k)] = v;

    cells.clear();
    for (const auto& h : header) {
      auto it = row.find(h);
      cells.push_back(it == row.end() ? "" : CsvField(it->second));
    }
    absl::StrAppend(&out, absl::StrJoin(cells, ","), "\n");
  }
  return out;
}

}  // namespace benchfleet
