#include "tests/support/pg_server.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/support/subprocess.h"

namespace benchfleet::testing {
namespace {

std::string SourceDir() {
  const char* dir = std::getenv("BENCHFLEET_SOURCE_DIR");
  return dir == nullptr ? "." : dir;
}

}  // namespace

PgServer::PgServer() = default;

PgServer::~PgServer() {
  if (dir_.empty()) return;
  Stop();
  std::string ignored;
  RunScript("rm -rf '" + dir_ + "'", &ignored);
}

bool PgServer::RunScript(const std::string& body, std::string* output) {
  std::string command = "bash -c \"source '" + SourceDir() + "/scripts/lib/pg.sh' && " + body + "\"";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return false;
  char buf[256];
  output->clear();
  while (std::fgets(buf, sizeof(buf), pipe) != nullptr) *output += buf;
  return ::pclose(pipe) == 0;
}

bool PgServer::Start() {
  dir_ = MakeTempDir("pgserver");
  std::string out;
  if (!RunScript("pg_start '" + dir_ + "' && echo \\$PG_PORT", &out)) return false;
  port_ = std::atoi(out.c_str());
  return port_ > 0;
}

bool PgServer::Stop() {
  std::string out;
  return RunScript("pg_stop '" + dir_ + "'", &out);
}

bool PgServer::Resume() {
  std::string out;
  return RunScript("pg_resume '" + dir_ + "' " + std::to_string(port_), &out);
}

std::string PgServer::url() const {
  return "postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/postgres";
}

}  // namespace benchfleet::testing
