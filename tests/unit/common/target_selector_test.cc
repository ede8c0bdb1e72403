// TargetSelector: the spec's `targets` (all, agents, label expressions) and their errors, which
// name the source, line and field.
#include "common/spec/target_selector.h"

#include "benchfleet/v1/admin.pb.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace benchfleet {
namespace {

bool Selects(const TargetSelector& t, const v1::Machine& m) { return t.Matches(m.agent_id(), m.conditions()); }

v1::Machine MachineWith(const std::string& id, const std::map<std::string, std::string>& labels) {
  v1::Machine m;
  m.set_agent_id(id);
  for (const auto& [k, v] : labels) (*m.mutable_conditions()->mutable_labels())[k] = v;
  return m;
}

absl::StatusOr<TargetSelector> Parse(const std::string& yaml) {
  return ParseTargets(YAML::Load(yaml)["targets"], "s.yaml");
}

TEST(TargetSelectorTest, AllMatchesEveryMachine) {
  absl::StatusOr<TargetSelector> t = Parse("targets: all\n");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(Selects(*t, MachineWith("a", {})));
  EXPECT_EQ(t->Describe(), "all");
}

TEST(TargetSelectorTest, LabelsMustAllHold) {
  absl::StatusOr<TargetSelector> t = Parse(
      "targets:\n  labels: [\"accelerator in (nvidia, amd)\", \"class!=m1pro\", \"rack\", \"!retired\"]\n");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(Selects(*t, MachineWith("a", {{"accelerator", "nvidia"}, {"class", "a100"}, {"rack", "r1"}})));
  EXPECT_TRUE(Selects(*t, MachineWith("b", {{"accelerator", "amd"}, {"rack", "r2"}})));
  EXPECT_FALSE(Selects(*t, MachineWith("c", {{"accelerator", "apple"}, {"rack", "r1"}})));
  EXPECT_FALSE(Selects(*t, MachineWith("d", {{"accelerator", "nvidia"}, {"class", "m1pro"}, {"rack", "r1"}})));
  EXPECT_FALSE(Selects(*t, MachineWith("e", {{"accelerator", "nvidia"}})));  // no rack
  EXPECT_FALSE(Selects(*t, MachineWith("f", {{"accelerator", "nvidia"}, {"rack", "r1"}, {"retired", "yes"}})));
}

TEST(TargetSelectorTest, AgentsAndLabelsTogether) {
  absl::StatusOr<TargetSelector> t = Parse("targets:\n  agents: [a, b]\n  labels: [class=a100]\n");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(Selects(*t, MachineWith("a", {{"class", "a100"}})));
  EXPECT_FALSE(Selects(*t, MachineWith("b", {{"class", "c5"}})));
  EXPECT_FALSE(Selects(*t, MachineWith("c", {{"class", "a100"}})));
  EXPECT_EQ(t->Describe(), "agents [a, b], labels [class=a100]");
}

TEST(TargetSelectorTest, Expressions) {
  EXPECT_EQ(ParseLabelExpression("class == a100")->op, LabelExpression::Op::kEquals);
  EXPECT_EQ(ParseLabelExpression("class notin (a, b)")->op, LabelExpression::Op::kNotIn);
  EXPECT_EQ(ParseLabelExpression("class not in (a, b)")->values, (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(ParseLabelExpression("!gpu")->op, LabelExpression::Op::kNotExists);
  EXPECT_EQ(ParseLabelExpression("class in a, b").status().message(),
            "cannot read 'class in a, b': the values of in / notin go in parentheses (write key=value, "
            "key!=value, key in (a, b), key notin (a, b), key or !key)");
}

TEST(TargetSelectorTest, ErrorsNameSourceLineAndField) {
  EXPECT_EQ(Parse("series: x\n").status().message(),
            "s.yaml:1: field targets: missing: say which agents run the series (`all`, or a map with agents "
            "and/or labels)");
  EXPECT_EQ(Parse("series: x\ntargets: some\n").status().message(),
            "s.yaml:2: field targets: must be `all` or a map with agents and/or labels (got 'some')");
  EXPECT_EQ(Parse("targets:\n  hosts: [a]\n").status().message(),
            "s.yaml:2: field targets.hosts: unknown key (expected agents or labels)");
  EXPECT_EQ(Parse("targets:\n  labels:\n    - class=a100\n    - \"class in a100\"\n").status().message(),
            "s.yaml:4: field targets.labels[1]: cannot read 'class in a100': the values of in / notin go in "
            "parentheses (write key=value, key!=value, key in (a, b), key notin (a, b), key or !key)");
  EXPECT_EQ(Parse("targets:\n  agents: a\n").status().message(),
            "s.yaml:2: field targets.agents: must be a non-empty list");
}

}  // namespace
}  // namespace benchfleet
