// The HTML guide in a real browser: builds the guide in-process from the repository's fixtures
// (the golden test's series folders and captures, plus a made-up sweep so that every chart is
// drawn), writes guide.<lang>.html and opens it in Debian's headless chromium. See
// tests/browser/README.md for what is measured and how.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "synthesis/guide.h"
#include "synthesis/readers/measurement_files.h"
#include "synthesis/render/render.h"
#include "tests/support/guide_sweep_records.h"
#include "tests/support/subprocess.h"

namespace benchfleet::synthesis {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kChromium[] = "/usr/bin/chromium";
constexpr char kTimeout[] = "/usr/bin/timeout";
// Each chromium run takes about a second here; a hung one is killed after this.
constexpr int kBrowserTimeoutSeconds = 90;
constexpr int kNarrow = 390;
constexpr int kWide = 1280;
// The first screen of a 1280 px wide page: the first decision table must end within it.
constexpr int kFirstScreenHeight = 900;
// Full-page screenshots stop at this height (the guide is about 45000 px high at 390 px wide;
// chromium takes about 13 s for such a screenshot).
constexpr int kMaxScreenshotHeight = 65000;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = 0; (p = text.find(needle, p)) != std::string::npos; p += needle.size()) ++n;
  return n;
}

struct BrowserRun {
  int exit_code = -1;
  std::string output;  // stdout (e.g. --dump-dom) and stderr together
};

// Runs headless chromium (flags of BUILD-NOTES.md: no network, no sandbox as root) with a fresh
// profile, under `timeout`, on `url` with `args`.
BrowserRun RunChromium(const std::string& work, const std::vector<std::string>& args, const std::string& url) {
  static int runs = 0;
  std::string profile = testing::MakeTempDir("chromium-profile-");
  std::string log = work + "/chromium-" + std::to_string(++runs) + ".log";
  std::vector<std::string> argv = {kTimeout,
                                   "--kill-after=5",
                                   std::to_string(kBrowserTimeoutSeconds),
                                   kChromium,
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-quic",
                                   "--no-first-run",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--hide-scrollbars",
                                   "--force-device-scale-factor=1",
                                   "--user-data-dir=" + profile};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(url);
  BrowserRun run;
  {
    testing::Subprocess chromium(argv, {}, log);
    run.exit_code = chromium.Wait();
  }
  run.output = ReadAll(log);
  std::error_code ignored;
  std::filesystem::remove_all(profile, ignored);
  return run;
}

std::string WindowSize(int width, int height) {
  return "--window-size=" + std::to_string(width) + "," + std::to_string(height);
}

// Width and height from a PNG's IHDR chunk; {0, 0} when the file is not a PNG.
std::pair<uint32_t, uint32_t> PngSize(const std::string& png) {
  if (png.size() < 24 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0 || png.compare(12, 4, "IHDR") != 0) return {0, 0};
  auto be32 = [&](size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(png[at + i]);
    return v;
  };
  return {be32(16), be32(20)};
}

// The log lines that show a problem with the page: any console message (the guide has no script,
// so every one comes from the browser: a refused or failed load, a CSP violation), an uncaught
// error, a refusal.
std::vector<std::string> ConsoleProblems(const std::string& log) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    for (const char* mark : {":CONSOLE", "Uncaught", "Refused to", "Failed to load resource",
                             "Not allowed to load local resource"}) {
      if (line.find(mark) != std::string::npos) {
        lines.push_back(line);
        break;
      }
    }
  }
  return lines;
}

std::string AttributeEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '"') {
      out += "&quot;";
    } else {
      out += c;
    }
  }
  return out;
}

