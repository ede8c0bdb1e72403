#include "synthesis/analysis/sources.h"

#include <algorithm>
#include <charconv>
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

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ";" : "") + parts[i];
  return out;
}

}  // namespace

std::string SourcesCsv(const SourceTable& table) {
  std::string out = "source_id,operation,run_ids,provenance,inputs,formula,input_refs\r\n";
  for (const auto& s : table.sources()) {
    std::vector<std::string> inputs;
    for (double v : s.inputs) inputs.push_back(FormatDouble(v));
    out += CsvField(s.id) + "," + CsvField(s.operation) + "," + CsvField(Join(s.run_ids)) + "," +
           CsvField(Join(s.provenance)) + "," + CsvField(Join(inputs)) + "," + CsvField(s.formula) + "," +
           CsvField(Join(s.input_refs)) + "\r\n";
  }
  return out;
}

}  // namespace benchfleet::synthesis
