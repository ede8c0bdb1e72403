#include "common/env.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/errno_status.h"

namespace benchfleet {
namespace {

class PosixWritableFile : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  absl::Status Append(std::string_view data) override {
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus("write", path_, errno);
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    return absl::OkStatus();
  }

  absl::Status Sync() override {
    if (::fdatasync(fd_) != 0) return ErrnoStatus("fdatasync", path_, errno);
    return absl::OkStatus();
  }

  absl::Status Truncate(uint64_t size) override {
    while (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      if (errno != EINTR) return ErrnoStatus("ftruncate", path_, errno);
    }
    return absl::OkStatus();
  }

  absl::Status Close() override {
    if (fd_ < 0) return absl::OkStatus();
    int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) return ErrnoStatus("close", path_, errno);
    return absl::OkStatus();
  }

 private:
  std::string path_;
  int fd_;
};

class PosixFileLock : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override { ::close(fd_); }  // closing releases the flock

 private:
  int fd_;
};

class PosixEnv : public Env {
 public:
  Clock& clock() override { return SystemClock(); }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(const std::string& path) override {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoStatus("open", path, errno);
    return std::make_unique<PosixWritableFile>(path, fd);
  }

  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus("open", path, errno);
    std::string content;
    char buf[1 << 16];
    while (true) {
      ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n < 0) {
        if (errno == EINTR) continue;
        int err = errno;
        ::close(fd);
        return ErrnoStatus("read", path, err);
      }
      if (n == 0) break;
      content.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return content;
  }

  absl::Status WriteFileAtomically(const std::string& path, std::string_view content) override {
    const std::string tmp = path + ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoStatus("open", tmp, errno);
    PosixWritableFile file(tmp, fd);
    absl::Status s = file.Append(content);
    if (s.ok()) s = file.Sync();
    if (s.ok()) s = file.Close();
    if (s.ok()) s = RenameFile(tmp, path);
    if (!s.ok()) {
      // On a full disk the temporary file is empty or cut short: never leave it behind.
      file.Close().IgnoreError();
      ::unlink(tmp.c_str());
      return s;
    }
    return SyncDir(DirName(path));
  }

  absl::Status WriteFileWithMode(const std::string& path, std::string_view content, uint32_t mode,
                                 bool exclusive) override {
    std::string tmp = path + ".tmp-XXXXXX";
    // mkostemp creates the file 0600: no wider than a secret's final mode at any moment.
    const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
    if (fd < 0) return ErrnoStatus("create a temporary file for", path, errno);
    PosixWritableFile file(tmp, fd);
    absl::Status s = ::fchmod(fd, static_cast<mode_t>(mode)) == 0 ? absl::OkStatus() : ErrnoStatus("fchmod", tmp, errno);
    if (s.ok()) s = file.Append(content);
    if (s.ok()) s = file.Sync();
    if (s.ok()) s = file.Close();
    if (s.ok()) {
      // link(2) fails when path exists, atomically: of two exclusive writers one wins.
      if (exclusive) {
        if (::link(tmp.c_str(), path.c_str()) != 0) s = ErrnoStatus("link", path, errno);
      } else {
        s = RenameFile(tmp, path);
      }
    }
    file.Close().IgnoreError();
    if (exclusive || !s.ok()) ::unlink(tmp.c_str());
    if (!s.ok()) return s;
    return SyncDir(DirName(path));
  }

  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return ErrnoStatus("opendir", dir, errno);
    std::vector<std::string> names;
    while (struct dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
  }

  absl::Status CreateDirs(const std::string& dir) override {
    if (dir.empty() || IsDirectory(dir)) return absl::OkStatus();
    std::string parent = DirName(dir);
    if (parent != dir) {
      if (auto s = CreateDirs(parent); !s.ok()) return s;
    }
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return ErrnoStatus("mkdir", dir, errno);
    return absl::OkStatus();
  }

  absl::Status CreateDirWithMode(const std::string& dir, uint32_t mode) override {
    struct stat st;
    if (::stat(dir.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) return absl::OkStatus();
      return absl::FailedPreconditionError(absl::StrCat(dir, " exists and is not a directory"));
    }
    if (absl::Status s = CreateDirs(DirName(dir)); !s.ok()) return s;
    if (::mkdir(dir.c_str(), static_cast<mode_t>(mode)) != 0 && errno != EEXIST) return ErrnoStatus("mkdir", dir, errno);
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoStatus("open", path, errno);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      char holder[32] = {};
      const ssize_t n = ::pread(fd, holder, sizeof(holder) - 1, 0);
      ::close(fd);
      if (err != EWOULDBLOCK) return ErrnoStatus("flock", path, err);
      const std::string pid = n > 0 ? std::string(absl::StripAsciiWhitespace(holder)) : "?";
      return absl::FailedPreconditionError(absl::StrCat(path, " is held by pid ", pid));
    }
    // Who holds it, for the message above; informative only.
    const std::string pid = absl::StrCat(::getpid(), "\n");
    if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, pid.data(), pid.size(), 0);
    return std::unique_ptr<FileLock>(new PosixFileLock(fd));
  }

  absl::Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return ErrnoStatus("unlink", path, errno);
    return absl::OkStatus();
  }

  absl::Status RenameFile(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return ErrnoStatus("rename", from, errno);
    return absl::OkStatus();
  }

  bool FileExists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }

  bool IsDirectory(const std::string& path) override {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  }

  absl::Status SyncDir(const std::string& dir) override {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus("open", dir, errno);
    int rc = ::fsync(fd);
    int err = errno;
    ::close(fd);
    if (rc != 0) return ErrnoStatus("fsync", dir, err);
    return absl::OkStatus();
  }
};

}  // namespace

Env* Env::Default() {
  static PosixEnv* env = new PosixEnv();
  return env;
}

std::string DirName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string JoinPath(std::string_view a, std::string_view b) {
  std::string out(a);
  if (!out.empty() && out.back() != '/') out += '/';
  out.append(b);
  return out;
}

}  // namespace benchfleet
