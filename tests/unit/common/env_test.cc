// The real filesystem Env where it fails: a write the kernel stops short (RLIMIT_FSIZE, as a full
// disk stops it), on real files in a temporary folder.
#include "common/env.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

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

}  // namespace
}  // namespace benchfleet
