// Runs the built `benchfleet guide` on the repository's fixtures.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::HasSubstr;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/guide_cli_test.XXXXXX";
  char* made = mkdtemp(pattern.data());
  return made != nullptr ? std::string(made) : std::string();
}

int RunGuide(const std::string& out, const std::string& log) {
  std::string source = BENCHFLEET_SOURCE_DIR;
  std::string cmd = std::string("'") + BENCHFLEET_BINARY + "' guide --files '" + source +
                    "/tests/fixtures/llama-bench/llama-bench.json' '" + source +
                    "/tests/fixtures/comfyui/server_log.txt' --out '" + out + "' >'" + log + "' 2>&1";
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(GuideCliTest, WritesTheGuideDeterministically) {
  std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  ASSERT_EQ(RunGuide(dir + "/a", dir + "/a.log"), 0) << ReadAll(dir + "/a.log");
  ASSERT_EQ(RunGuide(dir + "/b", dir + "/b.log"), 0) << ReadAll(dir + "/b.log");
  EXPECT_THAT(ReadAll(dir + "/a.log"), HasSubstr(dir + "/a/guide.en.md"));
  for (const char* name : {"guide.fr.md", "guide.en.md", "guide.fr.html", "guide.en.html", "sources.csv",
                           "chart-comfyui-log.fr.svg", "chart-comfyui-log.en.svg",
                           "chart-comfyui-log-duration.en.svg"}) {
    std::string a = ReadAll(dir + "/a/" + name);
    EXPECT_FALSE(a.empty()) << name;
    EXPECT_EQ(a, ReadAll(dir + "/b/" + name)) << name;
  }
  std::string en = ReadAll(dir + "/a/guide.en.md");
  size_t failed = en.find("### Failed runs\n");
  ASSERT_NE(failed, std::string::npos) << en;
  EXPECT_THAT(en.substr(failed), HasSubstr("`FAILED`: `Argument #4: Padding size should be less than"));
  EXPECT_THAT(en, HasSubstr("](chart-comfyui-log.en.svg)"));
  EXPECT_THAT(ReadAll(dir + "/a/guide.fr.md"), HasSubstr("### Exécutions en échec\n"));
  EXPECT_EQ(ReadAll(dir + "/a/sources.csv").rfind("source_id,operation,run_ids,provenance,inputs,formula,input_refs\r\n", 0), 0u);
}

TEST(GuideCliTest, NoRecordsIsAUsageError) {
  std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  std::string cmd = std::string("'") + BENCHFLEET_BINARY + "' guide --files '" + dir + "/missing.json' --out '" + dir +
                    "/out' >'" + dir + "/log' 2>&1";
  int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_THAT(ReadAll(dir + "/log"), HasSubstr("no records"));
}

}  // namespace
