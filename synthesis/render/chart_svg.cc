#include "synthesis/render/chart_svg.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>

#include "synthesis/render/chart_axes.h"
#include "synthesis/render/inline_text.h"

namespace benchfleet::synthesis {
namespace {

// DejaVu Sans advance widths of ASCII 32..126, in thousandths of an em (measured in chromium with
// canvas measureText); bold runs about 10 % wider.
constexpr int kAsciiWidths[] = {
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636, 636,
    636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632, 575, 775,
    752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390,
    337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612,
    635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838};

// Decodes the code point at text[*i] and advances *i past it (a stray byte counts as one).
char32_t NextCodePoint(std::string_view text, size_t* i) {
  const auto c = static_cast<unsigned char>(text[*i]);
  int extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
  char32_t cp = extra == 0 ? c : c & (0x3f >> extra);
  ++*i;
  for (; extra > 0 && *i < text.size(); --extra, ++*i) cp = (cp << 6) | (static_cast<unsigned char>(text[*i]) & 0x3f);
  return cp;
}

double EmOf(char32_t cp) {
  if (cp >= 32 && cp < 127) return kAsciiWidths[cp - 32] / 1000.0;
  switch (cp) {
    case U'—': case U'…': return 1.0;
    case U'–': return 0.5;
    case U'·': case U'’': return 0.318;
    case U'≥': case U'≤': case U'×': return 0.838;
    default: return cp < 32 ? 0 : 0.7;  // accented letters are about 0.62; CJK and symbols wider
  }
}

// Byte offsets where a line may break: after a space or a separator.
bool BreaksAfter(char c) { return c == ' ' || c == '/' || c == ';' || c == ',' || c == '=' || c == '-' || c == '_'; }

std::string TrimRight(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// The longest prefix of `text` (whole code points) no wider than `width`, at least one code point.
size_t FittingPrefix(std::string_view text, double width, double size, bool bold) {
  size_t i = 0, fit = 0;
  while (i < text.size()) {
    size_t next = i;
    NextCodePoint(text, &next);
    if (TextWidth(text.substr(0, next), size, bold) > width && fit > 0) break;
    fit = i = next;
  }
  return fit;
}

}  // namespace

double TextWidth(std::string_view text, double size, bool bold) {
  double em = 0;
  for (size_t i = 0; i < text.size();) em += EmOf(NextCodePoint(text, &i));
  return em * size * (bold ? 1.1 : 1.0) * 1.06;
}

std::string FitText(std::string_view text, double width, double size, bool bold) {
  if (TextWidth(text, size, bold) <= width) return std::string(text);
  const double room = std::max(0.0, width - TextWidth("…", size, bold));
  std::string cut = TrimRight(std::string(text.substr(0, FittingPrefix(text, room, size, bold))));
  return cut + "…";
}

std::vector<std::string> WrapText(std::string_view text, double width, size_t max_lines, double size, bool bold) {
  std::vector<std::string> lines;
  std::string_view rest = text;
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  while (!rest.empty()) {
    if (lines.size() + 1 == max_lines || TextWidth(rest, size, bold) <= width) {
      lines.push_back(FitText(rest, width, size, bold));
      break;
    }
    // The last break that fits, else as much of the word as fits.
    const size_t fit = FittingPrefix(rest, width, size, bold);
    size_t cut = fit;
    for (size_t i = fit; i > 0; --i) {
      if (BreaksAfter(rest[i - 1])) {
        cut = i;
        break;
      }
    }
    // A space at the cut itself (the line ending exactly on a word) breaks there too.
    if (cut == fit && fit < rest.size() && rest[fit] == ' ') cut = fit;
    lines.push_back(TrimRight(std::string(rest.substr(0, cut))));
    rest.remove_prefix(cut);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  }
  if (lines.empty()) lines.emplace_back();
  return lines;
}

std::string Num(double v) { return Fixed(v, 1); }

std::string Text(double x, double y, std::string_view text, std::string_view attrs) {
  std::string s = "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\"";
  if (!attrs.empty()) s += " " + std::string(attrs);
  return s + ">" + XmlEscape(text) + "</text>\n";
}

ChartHeader MakeHeader(std::string_view title) {
  ChartHeader h;
  h.lines = WrapText(title, kChartWidth - 40, 3, kTitleSize);
  h.bottom = 24 + 19.0 * static_cast<double>(h.lines.size() - 1) + 14;
  return h;
}

std::string SvgDocument(double height, const std::string& id, std::string_view title, std::string_view desc,
                        const ChartHeader& header, const std::string& body) {
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + Num(kChartWidth) + " " + Num(height) +
                  "\" role=\"img\" aria-labelledby=\"" + id + "-title " + id +
                  "-desc\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<title id=\"" + id + "-title\">" + XmlEscape(title) + "</title>\n";
  s += "<desc id=\"" + id + "-desc\">" + XmlEscape(desc) + "</desc>\n";
  s += "<rect x=\"0\" y=\"0\" width=\"" + Num(kChartWidth) + "\" height=\"" + Num(height) + "\" fill=\"#ffffff\"/>\n";
  for (size_t i = 0; i < header.lines.size(); ++i) {
    s += Text(kChartWidth / 2, 24 + 19.0 * static_cast<double>(i), header.lines[i],
              "text-anchor=\"middle\" font-size=\"15\"");
  }
  s += body;
  s += "</svg>\n";
  return s;
}

int Scale::Ticks() const { return static_cast<int>(std::lround((hi - lo) / step)); }

Scale ValueScale(double vmin, double vmax, int ticks) {
  if (!(vmax > vmin)) {
    // One value (or none): an axis from zero to it, or around it.
    if (vmax > 0) vmin = 0;
    else if (vmax < 0) vmax = 0;
    else vmax = 1;
    if (!(vmax > vmin)) vmax = vmin + 1;
  }
  // From zero when the values are positive and zero is not far below them.
  if (vmin > 0 && vmin < vmax * 0.6) vmin = 0;
  if (vmin > 0 && vmax - vmin < vmax * 1e-9) vmin = 0;
  const double step = NiceStep(vmax - vmin, ticks);
  Scale s;
  s.step = step;
  s.lo = std::floor(vmin / step + 1e-9) * step;
  s.hi = std::ceil(vmax / step - 1e-9) * step;
  if (!(s.hi > s.lo)) s.hi = s.lo + step;
  return s;
}

double TicksWidth(const Scale& s, Lang lang) {
  double w = 0;
  for (int i = 0; i <= s.Ticks(); ++i) w = std::max(w, TextWidth(TickText(s.lo + s.step * i, s.step, lang)));
  return w;
}

std::string VerticalAxis(const Scale& s, double left, double right, double top, double bottom, Lang lang) {
  std::string out = "<g class=\"y-ticks\">\n";
  for (int i = 0; i <= s.Ticks(); ++i) {
    const double v = s.lo + s.step * i, y = s.At(v, bottom, top);
    out += "<line x1=\"" + Num(left - 5) + "\" y1=\"" + Num(y) + "\" x2=\"" + Num(right) + "\" y2=\"" + Num(y) +
           "\" stroke=\"#dddddd\"/>\n";
    out += Text(left - 8, y + 4, TickText(v, s.step, lang), "text-anchor=\"end\"");
  }
  out += "</g>\n";
  out += "<line x1=\"" + Num(left) + "\" y1=\"" + Num(top) + "\" x2=\"" + Num(left) + "\" y2=\"" + Num(bottom) +
         "\" stroke=\"#000000\"/>\n";
  return out;
}

std::string HorizontalAxis(const Scale& s, double left, double right, double top, double bottom, Lang lang) {
  std::string out = "<g class=\"x-ticks\">\n";
  for (int i = 0; i <= s.Ticks(); ++i) {
    const double v = s.lo + s.step * i, x = s.At(v, left, right);
    out += "<line x1=\"" + Num(x) + "\" y1=\"" + Num(top) + "\" x2=\"" + Num(x) + "\" y2=\"" + Num(bottom + 5) +
           "\" stroke=\"#dddddd\"/>\n";
    out += Text(x, bottom + 18, TickText(v, s.step, lang), "text-anchor=\"middle\"");
  }
  out += "</g>\n";
  out += "<line x1=\"" + Num(left) + "\" y1=\"" + Num(bottom) + "\" x2=\"" + Num(right) + "\" y2=\"" + Num(bottom) +
         "\" stroke=\"#000000\"/>\n";
  return out;
}

std::string AxisTitle(std::string_view text, double x, double y, double length, bool vertical) {
  const std::string fitted = FitText(text, length);
  if (!vertical) return Text(x, y, fitted, "text-anchor=\"middle\"");
  return Text(x, y, fitted, "text-anchor=\"middle\" transform=\"rotate(-90 " + Num(x) + " " + Num(y) + ")\"");
}

MarkerShape ShapeOfPhase(v1::Phase phase) {
  switch (phase) {
    case v1::PHASE_WARM: return MarkerShape::kCircle;
    case v1::PHASE_COLD: return MarkerShape::kSquare;
    default: return MarkerShape::kTriangle;
  }
}

std::string Marker(MarkerShape shape, double x, double y, const std::string& inner, std::string_view attrs,
                   double scale) {
  const std::string a = attrs.empty() ? "" : " " + std::string(attrs);
  const double k = scale;
  auto pt = [&](double dx, double dy) { return Num(x + dx * k) + "," + Num(y + dy * k); };
  switch (shape) {
    case MarkerShape::kCircle:
      return "<circle" + a + " cx=\"" + Num(x) + "\" cy=\"" + Num(y) + "\" r=\"" + Num(4 * k) + "\">" + inner +
             "</circle>\n";
    case MarkerShape::kSquare:
      return "<rect" + a + " x=\"" + Num(x - 4 * k) + "\" y=\"" + Num(y - 4 * k) + "\" width=\"" + Num(8 * k) +
             "\" height=\"" + Num(8 * k) + "\">" + inner + "</rect>\n";
    case MarkerShape::kDiamond:
      return "<polygon" + a + " points=\"" + pt(0, -5) + " " + pt(5, 0) + " " + pt(0, 5) + " " + pt(-5, 0) + "\">" +
             inner + "</polygon>\n";
    case MarkerShape::kTriangle:
    default:
      return "<polygon" + a + " points=\"" + pt(0, -5) + " " + pt(-5, 4) + " " + pt(5, 4) + "\">" + inner +
             "</polygon>\n";
  }
}

std::vector<int> CoveredBy(const std::vector<Polyline>& lines) {
  auto near = [](const std::pair<double, double>& a, const std::pair<double, double>& b) {
    return std::abs(a.first - b.first) <= 2 && std::abs(a.second - b.second) <= 2;
  };
  // Whether line j passes through a point of line i, or along one of its segments.
  auto meets = [&](const Polyline& i, const Polyline& j) {
    for (size_t a = 0; a < i.size(); ++a) {
      for (size_t b = 0; b < j.size(); ++b) {
        if (!near(i[a], j[b])) continue;
        if (i.size() == 1 || j.size() == 1) return true;
        if (a + 1 < i.size() && b + 1 < j.size() && near(i[a + 1], j[b + 1])) return true;
        if (a + 1 < i.size() && b > 0 && near(i[a + 1], j[b - 1])) return true;
      }
    }
    return false;
  };
  std::vector<int> out(lines.size(), 0);
  for (size_t i = 0; i < lines.size(); ++i) {
    for (size_t j = i + 1; j < lines.size(); ++j) out[i] += meets(lines[i], lines[j]) ? 1 : 0;
  }
  return out;
}

std::string PolylineElement(const Polyline& points, double width, std::string_view dash) {
  if (points.size() < 2) return "";
  std::string s = "<polyline fill=\"none\" stroke-width=\"" + Num(width) + "\"";
  if (!dash.empty()) s += " stroke-dasharray=\"" + std::string(dash) + "\"";
  s += " points=\"";
  for (size_t i = 0; i < points.size(); ++i) s += (i > 0 ? " " : "") + Num(points[i].first) + "," + Num(points[i].second);
  return s + "\"/>\n";
}

const char* SeriesDash(size_t i) {
  static constexpr const char* kDashes[] = {"", "7 3", "2 3", "10 3 2 3", "4 4"};
  return kDashes[i % std::size(kDashes)];
}

std::vector<double> SpreadBlocks(const std::vector<double>& want, const std::vector<double>& heights, double lo,
                                 double hi) {
  const size_t n = want.size();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return want[a] < want[b]; });
  // Clusters of labels stacked edge to edge, each at the mean of its members' wishes (least
  // squares), merged while two overlap; then kept within [lo, hi].
  struct Cluster {
    size_t first, count;
    double sum;     // sum over members of (want - offset of the member in the cluster)
    double height;  // of all members
    double last;    // height of the last member
    double top;
  };
  auto place = [&](Cluster& c) {
    c.top = c.sum / static_cast<double>(c.count);
    if (c.top + c.height - c.last > hi) c.top = hi - (c.height - c.last);
    if (c.top < lo) c.top = lo;
  };
  std::vector<Cluster> clusters;
  for (size_t k = 0; k < n; ++k) {
    const double h = heights[order[k]];
    clusters.push_back(Cluster{k, 1, want[order[k]], h, h, 0});
    place(clusters.back());
    while (clusters.size() > 1) {
      Cluster& a = clusters[clusters.size() - 2];
      const Cluster& b = clusters.back();
      if (a.top + a.height <= b.top + 1e-9) break;
      a.sum += b.sum - a.height * static_cast<double>(b.count);
      a.count += b.count;
      a.height += b.height;
      a.last = b.last;
      clusters.pop_back();
      place(clusters.back());
    }
  }
  std::vector<double> out(n);
  for (const Cluster& c : clusters) {
    double y = c.top;
    for (size_t k = 0; k < c.count; ++k) {
      out[order[c.first + k]] = y;
      y += heights[order[c.first + k]];
    }
  }
  return out;
}

