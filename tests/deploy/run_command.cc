#include "tests/deploy/run_command.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_split.h"

extern char** environ;

namespace benchfleet::testing {
namespace {

std::string TempFile() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/bf-cmd.XXXXXX";
  const int fd = ::mkstemp(pattern.data());
  if (fd >= 0) ::close(fd);
  return pattern;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool IsExecutable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv) {
  CommandResult result;
  const std::string out_path = TempFile();
  const std::string err_path = TempFile();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_TRUNC, 0600);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    result.exit_code = 127;
    result.err = "cannot run " + argv[0];
  } else {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.out = Slurp(out_path);
    result.err = Slurp(err_path);
  }
  ::unlink(out_path.c_str());
  ::unlink(err_path.c_str());
  return result;
}

std::string FindTool(const std::string& name, const std::string& env_var,
                     const std::vector<std::string>& candidates) {
  if (const char* v = std::getenv(env_var.c_str()); v != nullptr && IsExecutable(v)) return v;
  for (const std::string& c : candidates) {
    if (IsExecutable(c)) return c;
  }
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    std::string candidate = std::string(dir) + "/" + name;
    if (IsExecutable(candidate)) return candidate;
  }
  return "";
}

std::string FindHelm() {
  const char* home = std::getenv("HOME");
  const char* cache = std::getenv("BENCHFLEET_CACHE_DIR");
  std::vector<std::string> candidates;
  if (cache != nullptr && *cache != '\0') candidates.push_back(std::string(cache) + "/bin/helm");
  if (home != nullptr) candidates.push_back(std::string(home) + "/.cache/benchfleet/bin/helm");
  return FindTool("helm", "BENCHFLEET_HELM", candidates);
}

}  // namespace benchfleet::testing
