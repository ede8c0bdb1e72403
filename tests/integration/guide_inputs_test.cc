// `benchfleet guide` from a real coordinator (--coordinator: Admin ListRuns + GetConditions) and
// from its database (--database-url: COPY): the same records and conditions, so byte-identical
// guides. The records come from two simulated agents sending through the coordinator.
#include <dirent.h>

#include <fstream>
#include <map>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/fleet.h"
#include "tests/support/pg_test_db.h"

namespace benchfleet::testing {
namespace {

using ::testing::HasSubstr;

// Every regular file of `dir` by name, with its content.
std::map<std::string, std::string> Files(const std::string& dir) {
  std::map<std::string, std::string> files;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return files;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    files[name] = ReadAll(dir + "/" + name);
  }
  closedir(d);
  return files;
}

class GuideInputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BENCHFLEET_REQUIRE_PG(db_);
    work_ = MakeTempDir("guide-inputs");
    coordinator_ = std::make_unique<CoordinatorProcess>(db_.url(), work_);
    ASSERT_TRUE(coordinator_->Start()) << coordinator_->log();
    Simulate("a100", 12);
    Simulate("m1pro", 7);
  }

  // Runs a SIMULATED series of n runs on an agent labelled class=cls, sent to the coordinator.
  void Simulate(const std::string& cls, int n) {
    ASSERT_EQ(SimulateSeries(work_, cls, n, coordinator_->address()), 0) << ReadAll(work_ + "/sim-" + cls + ".log");
  }

  // Runs `benchfleet guide ARGS...`; returns its exit code, its output in *out.
  int Guide(std::vector<std::string> args, std::string* out, std::map<std::string, std::string> env = {}) {
    const std::string log = work_ + "/guide-" + std::to_string(++calls_) + ".log";
    args.insert(args.begin(), {BinaryPath("benchfleet"), "guide"});
    // A coordinator in the environment must not count as --coordinator.
    env.emplace("BENCHFLEET_COORDINATOR", coordinator_->address());
    Subprocess p(args, env, log);
    int rc = p.Wait();
    *out = ReadAll(log);
    return rc;
  }

  PgTestDb db_;
  std::string work_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  int calls_ = 0;
};

TEST_F(GuideInputsTest, CoordinatorAndDatabaseGiveByteIdenticalGuides) {
  std::string out;
  const std::string from_coordinator = work_ + "/guide-coordinator";
  const std::string from_database = work_ + "/guide-database";
  ASSERT_EQ(Guide({"--coordinator", coordinator_->address(), "--out", from_coordinator}, &out), 0) << out;
  ASSERT_EQ(Guide({"--database-url", db_.url(), "--out", from_database}, &out), 0) << out;
  EXPECT_EQ(out, from_database + "/guide.fr.md\n" + from_database + "/guide.fr.html\n" + from_database +
                     "/guide.en.md\n" + from_database + "/guide.en.html\n");

  const auto a = Files(from_coordinator);
  const auto b = Files(from_database);
  ASSERT_TRUE(a.count("guide.en.md") == 1 && a.count("guide.fr.md") == 1 && a.count("sources.csv") == 1)
      << a.size() << " files";
  std::set<std::string> names_a, names_b;
  for (const auto& [name, content] : a) names_a.insert(name);
  for (const auto& [name, content] : b) names_b.insert(name);
  ASSERT_EQ(names_a, names_b);
  for (const auto& [name, content] : a) EXPECT_TRUE(content == b.at(name)) << name << " differs";
  // Both machines, by the hostnames of their conditions (GetConditions / the conditions table).
  const std::string& md = a.at("guide.en.md");
  EXPECT_THAT(md, HasSubstr("(a100)"));
  EXPECT_THAT(md, HasSubstr("(m1pro)"));
}

TEST_F(GuideInputsTest, DatabaseUrlFromTheEnvironment) {
  std::string out;
  const std::string from_env = work_ + "/guide-env";
  const std::string from_option = work_ + "/guide-option";
  ASSERT_EQ(Guide({"--out", from_env}, &out, {{"BENCHFLEET_DATABASE_URL", db_.url()}}), 0) << out;
  ASSERT_EQ(Guide({"--database-url", db_.url(), "--out", from_option}, &out), 0) << out;
  EXPECT_EQ(Files(from_env), Files(from_option));
}

TEST_F(GuideInputsTest, AnEmptySelectionExitsWithUsageErrorFromBothInputs) {
  std::string out;
  EXPECT_EQ(Guide({"--coordinator", coordinator_->address(), "--task", "no-such-task", "--out", work_ + "/x"}, &out), 2);
  EXPECT_THAT(out, HasSubstr("benchfleet: no records match --task no-such-task in the coordinator at " +
                             coordinator_->address() + " (0 runs read)"));
  EXPECT_EQ(Guide({"--database-url", db_.url(), "--since", "2999-01-01", "--out", work_ + "/x"}, &out), 2);
  EXPECT_THAT(out, HasSubstr("benchfleet: no records match --since 2999-01-01T00:00:00Z in the database (0 runs read)"));
}

TEST_F(GuideInputsTest, NoInputIsAUsageErrorEvenWithACoordinatorInTheEnvironment) {
  std::string out;
  EXPECT_EQ(Guide({"--out", work_ + "/x"}, &out), 2);
  EXPECT_THAT(out, HasSubstr("benchfleet: give the records to read: --files PATH..., --coordinator ADDR or "
                             "--database-url URL (or set BENCHFLEET_DATABASE_URL)"));
}

}  // namespace
}  // namespace benchfleet::testing