std::vector<double> SpreadLabels(const std::vector<double>& want, double gap, double lo, double hi) {
  return SpreadBlocks(want, std::vector<double>(want.size(), gap), lo, hi);
}

std::string EndLabels(const std::vector<EndLabel>& labels, double label_x, double label_width, double lo, double hi) {
  std::vector<std::vector<std::string>> lines;
  std::vector<double> want, heights;
  double total = 0;
  for (const EndLabel& l : labels) {
    lines.push_back(WrapText(l.text, label_width, 2));
    const double h = kLineGap * static_cast<double>(lines.back().size());
    heights.push_back(h);
    want.push_back(l.y_end - h / 2);  // the block centred on the line's end
    total += h;
  }
  // Blocks' tops; a block spans [top, top + height], its first baseline at top + 11.5.
  const std::vector<double> at = SpreadBlocks(want, heights, lo - kLineGap / 2, std::max(hi, lo + total) - kLineGap / 2);
  std::string out = "<g class=\"line-names\">\n";
  for (size_t i = 0; i < labels.size(); ++i) {
    const EndLabel& l = labels[i];
    out += "<line x1=\"" + Num(l.x_end + 6) + "\" y1=\"" + Num(l.y_end) + "\" x2=\"" + Num(label_x - 4) + "\" y2=\"" +
           Num(at[i] + heights[i] / 2) + "\" stroke=\"" + l.colour + "\" stroke-width=\"1\" stroke-opacity=\"0.7\"" +
           (l.dash.empty() ? std::string() : " stroke-dasharray=\"" + l.dash + "\"") + "/>\n";
    for (size_t k = 0; k < lines[i].size(); ++k) {
      out += Text(label_x, at[i] + kLineGap / 2 + 4 + kLineGap * static_cast<double>(k), lines[i][k],
                  "fill=\"" + l.colour + "\"");
    }
  }
  out += "</g>\n";
  return out;
}

