#include "coordinator/localdb/local_postgres.h"

#include <pwd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/localdb/command.h"

namespace benchfleet::coordinator {
namespace {

namespace fs = std::filesystem;

// The port only names the socket file (.s.PGSQL.5432): there is no TCP listener.
constexpr char kPort[] = "5432";

absl::Status ChownTree(const std::string& dir, uid_t uid, gid_t gid) {
  std::error_code ec;
  if (::chown(dir.c_str(), uid, gid) != 0) {
    return absl::PermissionDeniedError(absl::StrCat("cannot give ", dir, " to the postgres user"));
  }
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    ::lchown(it->path().c_str(), uid, gid);
  }
  return absl::OkStatus();
}

// A libpq keyword value, quoted when needed.
std::string ConninfoValue(const std::string& value) {
  if (!value.empty() && value.find_first_of(" '\\") == std::string::npos) return value;
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

}  // namespace

absl::StatusOr<std::string> FindPostgresBinDir(const std::string& root) {
  std::error_code ec;
  int best = -1;
  std::string best_dir;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    int version = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &version)) continue;
    const fs::path bin = entry.path() / "bin";
    if (version > best && fs::exists(bin / "initdb", ec)) {
      best = version;
      best_dir = bin.string();
    }
  }
  if (best < 0) {
    return absl::NotFoundError(absl::StrCat(
        "no PostgreSQL server binaries in ", root,
        "/<version>/bin: install the postgresql package, or give --database-url"));
  }
  return best_dir;
}

absl::StatusOr<std::unique_ptr<LocalPostgres>> LocalPostgres::Start(LocalPostgresOptions options) {
  std::unique_ptr<LocalPostgres> db(new LocalPostgres());
  std::error_code ec;
  fs::create_directories(options.data_dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create the data directory ", options.data_dir, ": ", ec.message()));
  }
  db->dir_ = fs::canonical(options.data_dir, ec).string();
  if (ec) return absl::FailedPreconditionError(absl::StrCat(options.data_dir, ": ", ec.message()));
  // Trust authentication is safe only because nobody else can reach the socket directory.
  ::chmod(db->dir_.c_str(), 0700);
  db->pgdata_ = db->dir_ + "/pgdata";
  // Our commands' output and the server's own log: separate files, since as root the first is
  // written by us and the second by the postgres user.
  db->log_path_ = db->dir_ + "/localdb.log";
  const std::string server_log = db->dir_ + "/postgres.log";
  if (db->dir_.find('\'') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("the data directory ", db->dir_, " has a quote in its path; choose another"));
  }
  const size_t socket_path = db->dir_.size() + std::string("/.s.PGSQL.5432").size();
  if (socket_path >= sizeof(sockaddr_un{}.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the data directory path ", db->dir_, " is too long for a unix socket (",
        socket_path, " bytes, at most ", sizeof(sockaddr_un{}.sun_path) - 1, "); choose a shorter one"));
  }

  if (options.bin_dir.empty()) {
    absl::StatusOr<std::string> bin = FindPostgresBinDir();
    if (!bin.ok()) return bin.status();
    db->bin_dir_ = *bin;
  } else {
    db->bin_dir_ = options.bin_dir;
  }

  if (::geteuid() == 0) {
    const passwd* pw = ::getpwnam("postgres");
    if (pw == nullptr) {
      return absl::FailedPreconditionError(
          "running as root needs a 'postgres' user to run the private PostgreSQL as "
          "(initdb and pg_ctl refuse root); create it or give --database-url");
    }
    db->as_postgres_user_ = true;
    absl::Status owned = ChownTree(db->dir_, pw->pw_uid, pw->pw_gid);
    if (!owned.ok()) return owned;
    absl::StatusOr<int> reachable = db->RunForExitCode("/usr/bin/test", {"-w", db->dir_});
    if (!reachable.ok() || *reachable != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the postgres user cannot reach ", db->dir_,
          ": make its parent directories searchable (chmod o+x) or choose another --data-dir"));
    }
  }

  if (!fs::exists(db->pgdata_ + "/PG_VERSION", ec)) {
    absl::Status init = db->Run(db->bin_dir_ + "/initdb",
                                {"-D", db->pgdata_, "-U", "postgres", "-A", "trust", "-E", "UTF8"},
                                "initialising the private PostgreSQL");
    if (!init.ok()) return init;
  }

  // A coordinator that died without stopping its server leaves it running: adopt it.
  absl::StatusOr<int> status = db->RunForExitCode(db->bin_dir_ + "/pg_ctl", {"status", "-D", db->pgdata_});
  if (!status.ok()) return status.status();
  if (*status != 0) {
    const std::string server_options = absl::StrCat(
        "-c listen_addresses='' -c unix_socket_directories='", db->dir_, "' -p ", kPort,
        " -c unix_socket_permissions=0700");
    absl::Status started = db->Run(
        db->bin_dir_ + "/pg_ctl",
        {"start", "-D", db->pgdata_, "-l", server_log, "-w", "-t", "120", "-o", server_options},
        "starting the private PostgreSQL");
    if (!started.ok()) {
      return absl::InternalError(absl::StrCat(started.message(), "\nthe end of ", server_log,
                                              ":\n", FileTail(server_log, 2000)));
    }
  }
  db->running_ = true;

  const std::string host = ConninfoValue(db->dir_);
  // createdb, not SQL: store/ is the only place that speaks SQL. Its "already exists" on every
  // later start is fine; only this run's output is looked at.
  const auto log_size = fs::file_size(db->log_path_, ec);
  const size_t before = ec ? 0 : static_cast<size_t>(log_size);
  absl::StatusOr<int> created = db->RunForExitCode(
      db->bin_dir_ + "/createdb", {"-h", db->dir_, "-p", kPort, "-U", "postgres", options.database});
  if (!created.ok()) return created.status();
  if (*created != 0 && FileTail(db->log_path_, 4096, before).find("already exists") == std::string::npos) {
    return absl::InternalError(absl::StrCat("creating the database ", options.database,
                                            " failed; see ", db->log_path_));
  }
  db->url_ = absl::StrCat("host=", host, " port=", kPort, " user=postgres dbname=",
                          ConninfoValue(options.database));
  return db;
}

LocalPostgres::~LocalPostgres() { Stop().IgnoreError(); }

absl::Status LocalPostgres::Stop() {
  if (!running_) return absl::OkStatus();
  running_ = false;
  return Run(bin_dir_ + "/pg_ctl", {"stop", "-D", pgdata_, "-m", "fast", "-w", "-t", "120"},
             "stopping the private PostgreSQL");
}

absl::StatusOr<int> LocalPostgres::RunForExitCode(const std::string& program,
                                                  const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  if (as_postgres_user_) argv = {"/usr/sbin/runuser", "-u", "postgres", "--"};
  argv.push_back(program);
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, log_path_);
}

absl::Status LocalPostgres::Run(const std::string& program, const std::vector<std::string>& args,
                                const std::string& what) {
  std::error_code ec;
  const auto log_size = fs::file_size(log_path_, ec);
  absl::StatusOr<int> code = RunForExitCode(program, args);
  if (!code.ok()) return code.status();
  if (*code != 0) {
    return absl::InternalError(absl::StrCat(what, " failed (", program, " exited with ", *code,
                                            "); it said (", log_path_, "):\n",
                                            FileTail(log_path_, 2000, ec ? 0 : log_size)));
  }
  return absl::OkStatus();
}

}  // namespace benchfleet::coordinator
