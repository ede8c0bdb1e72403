// Spans from the model and the catalogue's templates (spans.h).
#include "synthesis/render/spans.h"

#include "synthesis/render/inline_markdown.h"
#include "synthesis/render/inline_text.h"

namespace benchfleet::synthesis {
namespace {

void AppendText(Spans& out, std::string_view text) {
  if (text.empty()) return;
  if (out.empty() || out.back().kind != Span::Kind::kText) out.push_back(TextSpan(""));
  out.back().text += text;
}

void AppendSpan(Spans& out, const Span& s) {
  if (s.kind == Span::Kind::kText) {
    AppendText(out, s.text);
  } else {
    out.push_back(s);
  }
}

// Replaces the placeholders of the template's spans; values are copied in, not scanned.
Spans Substitute(const Spans& spans, const SpanValues& values) {
  Spans out;
  for (const Span& s : spans) {
    if (s.kind == Span::Kind::kBold || s.kind == Span::Kind::kLink) {
      Span copy = s;
      copy.children = Substitute(s.children, values);
      out.push_back(std::move(copy));
      continue;
    }
    if (s.kind != Span::Kind::kText) {
      out.push_back(s);
      continue;
    }
    std::string_view text = s.text;
    size_t done = 0;
    for (size_t open = text.find('{'); open != std::string_view::npos; open = text.find('{', open + 1)) {
      size_t close = text.find('}', open);
      if (close == std::string_view::npos) break;
      std::string_view name = text.substr(open + 1, close - open - 1);
      for (const auto& [key, value] : values) {
        if (key != name) continue;
        AppendText(out, text.substr(done, open - done));
        out += value;
        done = close + 1;
        open = close;
        break;
      }
    }
    AppendText(out, text.substr(done));
  }
  return out;
}

}  // namespace

Spans Wording(std::string_view catalogue) { return ParseInline(catalogue); }

Spans FillSpans(std::string_view tmpl, const SpanValues& values) { return Substitute(ParseInline(tmpl), values); }

Spans TextSpans(std::string_view text) {
  Spans out;
  AppendText(out, text);
  return out;
}

Spans CellSpans(std::string_view text) { return TextSpans(OneLine(text)); }

Spans CodeSpans(std::string_view text) {
  if (text.empty()) return TextSpans("—");  // an empty code span cannot be written in Markdown
  std::string code;
  for (char c : text) {
    if (c == '`') {
      code += '\'';
    } else if (c == '\n' || c == '\r' || c == '\t') {
      code += ' ';
    } else {
      code += c;
    }
  }
  return {CodeSpan(std::move(code))};
}

Spans RefSpans(const Figure& f, Lang lang) { return TextSpans(Ref(f, lang)); }

Spans RefCountSpans(const Figure& f) { return TextSpans(RefCount(f)); }

Spans JoinSpans(const std::vector<Spans>& parts, std::string_view sep) {
  Spans out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

Spans& operator+=(Spans& a, const Spans& b) {
  for (const Span& s : b) AppendSpan(a, s);
  return a;
}

Spans& operator+=(Spans& a, std::string_view text) {
  AppendText(a, text);
  return a;
}

Spans operator+(Spans a, const Spans& b) { return std::move(a += b); }

Spans operator+(Spans a, std::string_view text) { return std::move(a += text); }

Spans operator+(std::string_view text, const Spans& b) {
  Spans out = TextSpans(text);
  out += b;
  return out;
}

}  // namespace benchfleet::synthesis
