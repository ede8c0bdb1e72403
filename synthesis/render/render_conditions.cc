// Section 1 of the guide: the conditions of every series (RenderConditionsSection in sections.h).
// Everything that comes from the machine's conditions or the records' text (hostnames, versions,
// dates, sizes, fingerprints, settings) is quoted in a Code() span; the only figures outside one
// are the run counts, printed with Ref() so the guide's number test finds their sources.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "synthesis/render/inline_markdown.h"
#include "synthesis/render/inline_text.h"
#include "synthesis/render/messages.h"
#include "synthesis/render/sections.h"

namespace benchfleet::synthesis {
namespace {

// A size as the conditions recorded it, in GiB ("80 GiB", "15,5 Gio"), for a Code() span: it is
// quoted, not a figure of the guide (no source row). Below one GiB, MiB.
std::string SizeText(uint64_t bytes, Lang lang, const Messages& m) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  constexpr double kMiB = 1024.0 * 1024.0;
  const bool gib = static_cast<double>(bytes) >= kGiB;
  const double v = static_cast<double>(bytes) / (gib ? kGiB : kMiB);
  std::string s = Fixed(v, 1);
  if (s.size() > 2 && s.ends_with(".0")) s.resize(s.size() - 2);
  if (lang == Lang::kFr) {
    for (char& c : s) {
      if (c == '.') c = ',';
    }
  }
  std::string unit = gib ? std::string(m.gib) : (lang == Lang::kFr ? "Mio" : "MiB");
  return s + " " + unit;
}

// Each item in a Code() span, joined by ", "; the catalogue's "—" when there is none.
std::string CodeList(const std::vector<std::string>& items, const Messages& m) {
  if (items.empty()) return std::string(m.none_value);
  std::vector<std::string> parts;
  for (const auto& item : items) parts.push_back(Code(item));
  return Join(parts, ", ");
}

// French typography puts a space before ":" and ";".
std::string_view Colon(Lang lang) { return lang == Lang::kFr ? " : " : ": "; }
std::string_view Semicolon(Lang lang) { return lang == Lang::kFr ? " ; " : "; "; }

void Line(std::string_view label, const std::string& text, Lang lang, std::vector<ListItem>& out) {
  out.push_back(ParseItem(std::string(label) + std::string(Colon(lang)) + text));
}

void RenderMachineConditions(const v1::MachineConditions& c, Lang lang, const Messages& m, std::vector<ListItem>& out) {
  std::string os = c.os_name() + (c.os_version().empty() ? "" : " " + c.os_version());
  if (!os.empty() || !c.kernel().empty() || !c.architecture().empty()) {
    std::vector<std::string> parts;
    if (!os.empty()) parts.push_back(Code(os));
    if (!c.kernel().empty()) parts.push_back(std::string(m.cond_kernel) + " " + Code(c.kernel()));
    if (!c.architecture().empty()) parts.push_back(std::string(m.cond_architecture) + " " + Code(c.architecture()));
    Line(m.cond_os, Join(parts, ", "), lang, out);
  }
  if (!c.cpu_model().empty() || c.logical_cores() > 0) {
    std::vector<std::string> parts;
    if (!c.cpu_model().empty()) parts.push_back(Code(c.cpu_model()));
    if (c.logical_cores() > 0) {
      parts.push_back(std::string(m.cond_cores) + " " + Code(std::to_string(c.logical_cores())));
    }
    Line(m.cond_cpu, Join(parts, ", "), lang, out);
  }
  if (c.memory_bytes() > 0) Line(m.cond_memory, Code(SizeText(c.memory_bytes(), lang, m)), lang, out);
  for (const v1::Accelerator& a : c.accelerators()) {
    std::vector<std::string> facts;
    if (!a.vendor().empty()) facts.push_back(std::string(m.cond_vendor) + " " + Code(a.vendor()));
    if (!a.driver().empty()) facts.push_back(std::string(m.cond_driver) + " " + Code(a.driver()));
    if (a.memory_bytes() > 0) {
      facts.push_back(std::string(m.cond_accel_memory) + " " + Code(SizeText(a.memory_bytes(), lang, m)));
    }
    Line(m.cond_accelerator, Code(a.name()) + (facts.empty() ? "" : " (" + Join(facts, ", ") + ")"), lang, out);
  }
  if (!c.backend_versions().empty()) {
    std::map<std::string, std::string> sorted(c.backend_versions().begin(), c.backend_versions().end());
    std::vector<std::string> parts;
    for (const auto& [backend, version] : sorted) parts.push_back(Code(backend) + " " + Code(version));
    Line(m.cond_backend_versions, Join(parts, ", "), lang, out);
  }
  if (!c.backend_attributes().empty()) {
    std::map<std::string, std::string> sorted(c.backend_attributes().begin(), c.backend_attributes().end());
    std::vector<std::string> parts;
    for (const auto& [key, value] : sorted) parts.push_back(Code(key) + " " + Code(value));
    Line(m.cond_backend_attributes, Join(parts, ", "), lang, out);
  }
  if (!c.agent_version().empty()) Line(m.cond_agent_version, Code(c.agent_version()), lang, out);
}

void RenderSeries(const SeriesConditions& s, Lang lang, const Messages& m, Document& doc) {
  // Named by machine and what ran: one machine often holds several series.
  std::string what = Join(s.tasks, ", ");
  if (!s.backends.empty()) what += " (" + Join(s.backends, ", ") + ")";
  doc.Heading(3, ParseInline(Code(s.machine) + (what.empty() ? "" : " — " + Code(what))));
  if (s.simulated) doc.Paragraph({BoldSpan(ParseInline(m.simulated))});
  std::vector<ListItem> out;
  Line(m.cond_machine, Code(s.machine) + ", " + std::string(m.cond_class) + " " + Code(s.machine_class), lang, out);
  if (s.conditions) {
    RenderMachineConditions(*s.conditions, lang, m, out);
  } else {
    out.push_back(ParseItem(m.cond_unknown));
  }
  if (s.fingerprint.empty() && !s.key.empty()) Line(m.cond_file, Code(s.key), lang, out);
  Line(m.cond_series_ids, CodeList(s.series_ids, m), lang, out);
  Line(m.cond_tasks, CodeList(s.tasks, m), lang, out);
  Line(m.cond_backends, CodeList(s.backends, m), lang, out);
  std::vector<std::string> settings;
  for (const auto& [key, value] : s.settings) settings.push_back(key + "=" + value);
  Line(m.cond_settings, CodeList(settings, m), lang, out);
  if (!s.ran_on.empty()) {
    std::vector<std::string> parts;
    for (const auto& [mode, ran_on] : s.ran_on) {
      std::vector<std::string> facts;
      if (!ran_on.devices.empty()) facts.push_back(Code(ran_on.devices));
      if (!ran_on.offloaded_layers.empty()) {
        facts.push_back(std::string(m.cond_offloaded) + " " + Code(ran_on.offloaded_layers));
      }
      // An imported log has no mode: its facts alone.
      parts.push_back(mode.empty() ? Join(facts, ", ") : Code(mode) + std::string(Colon(lang)) + Join(facts, ", "));
    }
    Line(m.cond_ran_on, Join(parts, std::string(Semicolon(lang))), lang, out);
  }
  Line(m.cond_matrix, CodeList(s.matrix_values, m), lang, out);
  Line(m.cond_dates,
       s.first_start.empty() ? std::string(m.none_value) : Code(s.first_start) + " – " + Code(s.last_start), lang,
       out);
  Line(m.cond_runs,
       RefCount(s.runs) + std::string(Semicolon(lang)) + std::string(m.cond_ok_runs) + std::string(Colon(lang)) +
           RefCount(s.ok_runs),
       lang, out);
  if (!s.fingerprint.empty()) Line(m.cond_fingerprint, Code(s.fingerprint), lang, out);
  doc.List(std::move(out));
}

}  // namespace

void RenderConditionsSection(const GuideModel& model, Lang lang, Document& doc) {
  const Messages& m = MessagesOf(lang);
  doc.CollapsedHeading(ParseInline(m.cond_section));
  doc.Paragraph(ParseInline(m.cond_intro));
  if (model.series.empty()) {
    doc.Paragraph(ParseInline(m.cond_none));
    return;
  }
  for (const SeriesConditions& s : model.series) RenderSeries(s, lang, m, doc);
}

std::string ConditionsSizeText(uint64_t bytes, Lang lang) { return SizeText(bytes, lang, MessagesOf(lang)); }

}  // namespace benchfleet::synthesis
