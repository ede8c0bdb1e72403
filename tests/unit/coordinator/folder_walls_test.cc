// The walls between the coordinator's folders (coordinator/README.md "The walls between the
// folders"): every `#include "coordinator/..."` of a folder's files names the folder itself or one
// it may call. The libraries enforce the same walls at link time; this test says which line broke
// one, and that a new folder needs its row.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace benchfleet::coordinator {
namespace {

namespace fs = std::filesystem;

// What each part of the coordinator may include, besides itself: "log" is log.h, "server" is
// server.h, and main.cc may include everything.
const std::map<std::string, std::set<std::string>>& Walls() {
  static const auto* walls = new std::map<std::string, std::set<std::string>>{
      {"store", {}},
      {"migrations", {}},
      {"metrics", {"store"}},
      {"auth", {"store", "log"}},
      {"scheduler", {"metrics", "store", "log"}},
      {"ingest", {"auth", "metrics", "scheduler", "store", "log"}},
      {"admin", {"auth", "ingest", "metrics", "scheduler", "store", "log"}},
      {"localdb", {}},
      {"log", {}},
      {"server", {"admin", "auth", "ingest", "metrics", "scheduler", "store", "log"}},
  };
  return *walls;
}

// "coordinator/ingest/batch.h" -> "ingest"; "coordinator/log.h" -> "log".
std::string PartOf(const std::string& path_under_coordinator) {
  const size_t slash = path_under_coordinator.find('/');
  if (slash != std::string::npos) return path_under_coordinator.substr(0, slash);
  return fs::path(path_under_coordinator).stem().string();
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(FolderWallsTest, EveryIncludeOfACoordinatorFolderNamesAFolderItMayCall) {
  const fs::path root = fs::path(BENCHFLEET_SOURCE_DIR) / "coordinator";
  const std::regex include_line(R"re(#include "coordinator/([^"]+)")re");
  int files = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
    const std::string relative = fs::relative(entry.path(), root).generic_string();
    if (relative == "main.cc") continue;
    const std::string part = PartOf(relative);
    const auto wall = Walls().find(part);
    ASSERT_NE(wall, Walls().end()) << "coordinator/" << relative << ": the folder " << part
                                   << " has no row in this test's table nor in coordinator/README.md";
    ++files;
    const std::string text = ReadFile(entry.path());
    for (std::sregex_iterator it(text.begin(), text.end(), include_line), end; it != end; ++it) {
      const std::string included = PartOf((*it)[1].str());
      if (included == part) continue;
      EXPECT_TRUE(wall->second.contains(included))
          << "coordinator/" << relative << " includes coordinator/" << (*it)[1].str() << ": " << part
          << " may not call " << included;
    }
  }
  EXPECT_GT(files, 50) << "the coordinator's sources were not found under " << root;
}

}  // namespace
}  // namespace benchfleet::coordinator
