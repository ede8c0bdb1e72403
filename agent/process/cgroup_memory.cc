#include "agent/process/cgroup_memory.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/string_views.h"

namespace benchfleet::agent {
namespace {

// Returns the whole file, or nullopt-like error.
absl::StatusOr<std::string> ReadText(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Writes text with one write(2), as cgroup files want.
absl::Status WriteText(const std::string& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return absl::PermissionDeniedError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  const ssize_t n = ::write(fd, text.data(), text.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot write '", ToAbsl(text), "' to ", path, ": ", std::strerror(err)));
  }
  return absl::OkStatus();
}

class MemoryCgroupImpl : public MemoryCgroup {
 public:
  MemoryCgroupImpl(int version, std::string dir, std::string relative, bool fake)
      : version_(version), dir_(std::move(dir)), relative_(std::move(relative)), fake_(fake) {}
  ~MemoryCgroupImpl() override { (void)Remove(); }

  std::string procs_path() const override { return dir_ + "/cgroup.procs"; }

  absl::StatusOr<uint64_t> PeakBytes() override {
    absl::StatusOr<std::string> text = ReadText(source());
    if (!text.ok()) return text.status();
    absl::StatusOr<uint64_t> bytes = ParseCgroupBytes(*text);
    if (!bytes.ok()) return absl::Status(bytes.status().code(), absl::StrCat(source(), ": ", bytes.status().message()));
    return bytes;
  }

  int KillAll() override {
    int signalled = 0;
    for (int round = 0; round < 100; ++round) {
      absl::StatusOr<std::string> text = ReadText(procs_path());
      if (!text.ok()) return signalled;
      bool any = false;
      for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipWhitespace())) {
        int pid = 0;
        // Never 0 or the agent itself: kill(0) would hit the agent's own process group.
        if (!absl::SimpleAtoi(line, &pid) || pid <= 0 || pid == ::getpid()) continue;
        if (::kill(pid, SIGKILL) == 0) {
          ++signalled;
          any = true;
        }
      }
      if (!any) return signalled;
      // The kernel needs a moment to take killed processes out of cgroup.procs.
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return signalled;
  }

  absl::Status Remove() override {
    if (removed_) return absl::OkStatus();
    KillAll();
    // A killed process stays in the cgroup until its parent reaps it: retry for a while.
    for (int attempt = 0; attempt < 200; ++attempt) {
      if (::rmdir(dir_.c_str()) == 0 || errno == ENOENT) {
        removed_ = true;
        return absl::OkStatus();
      }
      if (errno == ENOTEMPTY && fake_) {
        // A folder that plays a cgroup in tests holds plain files.
        if (DIR* d = ::opendir(dir_.c_str())) {
          while (dirent* e = ::readdir(d)) {
            if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
              ::unlink((dir_ + "/" + e->d_name).c_str());
            }
          }
          ::closedir(d);
        }
        continue;
      }
      if (errno != EBUSY) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return absl::InternalError(absl::StrCat("cannot remove cgroup ", dir_, ": ", std::strerror(errno)));
  }

  std::string scope() const override { return absl::StrCat("cgroup v", version_, " ", relative_); }
  std::string source() const override {
    return dir_ + (version_ == 2 ? "/memory.peak" : "/memory.max_usage_in_bytes");
  }

 private:
  const int version_;
  const std::string dir_;
  const std::string relative_;
  const bool fake_;
  bool removed_ = false;
};

class MemoryCgroupsImpl : public MemoryCgroups {
 public:
  MemoryCgroupsImpl(CgroupMemoryHierarchy hierarchy, std::string fs_root)
      : h_(std::move(hierarchy)), fs_root_(std::move(fs_root)) {}

  absl::StatusOr<std::unique_ptr<MemoryCgroup>> Create(std::string_view name) override {
    const std::string own = h_.own_path == "/" ? "" : h_.own_path;
    const std::string parent = fs_root_ + h_.mount_point + own;
    const std::string relative = absl::StrCat(own, "/", ToAbsl(name));
    const std::string dir = parent + "/" + std::string(name);
    if (h_.version == 2) {
      // Children get a memory controller only when the parent lists it in subtree_control. The
      // kernel refuses that for a non-root cgroup that holds processes (the agent's own, often).
      absl::StatusOr<std::string> control = ReadText(parent + "/cgroup.subtree_control");
      if (!control.ok()) return absl::FailedPreconditionError(control.status().message());
      bool enabled = false;
      for (absl::string_view c : absl::StrSplit(*control, absl::ByAnyChar(" \n"), absl::SkipEmpty())) {
        enabled = enabled || c == "memory";
      }
      if (!enabled) {
        if (absl::Status s = WriteText(parent + "/cgroup.subtree_control", "+memory"); !s.ok()) {
          return absl::FailedPreconditionError(absl::StrCat(
              "cgroup v2: cannot enable the memory controller below ", h_.mount_point, own, " (", s.message(),
              "); the agent needs a delegated cgroup without processes of its own"));
        }
      }
    }
    if (::mkdir(dir.c_str(), 0755) != 0) {
      const int err = errno;
      const std::string message = absl::StrCat("cannot create cgroup ", dir, ": ", std::strerror(err));
      return err == EACCES || err == EPERM || err == EROFS ? absl::PermissionDeniedError(message)
                                                           : absl::InternalError(message);
    }
    auto cgroup = std::make_unique<MemoryCgroupImpl>(h_.version, dir, relative, !fs_root_.empty());
    struct stat st;
    if (::stat(cgroup->source().c_str(), &st) != 0) {
      const std::string missing = cgroup->source();
      (void)cgroup->Remove();
      return absl::FailedPreconditionError(absl::StrCat(
          "cgroup v", h_.version, ": ", missing, " does not exist",
          h_.version == 2 ? " (memory.peak needs Linux 5.19 or later)" : ""));
    }
    return std::unique_ptr<MemoryCgroup>(std::move(cgroup));
  }