// Runs in the measuring page once the guide (in the iframe) is laid out; writes its figures as
// "key=value" words into #bf-result and the smallest text into #bf-where.
constexpr char kMeasureScript[] = R"js(
function bfMeasure() {
  var frame = document.getElementById('guide');
  var w = frame.contentWindow, d = frame.contentDocument;
  var min = Infinity, where = 'no text', texts = 0;
  var walker = d.createTreeWalker(d.body, w.NodeFilter.SHOW_TEXT);
  for (var t = walker.nextNode(); t; t = walker.nextNode()) {
    if (!/\S/.test(t.data)) continue;
    var el = t.parentElement;
    if (!el || el.closest('title, desc, style, script') || el.getClientRects().length === 0) continue;
    var px = parseFloat(w.getComputedStyle(el).fontSize);
    // SVG text: its font size in user units times the user-unit-to-CSS-pixel scale of the chart
    // (viewBox scaling and transforms included).
    if (el instanceof w.SVGGraphicsElement) {
      var m = el.getScreenCTM();
      if (m) px *= Math.sqrt(m.a * m.a + m.b * m.b);
    }
    ++texts;
    if (px < min) { min = px; where = el.tagName + ' ' + px.toFixed(2) + 'px: ' + t.data.trim().slice(0, 80); }
  }
  var svgs = d.querySelectorAll('svg'), svgMinW = Infinity, svgMinH = Infinity;
  for (var i = 0; i < svgs.length; ++i) {
    var r = svgs[i].getBoundingClientRect();
    svgMinW = Math.min(svgMinW, r.width);
    svgMinH = Math.min(svgMinH, r.height);
  }
  // Every SVG text inside its chart's viewBox, and no two texts of a chart on each other: boxes in
  // the chart's user units, from the rendered boxes (transforms and viewBox scaling included).
  var outside = 0, overlaps = 0, svgTexts = 0, problems = [];
  for (var i = 0; i < svgs.length; ++i) {
    var svg = svgs[i], vb = svg.viewBox.baseVal, sr = svg.getBoundingClientRect();
    if (!vb || !vb.width || !sr.width) continue;
    var kx = vb.width / sr.width, ky = vb.height / sr.height, boxes = [];
    var name = (svg.querySelector('title') || {}).textContent || ('svg ' + i);
    var textEls = svg.querySelectorAll('text');
    for (var j = 0; j < textEls.length; ++j) {
      var t = textEls[j];
      if (!/\S/.test(t.textContent)) continue;
      var r = t.getBoundingClientRect();
      if (!r.width && !r.height) continue;
      var b = {x0: vb.x + (r.left - sr.left) * kx, x1: vb.x + (r.right - sr.left) * kx,
               y0: vb.y + (r.top - sr.top) * ky, y1: vb.y + (r.bottom - sr.top) * ky, text: t.textContent};
      ++svgTexts;
      if (b.x0 < vb.x - 0.5 || b.y0 < vb.y - 0.5 || b.x1 > vb.x + vb.width + 0.5 || b.y1 > vb.y + vb.height + 0.5) {
        ++outside;
        if (problems.length < 20) problems.push('outside [' + name + '] "' + b.text + '" ' + [b.x0, b.y0, b.x1, b.y1].map(function (v) { return v.toFixed(1); }).join(',') + ' viewBox ' + vb.width + 'x' + vb.height);
      }
      for (var k = 0; k < boxes.length; ++k) {
        var o = boxes[k];
        var ix = Math.min(b.x1, o.x1) - Math.max(b.x0, o.x0), iy = Math.min(b.y1, o.y1) - Math.max(b.y0, o.y0);
        if (ix > 1 && iy > 1) {
          ++overlaps;
          if (problems.length < 20) problems.push('overlap [' + name + '] "' + b.text + '" / "' + o.text + '" by ' + ix.toFixed(1) + 'x' + iy.toFixed(1));
        }
      }
      boxes.push(b);
    }
  }
  document.getElementById('bf-problems').textContent = problems.join('\n');
  var table = d.querySelector('table');
  var tableBottom = table ? table.getBoundingClientRect().bottom : -1;
  document.getElementById('bf-result').textContent =
      'inner_width=' + w.innerWidth + ' client_width=' + d.documentElement.clientWidth +
      ' scroll_width=' + d.documentElement.scrollWidth + ' body_scroll_width=' + d.body.scrollWidth +
      ' min_font_px=' + min.toFixed(2) + ' texts=' + texts + ' svgs=' + svgs.length +
      ' svg_min_width=' + svgMinW.toFixed(1) + ' svg_min_height=' + svgMinH.toFixed(1) +
      ' tables=' + d.querySelectorAll('table').length + ' figures=' + d.querySelectorAll('figure').length +
      ' script_ran=' + (d.documentElement.hasAttribute('data-bf-script-ran') ? 1 : 0) +
      ' images=' + d.images.length + ' scripts=' + d.scripts.length + ' links=' + d.links.length +
      ' svg_texts=' + svgTexts + ' text_outside=' + outside + ' text_overlaps=' + overlaps +
      ' first_table_bottom=' + tableBottom.toFixed(1) + ' doc_height=' + d.documentElement.scrollHeight;
  document.getElementById('bf-where').textContent = where;
}
if (document.readyState === 'complete') bfMeasure(); else window.addEventListener('load', bfMeasure);
)js";

