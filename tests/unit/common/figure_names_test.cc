// The rule of the figures' vocabulary (common/figures.h): no file outside a backend's folder names
// one of its metrics. Downstream code (the guide, the coordinator's metrics and store, the CLI, the
// dashboards, the alerts, the scripts) reads the declaration stamped on each record instead, so a
// new backend adds its declaration and nothing elsewhere. This test reads every such file of the
// checkout and looks for each declared name with an underscore as a quoted string ("name" or 'name'),
// the only way code, SQL, PromQL or JSON can name a metric.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "agent/backends/comfyui/figures.h"
#include "agent/backends/llama_server/figures.h"
#include "agent/backends/openai/figures.h"
#include "agent/backends/workflow/figures.h"
#include "gtest/gtest.h"

namespace benchfleet {
namespace {

struct Declared {
  std::string folder;  // the backend's folder under agent/backends/
  FigureDeclarations figures;
};

std::string SourceDir() {
  const char* dir = std::getenv("BENCHFLEET_SOURCE_DIR");
  return dir != nullptr && *dir != '\0' ? dir : BENCHFLEET_CONFIGURED_SOURCE_DIR;
}

bool Scanned(const std::filesystem::path& path) {
  static const std::set<std::string> kExtensions = {".cc", ".h", ".sql", ".json", ".yml", ".yaml", ".proto", ".tpl"};
  const std::string ext = path.extension().string();
  if (kExtensions.count(ext) > 0) return true;
  // The scripts: shell without an extension.
  return ext.empty() && path.parent_path().filename() == "scripts";
}

TEST(FigureNamesTest, NoFileOutsideABackendsFolderNamesItsMetrics) {
  const std::vector<Declared> backends = {
      {"comfyui", agent::comfyui::kFigures},
      {"llama_server", agent::llama_server::kFigures},
      {"openai", agent::openai::kFigures},
      {"workflow", agent::workflow::kFigures},
  };
  const std::filesystem::path root = SourceDir();
  // Everything but the tests (whose fixtures are records) and the build.
  const std::vector<std::string> tops = {"agent", "cli", "common", "coordinator", "synthesis",
                                         "deploy", "helm", "proto", "scripts", "examples"};
  size_t files = 0;
  for (const std::string& top : tops) {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(root / top, ec);
         it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (ec || !it->is_regular_file() || !Scanned(it->path())) continue;
      const std::string relative = std::filesystem::relative(it->path(), root).string();
      std::ifstream in(it->path(), std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      const std::string content = text.str();
      ++files;
      // A backend's folder is that backend's code (a results file's keys may share a name with
      // another backend's metric); the simulate command declares figures of its own.
      if (relative.rfind("agent/backends/", 0) == 0 || relative == "agent/simulate/simulated_series.cc") continue;
      for (const Declared& backend : backends) {
        for (const FigureDeclaration& f : backend.figures) {
          // Plain words ("images", "requests") are not a metric's name alone.
          if (f.name.find('_') == std::string_view::npos) continue;
          for (const char quote : {'"', '\''}) {
            const std::string quoted = std::string(1, quote) + std::string(f.name) + std::string(1, quote);
            EXPECT_EQ(content.find(quoted), std::string::npos)
                << relative << " names " << quoted << ", a metric of agent/backends/" << backend.folder
                << "/: read the record's declaration (Metric.headline, label, unit, better) instead";
          }
        }
      }
    }
  }
  EXPECT_GT(files, 100u) << "the checkout at " << root << " was not read";
}

}  // namespace
}  // namespace benchfleet