 private:
  const CgroupMemoryHierarchy h_;
  const std::string fs_root_;
};

}  // namespace

absl::StatusOr<CgroupMemoryHierarchy> FindMemoryHierarchy(std::string_view mounts, std::string_view self_cgroup,
                                                          std::string_view controllers_v2) {
  std::string v1_mount;
  std::string v2_mount;
  for (absl::string_view line : absl::StrSplit(ToAbsl(mounts), '\n', absl::SkipWhitespace())) {
    const std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 4) continue;
    if (f[2] == "cgroup") {
      for (absl::string_view option : absl::StrSplit(f[3], ',')) {
        if (option == "memory" && v1_mount.empty()) v1_mount = std::string(f[1]);
      }
    } else if (f[2] == "cgroup2" && v2_mount.empty()) {
      v2_mount = std::string(f[1]);
    }
  }
  CgroupMemoryHierarchy h;
  if (!v1_mount.empty()) {
    h.version = 1;
    h.mount_point = v1_mount;
  } else if (!v2_mount.empty()) {
    bool memory = false;
    for (absl::string_view c : absl::StrSplit(ToAbsl(controllers_v2), absl::ByAnyChar(" \n"), absl::SkipEmpty())) {
      memory = memory || c == "memory";
    }
    if (!memory) {
      return absl::NotFoundError(absl::StrCat("the cgroup v2 hierarchy at ", v2_mount,
                                              " has no memory controller and no cgroup v1 memory hierarchy is mounted"));
    }
    h.version = 2;
    h.mount_point = v2_mount;
  } else {
    return absl::NotFoundError("no cgroup memory hierarchy is mounted (neither cgroup v1 memory nor cgroup2)");
  }
  // /proc/self/cgroup: "4:memory:/path" (v1; the controller list may hold several) or "0::/path" (v2).
  for (absl::string_view line : absl::StrSplit(ToAbsl(self_cgroup), '\n', absl::SkipWhitespace())) {
    const std::vector<absl::string_view> f = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (f.size() != 3) continue;
    bool match = false;
    if (h.version == 2) {
      match = f[0] == "0" && f[1].empty();
    } else {
      for (absl::string_view c : absl::StrSplit(f[1], ',')) match = match || c == "memory";
    }
    if (match) {
      h.own_path = std::string(absl::StripAsciiWhitespace(f[2]));
      if (h.own_path.empty() || h.own_path[0] != '/') {
        return absl::NotFoundError(absl::StrCat("/proc/self/cgroup names no usable cgroup path: '", line, "'"));
      }
      return h;
    }
  }
  return absl::NotFoundError(absl::StrCat("/proc/self/cgroup has no line for the cgroup v", h.version,
                                          " memory hierarchy"));
}

absl::StatusOr<uint64_t> ParseCgroupBytes(std::string_view text) {
  const absl::string_view value = absl::StripAsciiWhitespace(ToAbsl(text));
  uint64_t bytes = 0;
  if (value.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(value[0])) ||
      !absl::SimpleAtoi(value, &bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("not a byte count: '", value.substr(0, 64), "'"));
  }
  return bytes;
}

std::unique_ptr<MemoryCgroups> NewMemoryCgroups(CgroupMemoryHierarchy hierarchy, std::string fs_root) {
  return std::make_unique<MemoryCgroupsImpl>(std::move(hierarchy), std::move(fs_root));
}

absl::StatusOr<CgroupMemoryHierarchy> DetectMemoryHierarchy() {
#if defined(__linux__)
  absl::StatusOr<std::string> mounts = ReadText("/proc/self/mounts");
  if (!mounts.ok()) return mounts.status();
  absl::StatusOr<std::string> self = ReadText("/proc/self/cgroup");
  if (!self.ok()) return self.status();
  std::string controllers;
  for (absl::string_view line : absl::StrSplit(*mounts, '\n', absl::SkipWhitespace())) {
    const std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() >= 3 && f[2] == "cgroup2") {
      controllers = ReadText(absl::StrCat(f[1], "/cgroup.controllers")).value_or("");
      break;
    }
  }
  return FindMemoryHierarchy(*mounts, *self, controllers);
#else
  return absl::NotFoundError("cgroups exist on Linux only");
#endif
}

}  // namespace benchfleet::agent