enum class Scripts { kOn, kOff };

// The page that measures the guide laid out `width` px wide: the guide in an iframe of exactly that
// width (headless chromium never makes its window narrower than 500 px, so --window-size=390
// alone would lay the page out at 500), and the script above. Scripts::kOff sandboxes the iframe
// without "allow-scripts": the guide's own JavaScript is off, while this page can still read it.
// (Chromium's own switches do not serve here: with --blink-settings=scriptEnabled=false,
// --dump-dom and --screenshot write nothing, and headless ignores --disable-javascript.)
std::string MeasuringPage(const std::string& guide_html, int width, Scripts scripts) {
  // The iframe is one first screen high (the first table is measured against it); the guide
  // scrolls inside it, which changes nothing of its layout.
  std::string sandbox = scripts == Scripts::kOff ? " sandbox=\"allow-same-origin\"" : "";
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>measure</title></head>\n"
         "<body style=\"margin:0\">\n<iframe id=\"guide\"" + sandbox + " style=\"display:block;border:0;width:" +
         std::to_string(width) + "px;height:" + std::to_string(kFirstScreenHeight) + "px\" srcdoc=\"" + AttributeEscape(guide_html) +
         "\"></iframe>\n<pre id=\"bf-result\">not measured</pre>\n<pre id=\"bf-where\"></pre>\n"
         "<pre id=\"bf-problems\"></pre>\n<script>" +
         kMeasureScript + "</script>\n</body></html>\n";
}

// The "key=value" words of #bf-result in a --dump-dom output.
// The text of <pre id="`id`"> in a --dump-dom output ("" when absent).
std::string PreText(const std::string& dom, const std::string& id) {
  const std::string open = "<pre id=\"" + id + "\">";
  size_t at = dom.find(open);
  if (at == std::string::npos) return "";
  at += open.size();
  return dom.substr(at, dom.find("</pre>", at) - at);
}

std::map<std::string, double> Measures(const std::string& dom, std::string* where) {
  std::map<std::string, double> out;
  const std::string open = "<pre id=\"bf-result\">";
  size_t begin = dom.find(open);
  if (begin == std::string::npos) return out;
  begin += open.size();
  std::istringstream words(dom.substr(begin, dom.find("</pre>", begin) - begin));
  for (std::string word; words >> word;) {
    size_t eq = word.find('=');
    if (eq != std::string::npos) out[word.substr(0, eq)] = std::strtod(word.c_str() + eq + 1, nullptr);
  }
  const std::string where_open = "<pre id=\"bf-where\">";
  size_t w = dom.find(where_open);
  if (w != std::string::npos) {
    w += where_open.size();
    *where = dom.substr(w, dom.find("</pre>", w) - w);
  }
  return out;
}

