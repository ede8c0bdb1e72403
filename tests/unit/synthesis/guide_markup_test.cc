// Values from the data are never read as markup (synthesis/render/spans.h): a machine, a task, a
// metric's label and unit and a flag's reason holding "**bold**", "[x](y)", a backslash and a
// backtick come out of the whole guide as literal text: escaped in the Markdown, as characters in
// the HTML, never as bold or a link.
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "synthesis/guide.h"
#include "synthesis/render/document.h"
#include "synthesis/render/inline_markdown.h"

namespace benchfleet::synthesis {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kMarkup[] = "**bold** [x](y) a\\b c`d";

v1::RunRecord MakeRun(const std::string& id, uint32_t call, double value) {
  v1::RunRecord r;
  r.set_run_id(id);
  r.set_task(std::string("chat ") + kMarkup);
  r.set_agent_id(std::string("host ") + kMarkup);
  r.set_backend("llama-server");
  r.set_mode("gpu");
  (*r.mutable_matrix())["mode"] = "gpu";
  r.set_phase(v1::PHASE_WARM);
  r.set_call_index(call);
  r.set_repetition(1);
  r.mutable_start_time()->set_seconds(1772359200 + 10 * call);
  r.mutable_end_time()->set_seconds(1772359202 + 10 * call);
  r.mutable_wall_duration()->set_seconds(2);
  r.mutable_status()->set_code(v1::RunStatus::CODE_OK);
  r.mutable_provenance()->set_kind(v1::Provenance::KIND_LIVE);
  v1::Metric* m = r.add_metrics();
  m->set_name("tokens_per_second");
  m->set_label(std::string("speed ") + kMarkup);
  m->set_unit("items/s *u* [v](w) \\ `");
  m->set_value(value);
  m->set_headline(1);
  m->set_better(v1::BETTER_HIGHER);
  if (call == 1) {
    v1::Flag* f = r.add_flags();
    f->set_code("CONTENDED");
    f->set_reason(std::string("busy ") + kMarkup);
  }
  return r;
}

class GuideMarkupTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    GuideInput input;
    for (uint32_t call = 1; call <= 6; ++call) {
      input.records.push_back(MakeRun("run-" + std::to_string(call), call, 50.0 + call));
    }
    files_ = new std::map<std::string, std::string>(BuildGuideFiles(input, {Lang::kEn, Lang::kFr}));
  }
  static void TearDownTestSuite() { delete files_; }
  static const std::string& File(const std::string& name) { return files_->at(name); }
  static std::map<std::string, std::string>* files_;
};
std::map<std::string, std::string>* GuideMarkupTest::files_ = nullptr;

// The text (code spans left out) of `spans`.
std::string TextOf(const Spans& spans) {
  std::string out;
  for (const Span& s : spans) out += s.kind == Span::Kind::kText ? s.text : TextOf(s.children);
  return out;
}

// Every bold span's text and every link's target in `spans`, nested ones too.
void Collect(const Spans& spans, std::vector<std::string>& bold, std::vector<std::string>& links) {
  for (const Span& s : spans) {
    if (s.kind == Span::Kind::kBold) bold.push_back(TextOf(s.children));
    if (s.kind == Span::Kind::kLink || s.kind == Span::Kind::kImage) links.push_back(s.target);
    Collect(s.children, bold, links);
  }
}

TEST_F(GuideMarkupTest, MarkdownQuotesTheValuesAsText) {
  for (const std::string lang : {"en", "fr"}) {
    const std::string& md = File("guide." + lang + ".md");
    // In code spans: the backtick turned into "'", the rest as written.
    EXPECT_THAT(md, HasSubstr("`chat **bold** [x](y) a\\b c'd`")) << lang;
    EXPECT_THAT(md, HasSubstr("`host **bold** [x](y) a\\b c'd`")) << lang;
    EXPECT_THAT(md, HasSubstr("`busy **bold** [x](y) a\\b c'd`")) << lang;
    // As text (a unit without digits is a word, a label in a column's header): escaped.
    EXPECT_THAT(md, HasSubstr("items/s \\*u\\* [v\\](w) \\\\ \\`")) << lang;
    EXPECT_THAT(md, HasSubstr("speed \\*\\*bold\\*\\* [x\\](y) a\\\\b c\\`d")) << lang;
    // Read back, the only bold text and links are the guide's own.
    std::vector<std::string> bold, links;
    size_t start = 0;
    for (size_t end; (end = md.find('\n', start)) != std::string::npos; start = end + 1) {
      Collect(ParseInline(std::string_view(md).substr(start, end - start)), bold, links);
    }
    for (const std::string& b : bold) EXPECT_THAT(b, Not(HasSubstr("bold"))) << lang;
    EXPECT_FALSE(links.empty()) << lang;
    for (const std::string& target : links) {
      EXPECT_TRUE(target.starts_with("#") || target.starts_with("chart-")) << lang << ": " << target;
    }
  }
}

TEST_F(GuideMarkupTest, HtmlQuotesTheValuesAsText) {
  for (const std::string lang : {"en", "fr"}) {
    const std::string& html = File("guide." + lang + ".html");
    EXPECT_THAT(html, HasSubstr("<code>chat **bold** [x](y) a\\b c'd</code>")) << lang;
    EXPECT_THAT(html, HasSubstr("<code>host **bold** [x](y) a\\b c'd</code>")) << lang;
    EXPECT_THAT(html, HasSubstr("items/s *u* [v](w) \\ `")) << lang;
    EXPECT_THAT(html, HasSubstr("speed **bold** [x](y) a\\b c`d")) << lang;
    EXPECT_THAT(html, Not(HasSubstr("<strong>bold</strong>"))) << lang;
    EXPECT_THAT(html, Not(HasSubstr("<strong>u</strong>"))) << lang;
    EXPECT_THAT(html, Not(HasSubstr("href=\"y\""))) << lang;
    EXPECT_THAT(html, Not(HasSubstr("href=\"w\""))) << lang;
  }
}

}  // namespace
}  // namespace benchfleet::synthesis