double EndLabelsHeight(const std::vector<std::string>& texts, double width) {
  double h = 0;
  for (const std::string& t : texts) h += kLineGap * static_cast<double>(WrapText(t, width, 2).size());
  return h;
}

namespace {

// The "k=v" pairs of a matrix string, in order (a pair without "=" is a key with an empty value).
std::vector<std::pair<std::string, std::string>> MatrixPairs(const std::string& matrix) {
  std::vector<std::pair<std::string, std::string>> pairs;
  size_t from = 0;
  while (from < matrix.size()) {
    size_t end = matrix.find(';', from);
    if (end == std::string::npos) end = matrix.size();
    std::string pair = matrix.substr(from, end - from);
    size_t eq = pair.find('=');
    if (eq == std::string::npos) {
      pairs.emplace_back(pair, "");
    } else {
      pairs.emplace_back(pair.substr(0, eq), pair.substr(eq + 1));
    }
    from = end + 1;
  }
  return pairs;
}

const std::string* FindMatrixValue(const std::vector<std::pair<std::string, std::string>>& pairs,
                                   const std::string& key) {
  for (const auto& [k, v] : pairs) {
    if (k == key) return &v;
  }
  return nullptr;
}

// A matrix pair "mode=gpu" beside the key's mode "gpu" says it twice: the label leaves it out.
bool RepeatsMode(const CellKey& key, const std::string& name, const std::string& value) {
  return name == "mode" && value == key.mode;
}

}  // namespace