// Where the screenshots are kept after the run: $BENCHFLEET_ARTIFACT_DIR, else the build folder's
// test-artifacts/browser (BENCHFLEET_ARTIFACT_DEFAULT_DIR, from CMake).
std::string ArtifactDir() {
  const char* env = std::getenv("BENCHFLEET_ARTIFACT_DIR");
  std::string dir = env != nullptr && *env != '\0' ? env : BENCHFLEET_ARTIFACT_DEFAULT_DIR;
  std::error_code ignored;
  std::filesystem::create_directories(dir, ignored);
  return dir;
}

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

class GuideBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(kChromium, X_OK) != 0) {
      GTEST_SKIP() << kChromium << " is missing: the browser checks of the HTML guide need Debian's chromium "
                   << "(scripts/setup installs it: apt-get install chromium)";
    }
    work_ = testing::MakeTempDir("guide-browser-");
    std::cout << "guide pages, measuring pages and chromium logs in " << work_ << "\n";
    WriteGuide({});
  }

  // Builds the guide from the fixtures (those of the golden test), the sweep and `extra` records,
  // and writes guide.<lang>.html. Every chart BuildGuideFiles makes must be a figure of the guide,
  // so that each is laid out and measured.
  void WriteGuide(const std::vector<v1::RunRecord>& extra) {
    absl::StatusOr<ReadResult> read =
        ReadMeasurementFiles(Env::Default(), testing::GoldenGuideInputsUnder(BENCHFLEET_SOURCE_DIR));
    ASSERT_TRUE(read.ok()) << read.status();
    GuideInput input;
    input.records = read->records;
    for (v1::RunRecord& r : testing::GuideSweepRecords()) input.records.push_back(std::move(r));
    input.records.insert(input.records.end(), extra.begin(), extra.end());
    input.conditions = read->conditions;
    input.skipped = read->skipped;
    std::map<std::string, std::string> files = BuildGuideFiles(input, {Lang::kFr, Lang::kEn});
    std::map<std::string, std::string> charts;
    for (const auto& [name, content] : files) {
      if (EndsWith(name, ".svg")) charts[name] = content;
    }
    for (Lang lang : {Lang::kFr, Lang::kEn}) {
      std::string code(LangCode(lang));
      const std::string& markdown = files.at("guide." + code + ".md");
      const std::string& page = files.at("guide." + code + ".html");
      for (const auto& [name, content] : charts) {
        if (!EndsWith(name, "." + code + ".svg")) continue;
        ASSERT_NE(markdown.find("](" + name + ")\n"), std::string::npos)
            << name << " is not in guide." << code << ".md";
      }
      ASSERT_EQ(Count(page, "<figure class=\"chart\">"), Count(markdown, "\n![")) << "guide." << code << ".html";
      ASSERT_GT(Count(page, "<svg"), 0u) << "no inline chart in guide." << code << ".html";
      ASSERT_GT(Count(page, "<table"), 0u) << "no table in guide." << code << ".html";
      ASSERT_THAT(page, Not(HasSubstr("<script")));
      ASSERT_THAT(page, Not(HasSubstr("<link")));
      ASSERT_THAT(page, Not(HasSubstr(" src=\"")));
      std::string path = work_ + "/guide." + code + ".html";
      WriteAll(path, page);
      pages_[lang] = path;
      html_[lang] = page;
    }
  }

  std::string Url(Lang lang) const { return "file://" + pages_.at(lang); }

  std::string work_;
  std::map<Lang, std::string> pages_;
  std::map<Lang, std::string> html_;
};

struct Layout {
  std::map<std::string, double> m;
  std::string where;     // the smallest text
  std::string problems;  // SVG texts outside their viewBox or on each other, one a line
};

