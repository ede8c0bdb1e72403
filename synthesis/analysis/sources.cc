#include "synthesis/analysis/sources.h"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <utility>

namespace benchfleet::synthesis {

std::string SourceTable::Add(std::string operation, std::vector<std::string> run_ids,
                             std::vector<std::string> provenance, std::vector<double> inputs) {
  Source s;
  s.id = "S" + std::to_string(sources_.size() + 1);
  s.operation = std::move(operation);
  s.run_ids = std::move(run_ids);
  s.provenance = std::move(provenance);
  s.inputs = std::move(inputs);
  sources_.push_back(std::move(s));
  return sources_.back().id;
}

std::string SourceTable::AddCount(std::vector<std::string> run_ids, std::vector<std::string> provenance) {
  return Add("count", std::move(run_ids), std::move(provenance), {});
}

std::string SourceTable::AddTarget(double value, std::string file_line) {
  std::string id = Add("target", {}, {}, {value});
  sources_.back().input_refs.push_back(std::move(file_line));
  return id;
}

Figure SourceTable::AddFormula(std::string formula, std::vector<double> inputs, std::vector<std::string> input_refs,
                               double value, std::string unit) {
  // The runs behind a formula are those of the sources it names (input_refs): copying their run
  // ids here would repeat a whole cell's runs in every derived figure (gigabytes at a million runs).
  std::string id = Add("formula", {}, {}, std::move(inputs));
  sources_.back().formula = std::move(formula);
  sources_.back().input_refs = std::move(input_refs);
  return Figure{value, std::move(unit), id};
}

const Source* SourceTable::Find(const std::string& id) const {
  // Ids are "S<index+1>" by construction.
  if (id.size() < 2 || id[0] != 'S') return nullptr;
  size_t index = 0;
  auto [end, ec] = std::from_chars(id.data() + 1, id.data() + id.size(), index);
  if (ec != std::errc() || end != id.data() + id.size() || index == 0 || index > sources_.size()) return nullptr;
  return &sources_[index - 1];
}

std::string ProvenanceOf(const v1::RunRecord& record) {
  switch (record.provenance().kind()) {
    case v1::Provenance::KIND_LIVE:
      return "live";
    case v1::Provenance::KIND_FILE:
      return record.provenance().file() + ":" + std::to_string(record.provenance().line());
    default:
      return "unknown";
  }
}

std::string FormatDouble(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

namespace {

// Appends `s` as one CSV field: verbatim, or quoted (quotes doubled) when it holds , " CR or LF.
void AppendCsvField(std::string_view s, std::string* out) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
    out->append(s);
    return;
  }
  out->push_back('"');
  for (char c : s) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

// Sets `scratch` to the parts joined with ';'.
void JoinInto(const std::vector<std::string>& parts, std::string* scratch) {
  scratch->clear();
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) scratch->push_back(';');
    scratch->append(parts[i]);
  }
}

void JoinInto(const std::vector<double>& values, std::string* scratch) {
  scratch->clear();
  char buf[64];
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) scratch->push_back(';');
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), values[i]);
    if (ec == std::errc()) {
      scratch->append(buf, end);
    } else {
      scratch->append("nan");  // as FormatDouble
    }
  }
}

}  // namespace

std::string SourcesCsv(const SourceTable& table) {
  // Appended in place (no per-field temporaries): at a million runs the file is hundreds of MB.
  size_t estimate = 64;
  for (const auto& s : table.sources()) {
    estimate += 48 + s.id.size() + s.operation.size() + s.formula.size() + 24 * s.inputs.size();
    for (const auto& id : s.run_ids) estimate += id.size() + 1;
    for (const auto& p : s.provenance) estimate += p.size() + 1;
  }
  std::string out;
  out.reserve(estimate);
  out += "source_id,operation,run_ids,provenance,inputs,formula,input_refs\r\n";
  std::string scratch;
  for (const auto& s : table.sources()) {
    AppendCsvField(s.id, &out);
    out.push_back(',');
    AppendCsvField(s.operation, &out);
    out.push_back(',');
    JoinInto(s.run_ids, &scratch);
    AppendCsvField(scratch, &out);
    out.push_back(',');
    JoinInto(s.provenance, &scratch);
    AppendCsvField(scratch, &out);
    out.push_back(',');
    JoinInto(s.inputs, &scratch);
    AppendCsvField(scratch, &out);
    out.push_back(',');
    AppendCsvField(s.formula, &out);
    out.push_back(',');
    JoinInto(s.input_refs, &scratch);
    AppendCsvField(scratch, &out);
    out += "\r\n";
  }
  return out;
}

}  // namespace benchfleet::synthesis
