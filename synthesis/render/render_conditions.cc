// Section 1 of the guide: the conditions of every series (RenderConditionsSection in sections.h).
// Built as spans (spans.h): everything that comes from the machine's conditions or the records' text
// (hostnames, versions, dates, sizes, fingerprints, settings) is quoted in a code span and never
// parsed; the only figures outside one are the run counts, printed with RefCountSpans() so the
// guide's number test finds their sources.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "synthesis/render/inline_text.h"
#include "synthesis/render/messages.h"
#include "synthesis/render/sections.h"
#include "synthesis/render/spans.h"

namespace benchfleet::synthesis {
namespace {

// A size as the conditions recorded it, in GiB ("80 GiB", "15,5 Gio"), for a code span: it is
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

// Each item in a code span, joined by ", "; the catalogue's "—" when there is none.
Spans CodeList(const std::vector<std::string>& items, const Messages& m) {
  if (items.empty()) return Wording(m.none_value);
  std::vector<Spans> parts;
  for (const auto& item : items) parts.push_back(CodeSpans(item));
  return JoinSpans(parts, ", ");
}

// French typography puts a space before ":" and ";".
std::string_view Colon(Lang lang) { return lang == Lang::kFr ? " : " : ": "; }
std::string_view Semicolon(Lang lang) { return lang == Lang::kFr ? " ; " : "; "; }

void Line(std::string_view label, const Spans& text, Lang lang, std::vector<ListItem>& out) {
  out.push_back(ListItem{Wording(label) + Colon(lang) + text, {}});
}

void RenderMachineConditions(const v1::MachineConditions& c, Lang lang, const Messages& m, std::vector<ListItem>& out) {
  std::string os = c.os_name() + (c.os_version().empty() ? "" : " " + c.os_version());
  if (!os.empty() || !c.kernel().empty() || !c.architecture().empty()) {
    std::vector<Spans> parts;
    if (!os.empty()) parts.push_back(CodeSpans(os));
    if (!c.kernel().empty()) parts.push_back(Wording(m.cond_kernel) + " " + CodeSpans(c.kernel()));
    if (!c.architecture().empty()) parts.push_back(Wording(m.cond_architecture) + " " + CodeSpans(c.architecture()));
    Line(m.cond_os, JoinSpans(parts, ", "), lang, out);
  }
  if (!c.cpu_model().empty() || c.logical_cores() > 0) {
    std::vector<Spans> parts;
    if (!c.cpu_model().empty()) parts.push_back(CodeSpans(c.cpu_model()));
    if (c.logical_cores() > 0) {
      parts.push_back(Wording(m.cond_cores) + " " + CodeSpans(std::to_string(c.logical_cores())));
    }
    Line(m.cond_cpu, JoinSpans(parts, ", "), lang, out);
  }
  if (c.memory_bytes() > 0) Line(m.cond_memory, CodeSpans(SizeText(c.memory_bytes(), lang, m)), lang, out);
  for (const v1::Accelerator& a : c.accelerators()) {
    std::vector<Spans> facts;
    if (!a.vendor().empty()) facts.push_back(Wording(m.cond_vendor) + " " + CodeSpans(a.vendor()));
    if (!a.driver().empty()) facts.push_back(Wording(m.cond_driver) + " " + CodeSpans(a.driver()));
    if (a.memory_bytes() > 0) {
      facts.push_back(Wording(m.cond_accel_memory) + " " + CodeSpans(SizeText(a.memory_bytes(), lang, m)));
    }
    Line(m.cond_accelerator, CodeSpans(a.name()) + (facts.empty() ? Spans() : " (" + JoinSpans(facts, ", ") + ")"),
         lang, out);
  }
  if (!c.backend_versions().empty()) {
    std::map<std::string, std::string> sorted(c.backend_versions().begin(), c.backend_versions().end());
    std::vector<Spans> parts;
    for (const auto& [backend, version] : sorted) parts.push_back(CodeSpans(backend) + " " + CodeSpans(version));
    Line(m.cond_backend_versions, JoinSpans(parts, ", "), lang, out);
  }
  if (!c.backend_attributes().empty()) {
    std::map<std::string, std::string> sorted(c.backend_attributes().begin(), c.backend_attributes().end());
    std::vector<Spans> parts;
    for (const auto& [key, value] : sorted) parts.push_back(CodeSpans(key) + " " + CodeSpans(value));
    Line(m.cond_backend_attributes, JoinSpans(parts, ", "), lang, out);
  }
  if (!c.agent_version().empty()) Line(m.cond_agent_version, CodeSpans(c.agent_version()), lang, out);
}

void RenderSeries(const SeriesConditions& s, Lang lang, const Messages& m, Document& doc) {
  // Named by machine and what ran: one machine often holds several series.
  std::string what = Join(s.tasks, ", ");
  if (!s.backends.empty()) what += " (" + Join(s.backends, ", ") + ")";
  doc.Heading(3, CodeSpans(s.machine) + (what.empty() ? Spans() : " — " + CodeSpans(what)));
  if (s.simulated) doc.Paragraph({BoldSpan(Wording(m.simulated))});
  std::vector<ListItem> out;
  Line(m.cond_machine, CodeSpans(s.machine) + ", " + Wording(m.cond_class) + " " + CodeSpans(s.machine_class), lang,
       out);
  if (s.conditions) {
    RenderMachineConditions(*s.conditions, lang, m, out);
  } else {
    out.push_back(ListItem{Wording(m.cond_unknown), {}});
  }
  if (s.fingerprint.empty() && !s.key.empty()) Line(m.cond_file, CodeSpans(s.key), lang, out);
  Line(m.cond_series_ids, CodeList(s.series_ids, m), lang, out);
  Line(m.cond_tasks, CodeList(s.tasks, m), lang, out);
  Line(m.cond_backends, CodeList(s.backends, m), lang, out);
  std::vector<std::string> settings;
  for (const auto& [key, value] : s.settings) settings.push_back(key + "=" + value);
  Line(m.cond_settings, CodeList(settings, m), lang, out);
  if (!s.ran_on.empty()) {
    std::vector<Spans> parts;
    for (const auto& [mode, ran_on] : s.ran_on) {
      std::vector<Spans> facts;
      if (!ran_on.devices.empty()) facts.push_back(CodeSpans(ran_on.devices));
      if (!ran_on.offloaded_layers.empty()) {
        facts.push_back(Wording(m.cond_offloaded) + " " + CodeSpans(ran_on.offloaded_layers));
      }
      // An imported log has no mode: its facts alone.
      parts.push_back(mode.empty() ? JoinSpans(facts, ", ") : CodeSpans(mode) + Colon(lang) + JoinSpans(facts, ", "));
    }
    Line(m.cond_ran_on, JoinSpans(parts, Semicolon(lang)), lang, out);
  }
  Line(m.cond_matrix, CodeList(s.matrix_values, m), lang, out);
  Line(m.cond_dates,
       s.first_start.empty() ? Wording(m.none_value) : CodeSpans(s.first_start) + " – " + CodeSpans(s.last_start),
       lang, out);
  Line(m.cond_runs,
       RefCountSpans(s.runs) + Semicolon(lang) + Wording(m.cond_ok_runs) + Colon(lang) + RefCountSpans(s.ok_runs),
       lang, out);
  if (!s.fingerprint.empty()) Line(m.cond_fingerprint, CodeSpans(s.fingerprint), lang, out);
  doc.List(std::move(out));
}

}  // namespace

void RenderConditionsSection(const GuideModel& model, Lang lang, Document& doc) {
  const Messages& m = MessagesOf(lang);
  doc.CollapsedHeading(Wording(m.cond_section));
  doc.Paragraph(Wording(m.cond_intro));
  if (model.series.empty()) {
    doc.Paragraph(Wording(m.cond_none));
    return;
  }
  for (const SeriesConditions& s : model.series) RenderSeries(s, lang, m, doc);
}

std::string ConditionsSizeText(uint64_t bytes, Lang lang) { return SizeText(bytes, lang, MessagesOf(lang)); }

}  // namespace benchfleet::synthesis
