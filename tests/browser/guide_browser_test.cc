// The HTML guide in a real browser: builds the guide in-process from the repository's fixtures
// (llama-bench JSON, ComfyUI server log), writes guide.<lang>.html and opens it in Debian's
// headless chromium. See tests/browser/README.md for what is measured and how.
#include <unistd.h>

#include <algorithm>
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
#include "synthesis/render/html.h"
#include "synthesis/render/render.h"
#include "tests/support/subprocess.h"

namespace benchfleet::synthesis {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kChromium[] = "/usr/bin/chromium";
constexpr char kTimeout[] = "/usr/bin/timeout";
// Each chromium run takes about a second here; a hung one is killed after this.
constexpr int kBrowserTimeoutSeconds = 90;
constexpr int kNarrow = 375;
constexpr int kWide = 1280;

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
  document.getElementById('bf-result').textContent =
      'inner_width=' + w.innerWidth + ' client_width=' + d.documentElement.clientWidth +
      ' scroll_width=' + d.documentElement.scrollWidth + ' body_scroll_width=' + d.body.scrollWidth +
      ' min_font_px=' + min.toFixed(2) + ' texts=' + texts + ' svgs=' + svgs.length +
      ' svg_min_width=' + svgMinW.toFixed(1) + ' svg_min_height=' + svgMinH.toFixed(1) +
      ' tables=' + d.querySelectorAll('table').length + ' figures=' + d.querySelectorAll('figure').length +
      ' script_ran=' + (d.documentElement.hasAttribute('data-bf-script-ran') ? 1 : 0) +
      ' images=' + d.images.length + ' scripts=' + d.scripts.length + ' links=' + d.links.length;
  document.getElementById('bf-where').textContent = where;
}
if (document.readyState === 'complete') bfMeasure(); else window.addEventListener('load', bfMeasure);
)js";

enum class Scripts { kOn, kOff };

// The page that measures the guide laid out `width` px wide: the guide in an iframe of exactly that
// width (headless chromium never makes its window narrower than 500 px, so --window-size=375
// alone would lay the page out at 500), and the script above. Scripts::kOff sandboxes the iframe
// without "allow-scripts": the guide's own JavaScript is off, while this page can still read it.
// (Chromium's own switches do not serve here: with --blink-settings=scriptEnabled=false,
// --dump-dom and --screenshot write nothing, and headless ignores --disable-javascript.)
std::string MeasuringPage(const std::string& guide_html, int width, Scripts scripts) {
  std::string sandbox = scripts == Scripts::kOff ? " sandbox=\"allow-same-origin\"" : "";
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>measure</title></head>\n"
         "<body style=\"margin:0\">\n<iframe id=\"guide\"" + sandbox + " style=\"display:block;border:0;width:" +
         std::to_string(width) + "px;height:900px\" srcdoc=\"" + AttributeEscape(guide_html) +
         "\"></iframe>\n<pre id=\"bf-result\">not measured</pre>\n<pre id=\"bf-where\"></pre>\n<script>" +
         kMeasureScript + "</script>\n</body></html>\n";
}

// The "key=value" words of #bf-result in a --dump-dom output.
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

class GuideBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(kChromium, X_OK) != 0) {
      GTEST_SKIP() << kChromium << " is missing: the browser checks of the HTML guide need Debian's chromium "
                   << "(scripts/setup installs it: apt-get install chromium)";
    }
    work_ = testing::MakeTempDir("guide-browser-");
    std::cout << "guide pages, screenshots and chromium logs in " << work_ << "\n";
    WriteGuide({});
  }

  // Builds the guide from the fixtures plus `extra` records and writes guide.<lang>.html.
  void WriteGuide(const std::vector<v1::RunRecord>& extra) {
    std::string fixtures = std::string(BENCHFLEET_SOURCE_DIR) + "/tests/fixtures";
    absl::StatusOr<ReadResult> read = ReadMeasurementFiles(
        Env::Default(), {fixtures + "/llama-bench/llama-bench.json", fixtures + "/comfyui/server_log.txt"});
    ASSERT_TRUE(read.ok()) << read.status();
    GuideInput input;
    input.records = read->records;
    input.records.insert(input.records.end(), extra.begin(), extra.end());
    input.conditions = read->conditions;
    input.skipped = read->skipped;
    std::map<std::string, std::string> files = BuildGuideFiles(input, {Lang::kFr, Lang::kEn});
    std::map<std::string, std::string> charts;
    for (const auto& [name, content] : files) {
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".svg") == 0) charts[name] = content;
    }
    for (Lang lang : {Lang::kFr, Lang::kEn}) {
      std::string code(LangCode(lang));
      // BuildGuideFiles may not write the HTML page yet: render it from the Markdown then.
      auto html = files.find("guide." + code + ".html");
      std::string page =
          html != files.end() ? html->second : RenderHtml(files.at("guide." + code + ".md"), charts, lang);
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

TEST_F(GuideBrowserTest, ScreenshotsAt375And1280) {
  for (Lang lang : {Lang::kFr, Lang::kEn}) {
    for (int width : {kNarrow, kWide}) {
      std::string png = work_ + "/guide." + std::string(LangCode(lang)) + "." + std::to_string(width) + ".png";
      BrowserRun run = RunChromium(work_, {WindowSize(width, 1000), "--screenshot=" + png}, Url(lang));
      ASSERT_EQ(run.exit_code, 0) << run.output;
      std::string bytes = ReadAll(png);
      ASSERT_GT(bytes.size(), 1000u) << png << "\n" << run.output;
      std::pair<uint32_t, uint32_t> size = PngSize(bytes);
      EXPECT_EQ(size.first, static_cast<uint32_t>(width)) << png;
      EXPECT_EQ(size.second, 1000u) << png;
    }
  }
}

// Lays the guide out `width` px wide with its scripts on or off and checks it: no horizontal
// overflow of the page, no text under 12 px (SVG text scaled as drawn), every chart drawn with a
// non-empty box, every table and figure there. Measured in the page, read back with --dump-dom.
void CheckLayout(const std::string& work, Lang lang, const std::string& html, int width, Scripts scripts) {
  std::string code(LangCode(lang));
  std::string name = code + "." + std::to_string(width) + (scripts == Scripts::kOff ? ".noscript" : "");
  SCOPED_TRACE(name);
  std::string path = work + "/measure." + name + ".html";
  WriteAll(path, MeasuringPage(html, width, scripts));
  BrowserRun run = RunChromium(work, {WindowSize(std::max(width, 500) + 20, 1000), "--dump-dom"}, "file://" + path);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::string where;
  std::map<std::string, double> m = Measures(run.output, &where);
  ASSERT_EQ(m.count("min_font_px"), 1u) << "no measurement in:\n" << run.output;
  std::cout << name << ": inner_width=" << m["inner_width"] << " client_width=" << m["client_width"]
            << " scroll_width=" << m["scroll_width"] << " min_font_px=" << m["min_font_px"] << " (" << where
            << ") texts=" << m["texts"] << " svgs=" << m["svgs"] << " svg_min_width=" << m["svg_min_width"]
            << " svg_min_height=" << m["svg_min_height"] << " tables=" << m["tables"] << "\n";
  EXPECT_EQ(m["inner_width"], width);
  EXPECT_EQ(m["client_width"], width);
  EXPECT_LE(m["scroll_width"], m["client_width"]);
  EXPECT_LE(m["body_scroll_width"], m["client_width"]);
  EXPECT_GE(m["min_font_px"], 12.0) << where;
  EXPECT_GT(m["texts"], 100);
  EXPECT_EQ(m["svgs"], static_cast<double>(Count(html, "<svg")));
  EXPECT_GT(m["svg_min_width"], 0);
  EXPECT_GT(m["svg_min_height"], 0);
  EXPECT_EQ(m["tables"], static_cast<double>(Count(html, "<table")));
  EXPECT_EQ(m["figures"], static_cast<double>(Count(html, "<figure")));
  EXPECT_EQ(m["script_ran"], 0);
  // Every image of the guide is a chart inlined; no element comes from record text.
  EXPECT_EQ(m["images"], 0);
  EXPECT_EQ(m["scripts"], 0);
}

TEST_F(GuideBrowserTest, NoOverflowNoSmallTextChartsDrawn) {
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