std::string MatrixValue(const std::string& matrix, const std::string& key) {
  const auto pairs = MatrixPairs(matrix);
  const std::string* v = FindMatrixValue(pairs, key);
  return v != nullptr ? *v : "";
}

KeyParts DifferingParts(const std::vector<const CellKey*>& keys) {
  KeyParts parts;
  if (keys.empty()) return parts;
  const CellKey& first = *keys.front();
  std::vector<std::vector<std::pair<std::string, std::string>>> matrices;
  std::vector<std::string> all_keys;  // in first-seen order
  for (const CellKey* k : keys) {
    parts.machine |= k->machine != first.machine;
    parts.backend |= k->backend != first.backend;
    parts.mode |= k->mode != first.mode;
    matrices.push_back(MatrixPairs(k->matrix));
    for (const auto& [mk, v] : matrices.back()) {
      if (std::find(all_keys.begin(), all_keys.end(), mk) == all_keys.end()) all_keys.push_back(mk);
    }
  }
  for (const std::string& mk : all_keys) {
    const std::string* v0 = FindMatrixValue(matrices.front(), mk);
    for (const auto& m : matrices) {
      const std::string* v = FindMatrixValue(m, mk);
      if ((v == nullptr) != (v0 == nullptr) || (v != nullptr && *v != *v0)) {
        parts.matrix_keys.push_back(mk);
        break;
      }
    }
  }
  return parts;
}

