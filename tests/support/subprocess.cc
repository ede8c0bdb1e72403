#include "tests/support/subprocess.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace benchfleet::testing {

Subprocess::Subprocess(std::vector<std::string> argv, std::map<std::string, std::string> env,
                       std::string log_path) {
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    if (!log_path.empty()) {
      int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::close(fd);
      }
    }
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
}

Subprocess::~Subprocess() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    Wait();
  }
}

bool Subprocess::running() {
  if (pid_ <= 0 || exit_code_ >= 0) return false;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return false;
}

void Subprocess::Signal(int signo) {
  if (pid_ > 0 && exit_code_ < 0) ::kill(pid_, signo);
}

int Subprocess::Wait() {
  if (exit_code_ >= 0 || pid_ <= 0) return exit_code_;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0) {
  }
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return exit_code_;
}

std::string BinaryPath(const std::string& name) {
  const char* dir = std::getenv("BENCHFLEET_BIN_DIR");
  return std::string(dir == nullptr ? "." : dir) + "/" + name;
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string MakeTempDir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp == nullptr ? "/tmp" : tmp) + "/" + prefix + "XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return tmpl;
}

std::vector<pid_t> ProcessesNaming(const std::string& needle) {
  std::vector<pid_t> pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  while (const dirent* entry = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0) continue;
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
    std::stringstream content;
    content << in.rdbuf();
    std::string cmdline = content.str();
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(needle) != std::string::npos) pids.push_back(pid);
  }
  ::closedir(proc);
  return pids;
}

}  // namespace benchfleet::testing
