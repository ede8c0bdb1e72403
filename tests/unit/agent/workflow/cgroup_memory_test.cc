#include "agent/process/cgroup_memory.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/unit/agent/temp_dir.h"

namespace benchfleet::agent {
namespace {

// /proc/self/mounts of the build machine (cgroup v1 with the memory controller; a cgroup2 mount
// without it) and of a current host (cgroup v2 only).
constexpr char kV1Mounts[] =
    "tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0\n"
    "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n"
    "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
    "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
constexpr char kV1Self[] = "9:name=systemd:/\n4:memory:/process_api/4eae\n1:cpu:/\n0::/\n";
constexpr char kV2Mounts[] =
    "proc /proc proc rw 0 0\ncgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime,nsdelegate 0 0\n";
constexpr char kV2Self[] = "0::/system.slice/benchfleet-agent.service\n";

TEST(CgroupMemoryTest, FindsTheV1MemoryHierarchyBeforeAControllerlessCgroup2) {
  absl::StatusOr<CgroupMemoryHierarchy> h = FindMemoryHierarchy(kV1Mounts, kV1Self, "");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->version, 1);
  EXPECT_EQ(h->mount_point, "/sys/fs/cgroup/memory");
  EXPECT_EQ(h->own_path, "/process_api/4eae");
}

TEST(CgroupMemoryTest, FindsTheV2Hierarchy) {
  absl::StatusOr<CgroupMemoryHierarchy> h = FindMemoryHierarchy(kV2Mounts, kV2Self, "cpuset cpu io memory pids\n");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->version, 2);
  EXPECT_EQ(h->mount_point, "/sys/fs/cgroup");
  EXPECT_EQ(h->own_path, "/system.slice/benchfleet-agent.service");
}

TEST(CgroupMemoryTest, SaysWhyThereIsNone) {
  EXPECT_EQ(FindMemoryHierarchy(kV2Mounts, kV2Self, "cpu io pids").status().message(),
            "the cgroup v2 hierarchy at /sys/fs/cgroup has no memory controller and no cgroup v1 memory hierarchy "
            "is mounted");
  EXPECT_EQ(FindMemoryHierarchy("proc /proc proc rw 0 0\n", "", "").status().message(),
            "no cgroup memory hierarchy is mounted (neither cgroup v1 memory nor cgroup2)");
  EXPECT_EQ(FindMemoryHierarchy(kV1Mounts, "1:cpu:/\n", "").status().message(),
            "/proc/self/cgroup has no line for the cgroup v1 memory hierarchy");
  EXPECT_EQ(FindMemoryHierarchy("garbage\n\n  \ncgroup\n", "garbage", "").status().code(), absl::StatusCode::kNotFound);
}

TEST(CgroupMemoryTest, ParsesByteCounts) {
  EXPECT_EQ(*ParseCgroupBytes("268435456\n"), 268435456u);
  EXPECT_EQ(*ParseCgroupBytes("0"), 0u);
  EXPECT_EQ(ParseCgroupBytes("max\n").status().message(), "not a byte count: 'max'");
  EXPECT_EQ(ParseCgroupBytes("-5").status().message(), "not a byte count: '-5'");
  EXPECT_EQ(ParseCgroupBytes("").status().message(), "not a byte count: ''");
  EXPECT_EQ(ParseCgroupBytes("12 kB").status().code(), absl::StatusCode::kInvalidArgument);
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A temporary folder plays the kernel: the test writes the files the kernel would.
TEST(CgroupMemoryTest, V2EnablesTheControllerForChildrenAndNeedsMemoryPeak) {
  testing::ScopedTempDir root;
  const std::string parent = root.path() + "/sys/fs/cgroup/agent";
  ASSERT_EQ(::system(absl::StrCat("mkdir -p ", parent).c_str()), 0);
  Write(parent + "/cgroup.subtree_control", "cpu\n");
  auto cgroups = NewMemoryCgroups(CgroupMemoryHierarchy{2, "/sys/fs/cgroup", "/agent"}, root.path());
  // The kernel would create memory.peak with the folder; here it is missing at first.
  absl::StatusOr<std::unique_ptr<MemoryCgroup>> missing = cgroups->Create("run-1");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(missing.status().message(), absl::StrCat("cgroup v2: ", parent,
                                                     "/run-1/memory.peak does not exist (memory.peak needs Linux 5.19 or later)"));
  EXPECT_EQ(Read(parent + "/cgroup.subtree_control"), "+memory");
  struct stat st;
  EXPECT_NE(::stat((parent + "/run-1").c_str(), &st), 0) << "the failed cgroup is removed";

}

TEST(CgroupMemoryTest, V1SaysWhichFileIsMissing) {
  testing::ScopedTempDir root;
  const std::string parent = root.path() + "/sys/fs/cgroup/memory/process_api";
  ASSERT_EQ(::system(absl::StrCat("mkdir -p ", parent).c_str()), 0);
  auto cgroups = NewMemoryCgroups(CgroupMemoryHierarchy{1, "/sys/fs/cgroup/memory", "/process_api"}, root.path());
  absl::StatusOr<std::unique_ptr<MemoryCgroup>> none = cgroups->Create("run-1");
  EXPECT_EQ(none.status().message(),
            absl::StrCat("cgroup v1: ", parent, "/run-1/memory.max_usage_in_bytes does not exist"));
}

// The real thing, where this machine allows it (root, a memory hierarchy): a child that joins
// the cgroup through ProcessOptions is charged, the peak is read, the cgroup removed.
TEST(CgroupMemoryTest, RealHierarchyWhenAvailable) {
  absl::StatusOr<CgroupMemoryHierarchy> h = DetectMemoryHierarchy();
  if (!h.ok()) GTEST_SKIP() << "no memory cgroup here: " << h.status();
  if (::geteuid() != 0) GTEST_SKIP() << "not root: cannot create cgroups";
  auto cgroups = NewMemoryCgroups(*h);
  absl::StatusOr<std::unique_ptr<MemoryCgroup>> cg = cgroups->Create(absl::StrCat("benchfleet-test-", ::getpid()));
  if (!cg.ok() && h->version == 2) GTEST_SKIP() << "cgroup v2 without delegation: " << cg.status();
  ASSERT_TRUE(cg.ok()) << cg.status();
  EXPECT_EQ((*cg)->scope(), absl::StrCat("cgroup v", h->version, " ", h->own_path == "/" ? "" : h->own_path,
                                         "/benchfleet-test-", ::getpid()));
  absl::StatusOr<uint64_t> peak = (*cg)->PeakBytes();
  ASSERT_TRUE(peak.ok()) << peak.status();
  EXPECT_EQ(*peak, 0u) << "a fresh cgroup has no charge yet";
  EXPECT_EQ((*cg)->KillAll(), 0);
  ASSERT_TRUE((*cg)->Remove().ok());
  struct stat st;
  EXPECT_NE(::stat((*cg)->source().c_str(), &st), 0);
}

}  // namespace
}  // namespace benchfleet::agent
