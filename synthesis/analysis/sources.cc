#include "synthesis/analysis/sources.h"

#include <algorithm>
#include <array>
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

std::string SourceTable::AddValue(std::string_view run_id, std::string_view provenance, double value) {
  // Built in place: a million runs make two million of these, and each string copied through an
  // initializer list was one allocation more.
  Source& s = sources_.emplace_back();
  s.id = "S" + std::to_string(sources_.size());
  s.operation = "value";
  s.run_ids.emplace_back(run_id);
  s.provenance.emplace_back(provenance);
  s.inputs.push_back(value);
  return s.id;
}

std::string SourceTable::AddAggregate(std::string operation, std::vector<std::string> input_refs) {
  std::string id = Add(std::move(operation), {}, {}, {});
  sources_.back().input_refs = std::move(input_refs);
  return id;
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

size_t SourceTable::AppendShifted(SourceTable other) {
  const size_t shift = sources_.size();
  for (Source& s : other.sources_) {
    ShiftSourceId(shift, &s.id);
    // A target's refs are FILE:LINE, every other operation's are source ids.
    if (s.operation != "target") {
      for (std::string& ref : s.input_refs) ShiftSourceId(shift, &ref);
    }
    sources_.push_back(std::move(s));
  }
  return shift;
}

void ShiftSourceId(size_t shift, std::string* id) {
  if (shift == 0 || id->size() < 2 || (*id)[0] != 'S') return;
  size_t index = 0;
  const char* last = id->data() + id->size();
  auto [end, ec] = std::from_chars(id->data() + 1, last, index);
  if (ec != std::errc() || end != last) return;
  char buf[32];
  buf[0] = 'S';
  auto [shifted_end, shifted_ec] = std::to_chars(buf + 1, buf + sizeof(buf), index + shift);
  if (shifted_ec == std::errc()) id->assign(buf, shifted_end);
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

// The bytes that make a CSV field need quotes (RFC 4180): , " CR LF.
constexpr std::array<bool, 256> kNeedsQuotes = [] {
  std::array<bool, 256> t{};
  for (unsigned char c : {',', '"', '\r', '\n'}) t[c] = true;
  return t;
}();

// A table lookup per byte: sources.csv is hundreds of MB at a million runs, and a find_first_of per
// field over four characters was a third of the time spent writing it.
bool NeedsQuotes(std::string_view s) {
  for (char c : s) {
    if (kNeedsQuotes[static_cast<unsigned char>(c)]) return true;
  }
  return false;
}

// Appends `s` as one CSV field: verbatim, or quoted (quotes doubled) when it holds , " CR or LF.
void AppendCsvField(std::string_view s, std::string* out) {
  if (!NeedsQuotes(s)) {
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

// Appends the parts joined with ';' as one field; joined in `scratch` first only when a part needs
// quotes (a file name with a comma), so the common field is appended straight into `out`.
void AppendCsvList(const std::vector<std::string>& parts, std::string* scratch, std::string* out) {
  if (std::none_of(parts.begin(), parts.end(), [](const std::string& p) { return NeedsQuotes(p); })) {
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i) out->push_back(';');
      out->append(parts[i]);
    }
    return;
  }
  scratch->clear();
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) scratch->push_back(';');
    scratch->append(parts[i]);
  }
  AppendCsvField(*scratch, out);
}

// Appends the numbers joined with ';' (shortest round-trip form): never a byte that needs quotes.
void AppendCsvNumbers(const std::vector<double>& values, std::string* out) {
  char buf[64];
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out->push_back(';');
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), values[i]);
    if (ec == std::errc()) {
      out->append(buf, end);
    } else {
      out->append("nan");  // as FormatDouble
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
    AppendCsvList(s.run_ids, &scratch, &out);
    out.push_back(',');
    AppendCsvList(s.provenance, &scratch, &out);
    out.push_back(',');
    AppendCsvNumbers(s.inputs, &out);
    out.push_back(',');
    AppendCsvField(s.formula, &out);
    out.push_back(',');
    AppendCsvList(s.input_refs, &scratch, &out);
    out += "\r\n";
  }
  return out;
}

}  // namespace benchfleet::synthesis