// Lays the guide out `width` px wide (its scripts on or off) in the measuring page and reads the
// measures back with --dump-dom.
Layout Measure(const std::string& work, Lang lang, const std::string& html, int width, Scripts scripts,
               const std::string& tag = "") {
  std::string name = tag + std::string(LangCode(lang)) + "." + std::to_string(width) +
                     (scripts == Scripts::kOff ? ".noscript" : "");
  std::string path = work + "/measure." + name + ".html";
  WriteAll(path, MeasuringPage(html, width, scripts));
  BrowserRun run = RunChromium(work, {WindowSize(std::max(width, 500) + 20, 1000), "--dump-dom"}, "file://" + path);
  Layout layout;
  EXPECT_EQ(run.exit_code, 0) << run.output;
  layout.m = Measures(run.output, &layout.where);
  layout.problems = PreText(run.output, "bf-problems");
  EXPECT_EQ(layout.m.count("min_font_px"), 1u) << "no measurement in:\n" << run.output;
  return layout;
}

TEST_F(GuideBrowserTest, ScreenshotsAt390And1280) {
  const std::string dir = ArtifactDir();
  for (Lang lang : {Lang::kFr, Lang::kEn}) {
    for (int width : {kNarrow, kWide}) {
      // The whole page: as high as the guide laid out at that width.
      Layout layout = Measure(work_, lang, html_.at(lang), width, Scripts::kOn);
      ASSERT_GT(layout.m["doc_height"], 0);
      const int height = std::min(kMaxScreenshotHeight, static_cast<int>(std::ceil(layout.m["doc_height"])));
      std::string png = dir + "/guide." + std::string(LangCode(lang)) + "." + std::to_string(width) + ".png";
      std::filesystem::remove(png);
      BrowserRun run = RunChromium(work_, {WindowSize(width, height), "--screenshot=" + png}, Url(lang));
      ASSERT_EQ(run.exit_code, 0) << run.output;
      std::string bytes = ReadAll(png);
      ASSERT_GT(bytes.size(), 1000u) << png << "\n" << run.output;
      std::pair<uint32_t, uint32_t> size = PngSize(bytes);
      EXPECT_EQ(size.first, static_cast<uint32_t>(width)) << png;
      EXPECT_EQ(size.second, static_cast<uint32_t>(height)) << png;
      std::cout << "screenshot " << png << " (" << width << "x" << height << ")\n";
    }
  }
}

// Lays the guide out `width` px wide with its scripts on or off and checks it: no horizontal
// overflow of the page, no text under 12 px (SVG text scaled as drawn), every chart drawn with a
// non-empty box, every SVG text inside its viewBox and clear of the others, every table and
// figure there. Measured in the page, read back with --dump-dom.
void CheckLayout(const std::string& work, Lang lang, const std::string& html, int width, Scripts scripts) {
  std::string name = std::string(LangCode(lang)) + "." + std::to_string(width) +
                     (scripts == Scripts::kOff ? ".noscript" : "");
  SCOPED_TRACE(name);
  Layout layout = Measure(work, lang, html, width, scripts);
  std::map<std::string, double>& m = layout.m;
  std::cout << name << ": inner_width=" << m["inner_width"] << " client_width=" << m["client_width"]
            << " scroll_width=" << m["scroll_width"] << " min_font_px=" << m["min_font_px"] << " (" << layout.where
            << ") texts=" << m["texts"] << " svgs=" << m["svgs"] << " svg_min_width=" << m["svg_min_width"]
            << " svg_min_height=" << m["svg_min_height"] << " tables=" << m["tables"] << " svg_texts=" << m["svg_texts"]
            << " text_outside=" << m["text_outside"] << " text_overlaps=" << m["text_overlaps"]
            << " first_table_bottom=" << m["first_table_bottom"] << " doc_height=" << m["doc_height"] << "\n";
  EXPECT_EQ(m["inner_width"], width);
  EXPECT_EQ(m["client_width"], width);
  EXPECT_LE(m["scroll_width"], m["client_width"]);
  EXPECT_LE(m["body_scroll_width"], m["client_width"]);
  EXPECT_GE(m["min_font_px"], 12.0) << layout.where;
  EXPECT_GT(m["texts"], 100);
  EXPECT_EQ(m["svgs"], static_cast<double>(Count(html, "<svg")));
  EXPECT_GT(m["svg_min_width"], 0);
  EXPECT_GT(m["svg_min_height"], 0);
  EXPECT_GT(m["svg_texts"], 100);
  EXPECT_EQ(m["text_outside"], 0) << layout.problems;
  EXPECT_EQ(m["text_overlaps"], 0) << layout.problems;
  EXPECT_EQ(m["tables"], static_cast<double>(Count(html, "<table")));
  EXPECT_EQ(m["figures"], static_cast<double>(Count(html, "<figure")));
  EXPECT_EQ(m["script_ran"], 0);
  // Every image of the guide is a chart inlined; no element comes from record text.
  EXPECT_EQ(m["images"], 0);
  EXPECT_EQ(m["scripts"], 0);
}