std::string SettingLabel(const CellKey& key, const KeyParts& parts) {
  std::vector<std::string> out;
  if (parts.machine) out.push_back(key.machine);
  if (parts.backend) out.push_back(key.backend);
  if (parts.mode) out.push_back(key.mode);
  const auto pairs = MatrixPairs(key.matrix);
  for (const std::string& mk : parts.matrix_keys) {
    const std::string* v = FindMatrixValue(pairs, mk);
    if (v != nullptr && !RepeatsMode(key, mk, *v)) out.push_back(mk + "=" + *v);
  }
  return Join(out, " · ");
}

std::string SharedLabel(const CellKey& any, const KeyParts& parts) {
  std::vector<std::string> out;
  if (!parts.machine && !any.machine.empty()) out.push_back(any.machine);
  if (!parts.backend && !any.backend.empty()) out.push_back(any.backend);
  if (!parts.mode && !any.mode.empty()) out.push_back(any.mode);
  for (const auto& [mk, v] : MatrixPairs(any.matrix)) {
    if (RepeatsMode(any, mk, v)) continue;
    if (std::find(parts.matrix_keys.begin(), parts.matrix_keys.end(), mk) == parts.matrix_keys.end()) {
      out.push_back(mk + "=" + v);
    }
  }
  return Join(out, " · ");
}

double AppendSharedLine(std::string_view prefix, const std::string& shared, double y, std::string* body) {
  if (shared.empty()) return y;
  for (const std::string& line : WrapText(std::string(prefix) + shared, kChartWidth - 40, 2)) {
    *body += Text(kChartWidth / 2, y + 12, line, "text-anchor=\"middle\" fill=\"#444444\"");
    y += kLineGap;
  }
  return y;
}

}  // namespace benchfleet::synthesis
