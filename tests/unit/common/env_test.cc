// The real filesystem Env where it fails (a write the kernel stops short: RLIMIT_FSIZE, as a full
// disk stops it), and its modes and locks, on real files in a temporary folder.
#include "common/env.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"

namespace benchfleet {
namespace {

class EnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/env_test.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<std::string> Names() {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  // Runs f with writes past `bytes` refused by the kernel (EFBIG).
  template <typename F>
  void WithFileSizeLimit(size_t bytes, F f) {
    struct rlimit old_limit;
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = old_limit;
    limit.rlim_cur = bytes;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
    f();
    ::setrlimit(RLIMIT_FSIZE, &old_limit);
    std::signal(SIGXFSZ, old_handler);
  }

  std::string dir_;
  Env* env_ = Env::Default();
};

TEST_F(EnvTest, FailedAtomicWriteKeepsTheOldContentAndLeavesNoTemporaryFile) {
  const std::string path = dir_ + "/acks.log";
  ASSERT_TRUE(env_->WriteFileAtomically(path, "old\n").ok());
  absl::Status s;
  WithFileSizeLimit(100, [&] { s = env_->WriteFileAtomically(path, std::string(1000, 'x')); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(s.message(), "write " + path + ".tmp: File too large");
  EXPECT_EQ(*env_->ReadFile(path), "old\n");
  EXPECT_EQ(Names(), std::vector<std::string>{"acks.log"});
}

TEST_F(EnvTest, TruncateTakesAShortWriteBack) {
  const std::string path = dir_ + "/segment";
  auto file = env_->NewAppendableFile(path);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("header..").ok());
  absl::Status s;
  WithFileSizeLimit(20, [&] { s = (*file)->Append(std::string(100, 'r')); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(env_->ReadFile(path)->size(), 20u);  // 12 bytes of the append got in
  ASSERT_TRUE((*file)->Truncate(8).ok());
  ASSERT_TRUE((*file)->Append("next").ok());  // O_APPEND: after the cut, not at the old end
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_EQ(*env_->ReadFile(path), "header..next");
}

// A file written with a mode has it, is never left as a temporary file, and is replaced whole.
TEST_F(EnvTest, WriteFileWithModeGivesTheModeAndReplacesAtomically) {
  Env* env = Env::Default();
  const std::string path = dir_ + "/secret";
  auto mode_of = [](const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0u;
  };
  ASSERT_TRUE(env->WriteFileWithMode(path, "one", 0600, /*exclusive=*/false).ok());
  EXPECT_EQ(*env->ReadFile(path), "one");
  EXPECT_EQ(mode_of(path), 0600u);
  ASSERT_TRUE(env->WriteFileWithMode(path, "two", 0640, /*exclusive=*/false).ok());
  EXPECT_EQ(*env->ReadFile(path), "two");
  EXPECT_EQ(mode_of(path), 0640u);
  EXPECT_EQ(Names(), std::vector<std::string>{"secret"});  // no temporary file left behind
  EXPECT_EQ(env->WriteFileWithMode(dir_ + "/missing/secret", "x", 0600, false).code(), absl::StatusCode::kNotFound);
}

// Exclusive: of two writers, the second is refused and changes nothing.
TEST_F(EnvTest, AnExclusiveWriteNeverReplacesAFile) {
  Env* env = Env::Default();
  const std::string path = dir_ + "/ca-key.pem";
  ASSERT_TRUE(env->WriteFileWithMode(path, "first", 0600, /*exclusive=*/true).ok());
  EXPECT_EQ(env->WriteFileWithMode(path, "second", 0600, /*exclusive=*/true).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(*env->ReadFile(path), "first");
  EXPECT_EQ(Names(), std::vector<std::string>{"ca-key.pem"});
}

TEST_F(EnvTest, CreateDirWithModeGivesTheLastFolderItsMode) {
  const std::string dir = dir_ + "/a/tls";
  ASSERT_TRUE(Env::Default()->CreateDirWithMode(dir, 0700).ok());
  struct stat st;
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(Env::Default()->CreateDirWithMode(dir, 0755).ok());  // exists: kept as it is
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

// A lock is held once, names its holder to whoever else asks, and is free again once released.
TEST_F(EnvTest, ALockFileIsHeldOnceUntilReleased) {
  Env* env = Env::Default();
  const std::string path = dir_ + "/LOCK";
  absl::StatusOr<std::unique_ptr<FileLock>> first = env->LockFile(path);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::unique_ptr<FileLock>> second = env->LockFile(path);
  EXPECT_EQ(second.status(), absl::FailedPreconditionError(absl::StrCat(path, " is held by pid ", ::getpid())));
  first->reset();
  EXPECT_TRUE(env->LockFile(path).ok());
}

}  // namespace
}  // namespace benchfleet