// The first table of the page (the first decision table) ends within the first screen of a
// 1280 x 900 window, in both languages.
TEST_F(GuideBrowserTest, DecisionTableOnFirstScreen) {
  for (Lang lang : {Lang::kFr, Lang::kEn}) {
    SCOPED_TRACE(LangCode(lang));
    Layout layout = Measure(work_, lang, html_.at(lang), kWide, Scripts::kOn);
    std::cout << LangCode(lang) << ".1280: first_table_bottom=" << layout.m["first_table_bottom"] << "\n";
    EXPECT_GT(layout.m["first_table_bottom"], 0) << "no table";
    EXPECT_LE(layout.m["first_table_bottom"], kFirstScreenHeight);
  }
}

TEST_F(GuideBrowserTest, NoOverflowNoSmallTextChartsDrawn) {
  // The text checks themselves: a chart with a text past its right edge and two texts on each
  // other must be caught, or the measuring script has gone blind.
  const std::string control =
      "<!DOCTYPE html><html><head><title>c</title></head><body><svg xmlns=\"http://www.w3.org/2000/svg\" "
      "viewBox=\"0 0 200 100\" style=\"width:200px\" font-size=\"12\"><text x=\"150\" y=\"20\">far too long "
      "to fit</text><text x=\"10\" y=\"60\">one</text><text x=\"14\" y=\"64\">two</text></svg></body></html>";
  Layout caught = Measure(work_, Lang::kEn, control, kWide, Scripts::kOn, "control.");
  EXPECT_EQ(caught.m["svg_texts"], 3);
  EXPECT_EQ(caught.m["text_outside"], 1) << caught.problems;
  EXPECT_EQ(caught.m["text_overlaps"], 1) << caught.problems;
  EXPECT_THAT(caught.problems, HasSubstr("overlap [svg 0] \"two\" / \"one\""));
  for (Lang lang : {Lang::kFr, Lang::kEn}) {
    for (int width : {kNarrow, kWide}) CheckLayout(work_, lang, html_.at(lang), width, Scripts::kOn);
  }
}

// The same checks with the guide's JavaScript off (a sandboxed frame), after proving that the
// sandbox does turn scripts off.
TEST_F(GuideBrowserTest, WorksWithJavaScriptOff) {
  const std::string probe =
      "<!DOCTYPE html><html><head><title>p</title></head><body><p>x</p>"
      "<script>document.documentElement.setAttribute('data-bf-script-ran', '')</script></body></html>";
  for (Scripts scripts : {Scripts::kOn, Scripts::kOff}) {
    std::string path = work_ + "/probe." + (scripts == Scripts::kOff ? "off" : "on") + ".html";
    WriteAll(path, MeasuringPage(probe, kNarrow, scripts));
    BrowserRun run = RunChromium(work_, {WindowSize(600, 1000), "--dump-dom"}, "file://" + path);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    std::string where;
    std::map<std::string, double> m = Measures(run.output, &where);
    ASSERT_EQ(m.count("script_ran"), 1u) << run.output;
    EXPECT_EQ(m["script_ran"], scripts == Scripts::kOn ? 1 : 0);
  }
  for (Lang lang : {Lang::kFr, Lang::kEn}) {
    for (int width : {kNarrow, kWide}) CheckLayout(work_, lang, html_.at(lang), width, Scripts::kOff);
  }
}

// Record text with markup and very long words: shown verbatim, creates no element, and still
// neither overflows the page nor brings a console error.
TEST_F(GuideBrowserTest, HostileRecordTextStaysText) {
  const std::string task = "<img src=x onerror=alert(1)><b>bold</b>|" + std::string(120, 'W');
  std::vector<v1::RunRecord> extra;
  for (int i = 1; i <= 2; ++i) {
    v1::RunRecord r;
    r.set_run_id("<script>alert(" + std::to_string(i) + ")</script>");
    r.set_task(task);
    r.set_agent_id("<i>host</i>" + std::string(90, 'H'));
    r.set_backend("llama-server");
    r.set_mode("gpu");
    r.set_phase(v1::PHASE_WARM);
    r.set_call_index(static_cast<uint32_t>(i));
    r.mutable_start_time()->set_seconds(100 + i);
    r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
    r.mutable_status()->set_code(i == 1 ? v1::RunStatus::CODE_OK : v1::RunStatus::CODE_FAILED);
    if (i == 2) r.mutable_status()->set_message("<script>document.title='pwned'</script> " + std::string(150, 'E'));
    auto* metric = r.add_metrics();
    metric->set_name("tokens_per_second");
    metric->set_value(12.5);
    metric->set_unit("tokens/s");
    extra.push_back(r);
  }
  WriteGuide(extra);
  ASSERT_FALSE(HasFailure());
  for (Lang lang : {Lang::kFr, Lang::kEn}) {
    EXPECT_THAT(html_.at(lang), HasSubstr("&lt;img src=x onerror=alert(1)&gt;&lt;b&gt;bold&lt;/b&gt;|WWW"));
    CheckLayout(work_, lang, html_.at(lang), kNarrow, Scripts::kOn);
    BrowserRun run = RunChromium(work_, {"--enable-logging=stderr", "--v=0", "--dump-dom"}, Url(lang));
    ASSERT_EQ(run.exit_code, 0) << run.output;
    std::string title = lang == Lang::kFr ? "Guide de dimensionnement" : "Sizing guide";
    EXPECT_THAT(run.output, HasSubstr("<title>" + title));
    EXPECT_THAT(ConsoleProblems(run.output), ::testing::IsEmpty()) << LangCode(lang);
  }
}

TEST_F(GuideBrowserTest, NoConsoleErrors) {
  // The check itself: a page with a console error, an uncaught exception and a missing image
  // must be caught, or the log format has changed under us.
  std::string control = work_ + "/control.html";
  WriteAll(control,
           "<!DOCTYPE html><html><head><title>c</title></head><body><img src=\"missing-image.png\" alt=\"x\">"
           "<script>console.error('bf-control-error'); throw new Error('bf-control-throw');</script></body></html>\n");
  BrowserRun bad = RunChromium(work_, {"--enable-logging=stderr", "--v=0", "--dump-dom"}, "file://" + control);
  ASSERT_EQ(bad.exit_code, 0) << bad.output;
  std::string caught;
  for (const std::string& line : ConsoleProblems(bad.output)) caught += line + "\n";
  EXPECT_THAT(caught, HasSubstr("bf-control-error"));
  EXPECT_THAT(caught, HasSubstr("Uncaught Error: bf-control-throw"));

  for (Lang lang : {Lang::kFr, Lang::kEn}) {
    BrowserRun run = RunChromium(work_, {"--enable-logging=stderr", "--v=0", WindowSize(kWide, 1000), "--dump-dom"},
                                 Url(lang));
    ASSERT_EQ(run.exit_code, 0) << run.output;
    ASSERT_THAT(run.output, HasSubstr("</html>")) << run.output;
    EXPECT_THAT(ConsoleProblems(run.output), ::testing::IsEmpty()) << LangCode(lang);
  }
}

}  // namespace
}  // namespace benchfleet::synthesis
